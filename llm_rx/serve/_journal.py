"""What the emulator was asked: every request's method, path, headers and JSON body.

A test asserts what its client sent (the messages, the tools, the signatures of the next
turn) from ``server.requests``; other languages read ``GET /_llm_rx/requests``.

The journal is bounded twice: it keeps the latest ``limit`` requests, and at most ``budget``
bytes of them (a request's body as it arrived, its headers and path). Past the budget the
bodies of the oldest entries are dropped first (each such entry says so: ``dropped`` is the
size of the body it no longer holds, and its ``json`` is ``None``), then the oldest entries
themselves. A body is held as the bytes that arrived, and parsed when ``json`` is read: a
parsed body costs several times its size.

Credentials are redacted as an entry goes in (``_redact.py``) unless ``keep_credentials``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

import orjson

from ._defaults import JOURNAL_BUDGET
from ._redact import redact_headers, redact_query

__all__ = ["JOURNAL_BUDGET", "Journal", "JournalEntry"]

_OVERHEAD = 256  # (bytes counted for an entry besides its strings)


class JournalEntry:
    """One request as the emulator received it: ``method``, ``path``, ``headers`` (lower-case
    names), ``query``, and ``json``, the parsed body (``None``: no body, one that is not a
    JSON object, or one dropped: then ``dropped`` is its size in bytes). ``body`` is the
    body's bytes as they arrived (``None``: none kept). Immutable."""

    __slots__ = ("_json", "body", "dropped", "headers", "method", "path", "query", "size")

    method: str
    path: str
    headers: Mapping[str, str]
    query: Mapping[str, str]
    body: bytes | None
    dropped: int
    size: int
    _json: Any

    def __init__(self, method: str, path: str, headers: Mapping[str, str], json: Any = None,
                 query: Mapping[str, str] | None = None, *, body: bytes | None = None,
                 dropped: int = 0) -> None:
        fields = {"method": method, "path": path, "headers": dict(headers),
                  "query": dict(query or {}), "body": body, "dropped": dropped, "_json": json}
        strings = sum(len(k) + len(v) for table in (fields["headers"], fields["query"])
                      for k, v in table.items())
        fields["size"] = _OVERHEAD + len(path) + strings + len(body or b"")
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a JournalEntry is immutable (cannot set {name!r})")

    @property
    def json(self) -> Any:
        """The body parsed (a new object at each read: nothing a test changes stays)."""
        if self.body is None:
            return self._json
        if not self.body.strip():
            return {}
        try:
            value = orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None

    def _replace(self, **changes: Any) -> JournalEntry:
        fields: dict[str, Any] = {"headers": self.headers, "json": self._json,
                                  "query": self.query, "body": self.body,
                                  "dropped": self.dropped, **changes}
        return JournalEntry(self.method, self.path, **fields)

    def redacted(self) -> JournalEntry:
        """This entry with each credential in its headers and query replaced by a hint."""
        return self._replace(headers=redact_headers(self.headers),
                             query=redact_query(self.query))

    def without_body(self) -> JournalEntry:
        """This entry without its body (``dropped`` says how large it was)."""
        held = len(self.body) if self.body is not None else 0
        return self._replace(body=None, json=None, dropped=self.dropped + held)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.path, "query": dict(self.query),
                "headers": dict(self.headers), "json": self.json, "dropped": self.dropped}

    def dumps(self) -> bytes:
        """``to_dict()`` as JSON, the body written as it arrived (never held parsed whole
        beside its copy: only checked to be a JSON object)."""
        body: Any = self._json
        if self.body is not None:
            body = orjson.Fragment(self.body) if self._is_object() else self.json
        return orjson.dumps({**self.to_dict(), "json": body})

    def _is_object(self) -> bool:
        assert self.body is not None
        if not self.body.strip():
            return False
        try:
            return isinstance(orjson.loads(self.body), dict)
        except orjson.JSONDecodeError:
            return False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JournalEntry):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"JournalEntry(method={self.method!r}, path={self.path!r}, "
                f"json={self.json!r}, dropped={self.dropped})")


class Journal:
    """The requests received, oldest first, readable from any thread: at most ``limit``
    entries and ``budget`` bytes; credentials redacted unless ``keep_credentials``."""

    def __init__(self, limit: int = 10_000, budget: int = JOURNAL_BUDGET, *,
                 keep_credentials: bool = False) -> None:
        self._entries: deque[JournalEntry] = deque()
        self._bodies: deque[int] = deque()  # (the numbers of the entries holding a body)
        self._limit = limit
        self.budget = budget
        self.keep_credentials = keep_credentials
        self._size = 0
        self._lock = threading.Lock()
        self.added = 0  # (every entry ever added, those since dropped included)

    @property
    def size(self) -> int:
        """The bytes the entries kept count for (at most ``budget``, but for one entry's
        headers)."""
        with self._lock:
            return self._size

    def add(self, entry: JournalEntry) -> None:
        if not self.keep_credentials:
            entry = entry.redacted()
        with self._lock:
            if entry.body:
                self._bodies.append(self.added)
            self._entries.append(entry)
            self._size += entry.size
            self.added += 1
            if len(self._entries) > self._limit:
                self._pop()
            while self._size > self.budget and self._bodies:
                self._drop_body(self._bodies.popleft())
            while self._size > self.budget and len(self._entries) > 1:
                self._pop()

    def _pop(self) -> None:
        first = self.added - len(self._entries)
        gone = self._entries.popleft()
        self._size -= gone.size
        if self._bodies and self._bodies[0] == first:
            self._bodies.popleft()

    def _drop_body(self, number: int) -> None:
        at = number - (self.added - len(self._entries))
        entry = self._entries[at]
        lighter = entry.without_body()
        self._entries[at] = lighter
        self._size -= entry.size - lighter.size

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
            self._bodies.clear()
            self._size = 0
