"""Sources: the only code that reads I/O. Each gives a cold observable of events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import load

__all__ = [
    "DurableEntry",
    "EventSource",
    "RedisEntry",
    "from_async_bytes",
    "from_bytes",
    "from_durable_stream",
    "from_file",
    "from_httpx",
    "from_redis",
    "from_sdk",
    "from_websocket",
    "iter_file",
]

#: Where each name lives: imported on first use (a program loads only what it uses).
_WHERE = {
    "DurableEntry": "._durable",
    "EventSource": "._source",
    "RedisEntry": "._redis",
    "from_async_bytes": "._async",
    "from_bytes": "._bytes",
    "from_durable_stream": "._durable",
    "from_file": "._bytes",
    "from_httpx": "._httpx",
    "from_redis": "._redis",
    "from_sdk": "._sdk",
    "from_websocket": "._websocket",
    "iter_file": "._bytes",
}


def __getattr__(name: str) -> Any:
    return load(__name__, _WHERE, name, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from ._async import from_async_bytes
    from ._bytes import from_bytes, from_file, iter_file
    from ._durable import DurableEntry, from_durable_stream
    from ._httpx import from_httpx
    from ._redis import RedisEntry, from_redis
    from ._sdk import from_sdk
    from ._source import EventSource
    from ._websocket import from_websocket
