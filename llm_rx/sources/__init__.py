"""Sources: the only code that reads I/O. Each gives a cold observable of events."""

from ._async import from_async_bytes
from ._bytes import from_bytes, from_file, iter_file
from ._source import EventSource

__all__ = ["EventSource", "from_async_bytes", "from_bytes", "from_file", "iter_file"]
