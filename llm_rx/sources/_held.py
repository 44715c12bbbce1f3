"""The response a sync reading reads, held so that disposing from another thread wakes it."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

__all__ = ["Held"]


class Held:
    """The response a sync reading is reading, so that disposing from another thread can
    wake a read blocked on it: closing a socket does not wake a thread blocked in ``recv``,
    shutting it down does (the reading then closes the response itself)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._response: Any = None
        #: Set once the reading is disposed: a wait between two connections ends at once.
        self.disposed = threading.Event()

    def hold(self, response: Any) -> None:
        with self._lock:
            self._response = response

    def release(self) -> None:
        with self._lock:  # (after this, its connection may serve another request: let it be)
            self._response = None

    def wake(self) -> None:
        self.disposed.set()
        with self._lock:
            if self._response is None:
                return
            stream = getattr(self._response, "extensions", {}).get("network_stream")
            info = getattr(stream, "get_extra_info", None)
            sock = info("socket") if info is not None else None
            if isinstance(sock, socket.socket):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
