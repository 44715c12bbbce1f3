"""Incremental newline-delimited JSON framing. Sans-I/O.

``NDJSONDecoder.decode(chunk)`` returns the complete lines ``chunk`` finished (bytes, without
their line end; blank lines skipped); ``flush()`` returns a last line that had no newline.
A line may be split across any number of chunks and a chunk may hold many lines.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable

from ..errors import FrameTooLargeError
from ..events import Event
from .base import Decoder, _alone
from .sse import DEFAULT_MAX_FRAME

__all__ = ["NDJSONDecoder", "NDJSONPayloadDecoder"]


class NDJSONDecoder:
    """Incremental NDJSON framer: `decode(bytes) -> list[bytes]` and `flush()`.

    Args:
        max_frame: The longest line (without its line end): a longer one raises
            `FrameTooLargeError` (with the lines completed before it in `frames`), whether it
            is still buffered or arrived whole.
    """

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        # The unfinished line in one growing buffer: a line arriving in many small reads
        # costs about its size, not an object per read.
        self._pending = bytearray()

    def decode(
        self, chunk: bytes, block: Callable[[bytes], bool] | None = None
    ) -> list[bytes]:
        """The lines `chunk` completed, without their line ends (blank ones skipped).

        Args:
            chunk: The next bytes of the body, cut anywhere.
            block: Offered the lines first as one block, their bytes up to the last newline
                (for a caller that reads such a block at once); when it takes them
                (`True`), none is returned.
        """
        if b"\n" not in chunk:
            if chunk:
                self._hold(chunk, [])
            return []
        if self._pending:
            self._pending += chunk
            chunk = bytes(self._pending)
            self._pending.clear()
        if block is not None and len(chunk) <= self.max_frame:  # (no line over the limit)
            end = chunk.rfind(b"\n")
            if block(chunk[:end]):
                if end + 1 < len(chunk):
                    self._hold(chunk[end + 1 :], [])
                return []
        lines = chunk.split(b"\n")
        rest = lines.pop()
        out: list[bytes]
        limit = self.max_frame
        if max(map(len, lines)) <= limit:  # (C-level work only; a line end: one line at least)
            out = list(map(bytes.strip, lines))
            if b"" in out:
                out = [line for line in out if line]
        else:
            out = []
            for line in lines:
                if len(line) > limit and len(line.rstrip(b"\r")) > limit:
                    raise self._too_large(line, out)
                stripped = line.strip()
                if stripped:
                    out.append(stripped)
        if rest:
            self._hold(rest, out)
        return out

    @property
    def holding(self) -> bool:
        """Whether an unfinished line is held for the next chunk."""
        return bool(self._pending)

    def flush(self) -> list[bytes]:
        """The last line, if the body did not end with a line end."""
        rest = bytes(self._pending).strip()
        self._pending.clear()
        return [rest] if rest else []

    def _hold(self, data: bytes, done: list[bytes]) -> None:
        pending = self._pending
        pending += data
        if len(pending) - data.endswith(b"\r") > self.max_frame:
            head = bytes(pending[:200])  # (the evidence the error keeps)
            pending.clear()
            raise self._too_large(head, done)

    def _too_large(self, line: bytes, done: list[bytes]) -> FrameTooLargeError:
        error = FrameTooLargeError(
            f"NDJSON line longer than the limit of {self.max_frame} bytes", line[:200]
        )
        error.frames = done
        return error


class NDJSONPayloadDecoder(Decoder):
    """A decoder whose wire is NDJSON, one JSON object per line (the NDJSON twin of
    `SSEPayloadDecoder`)."""

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        """A decoder at the start of a body.

        Args:
            max_frame: The longest line read, in bytes; a longer one is a
                `FrameTooLargeError`.
        """
        super().__init__()
        self._lines = NDJSONDecoder(max_frame)

    def decode(self, chunk: bytes) -> list[Event]:
        return self._run(self._lines.decode, chunk, self._lines_of)

    def decode_payload(self, line: bytes) -> list[Event]:
        """Decode one line framed elsewhere (without its line end): the events `decode`
        gives for it, under the same error contract.

        Args:
            line: The line: one JSON object.

        Returns:
            The events of that line.
        """
        line = line.strip()
        return self._run(_alone, line, self._lines_of) if line else []  # (blank: no line)

    def _lines_of(self, lines: list[bytes], out: list[Event]) -> None:
        self._each(lines, out, self._line)

    def flush(self) -> list[Event]:
        return self._at_end(self._last_lines)

    def _last_lines(self, out: list[Event]) -> None:
        self._each(self._lines.flush(), out, self._line)
        if not self.finished:
            self._eof(out)

    @abstractmethod
    def _line(self, line: bytes, out: list[Event]) -> None:
        """Decode one line into ``out``."""

    @abstractmethod
    def _eof(self, out: list[Event]) -> None:
        """EOF came without a terminal line: finish, or raise ``IncompleteStreamError``."""
