"""What the server saw of its streams, readable (and waited for) from any thread.

A test that disconnects mid-stream asks the server whether it saw the connection go:
``stats.wait("disconnected", 1, timeout=1.0)`` returns as soon as it did, or ``False`` once
the timeout passes; no sleeping, no polling.
"""

from __future__ import annotations

import threading
from typing import Literal

__all__ = ["Counter", "Stats"]

Counter = Literal["requests", "completed", "disconnected", "dropped", "errors", "busy"]


class Stats:
    """Counts of the server's replies, by how they ended.

    ``requests``: every request answered (errors too); ``completed``: bodies sent to their
    end; ``disconnected``: streams whose client went away before the end; ``dropped``:
    connections the server cut for a ``drop-after`` fault; ``errors``: HTTP error replies;
    ``busy``: connections answered 503 because ``max_connections`` were open.
    """

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._changed = threading.Condition()

    def add(self, name: Counter) -> None:
        with self._changed:
            self._counts[name] = self._counts.get(name, 0) + 1
            self._changed.notify_all()

    def __getitem__(self, name: Counter) -> int:
        with self._changed:
            return self._counts.get(name, 0)

    def wait(self, name: Counter, count: int, timeout: float) -> bool:
        """Whether ``name`` reached ``count`` within ``timeout`` seconds (from another thread
        than the server's: its event loop must go on to count)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._counts.get(name, 0) >= count, timeout)

    def snapshot(self) -> dict[str, int]:
        with self._changed:
            return dict(self._counts)
