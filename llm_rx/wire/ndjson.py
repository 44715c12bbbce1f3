"""Incremental newline-delimited JSON framing. Sans-I/O.

``NDJSONDecoder.decode(chunk)`` returns the complete lines ``chunk`` finished (bytes, without
their line end; blank lines skipped); ``flush()`` returns a last line that had no newline.
A line may be split across any number of chunks and a chunk may hold many lines.
"""

from __future__ import annotations

from ..errors import FrameTooLargeError
from .sse import DEFAULT_MAX_FRAME

__all__ = ["NDJSONDecoder"]


class NDJSONDecoder:
    """Incremental NDJSON framer: ``decode(bytes) -> list[bytes]`` and ``flush()``."""

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._pending: list[bytes] = []
        self._pending_size = 0

    def decode(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            if chunk:
                self._pending.append(chunk)
                self._pending_size += len(chunk)
                if self._pending_size > self.max_frame:
                    head = b"".join(self._pending)[:200]
                    self._pending.clear()
                    self._pending_size = 0
                    raise FrameTooLargeError(
                        f"NDJSON line longer than the limit of {self.max_frame} bytes", head
                    )
            return []
        if self._pending:
            self._pending.append(chunk)
            chunk = b"".join(self._pending)
            self._pending.clear()
            self._pending_size = 0
        lines = chunk.split(b"\n")
        rest = lines.pop()
        if rest:
            self._pending.append(rest)
            self._pending_size = len(rest)
        return [stripped for line in lines if (stripped := line.strip())]

    def flush(self) -> list[bytes]:
        rest = b"".join(self._pending).strip()
        self._pending.clear()
        self._pending_size = 0
        return [rest] if rest else []
