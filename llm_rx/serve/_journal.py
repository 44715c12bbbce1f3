"""What the emulator was asked: every request's method, path, headers and JSON body.

A test asserts what its client sent (the messages, the tools, the signatures of the next
turn) from ``server.requests``; other languages read ``GET /_llm_rx/requests``. The journal
keeps the latest ``limit`` requests (a long session does not grow without bound).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Journal", "JournalEntry"]


@dataclass(frozen=True)
class JournalEntry:
    """One request as the emulator received it. ``json`` is the parsed body (``None``: no body
    or one that is not JSON); ``headers`` has lower-case names."""

    method: str
    path: str
    headers: Mapping[str, str]
    json: Any
    query: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.path, "query": dict(self.query),
                "headers": dict(self.headers), "json": self.json}


class Journal:
    """The requests received, oldest first, readable from any thread."""

    def __init__(self, limit: int = 10_000) -> None:
        self._entries: deque[JournalEntry] = deque(maxlen=limit)
        self._lock = threading.Lock()
        self.added = 0  # (every entry ever added, those since dropped included)

    def add(self, entry: JournalEntry) -> None:
        with self._lock:
            self._entries.append(entry)
            self.added += 1

    def since(self, added: int) -> list[JournalEntry]:
        """The entries added after the ``added``-th (those still kept)."""
        with self._lock:
            new = self.added - added
            return list(self._entries)[-new:] if new > 0 else []

    def entries(self) -> list[JournalEntry]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
