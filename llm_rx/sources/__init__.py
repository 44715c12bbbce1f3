"""Sources: the only code that reads I/O. Each gives a cold observable of events."""

from ._async import from_async_bytes
from ._bytes import from_bytes, from_file, iter_file
from ._httpx import from_httpx
from ._redis import RedisEntry, from_redis
from ._sdk import from_sdk
from ._source import EventSource
from ._websocket import from_websocket

__all__ = [
    "EventSource",
    "RedisEntry",
    "from_async_bytes",
    "from_bytes",
    "from_file",
    "from_httpx",
    "from_redis",
    "from_sdk",
    "from_websocket",
    "iter_file",
]
