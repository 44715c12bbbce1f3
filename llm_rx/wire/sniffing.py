"""Telling whose stream a body is from its first bytes, reading each byte once.

A :class:`HeadScanner` is fed the body's reads and looks at each line once, when it is whole:
the SSE comments and blank lines before the first frame (keep-alive ``: ping`` lines) are
dropped as they arrive and never count toward the limit (past 1 MiB of them it gives up),
so what it holds and the work it does stay linear in the input however the body is cut.
The first byte that is not space tells the form: ``\\x00`` the AWS binary event stream,
``[`` Gemini's JSON array, ``{`` one JSON object per line (Ollama) or one JSON document (a
non-stream body, see :func:`looks_nonstream`), anything else lines of an SSE stream, told
by event names and the first payloads (see ``_whose``).
"""

from __future__ import annotations

from typing import NamedTuple

import orjson

from ..errors import ProviderError
from ._whose import foreign_frame, of_event_name, of_payload
from .http import body_error
from .nonstream import LEADING as _LEADING
from .nonstream import error_body, first_line_nonstream, looks_nonstream, nonstream_provider

__all__ = [
    "SNIFF_LIMIT",
    "HeadScanner",
    "Verdict",
    "foreign_frame",
    "looks_nonstream",
    "nonstream_provider",
    "sniff",
]

#: How many bytes of frames (not of comments or blank lines) are read before giving up
#: (a JSON body's first line that looks like no non-stream body by then is waited for up to
#: ``16 * SNIFF_LIMIT``).
SNIFF_LIMIT = 64 * 1024
# What is held at most while undecided, comments between frames included; also the most of
# the comments and blank lines skipped before the first frame.
_HELD_LIMIT = 16 * SNIFF_LIMIT
# Forms whose first byte tells the provider (the binary event stream's prelude starts with
# the high byte of a length; Gemini's JSON array with its bracket).
_TOLD_BY_FIRST_BYTE = {b"\x00": "bedrock-converse", b"[": "gemini"}
_RAW = 200  # how much of a body an error carries when no frame of it was read

class Verdict(NamedTuple):
    """Whose stream it is, and the frame (its lines so far) that told."""

    provider: str
    strong: bool  # told by what only that provider sends; not a guess from an error frame
    raw: bytes


class HeadScanner:
    """Reads a body's first bytes, each once, until they tell whose stream it is.

    ``feed`` each read; the first :class:`Verdict` it returns names the provider: the first
    frame that tells decides (a later one, even a surer one, changes nothing, so the verdict
    does not depend on where the reads end). ``head`` is then the body so far less the comments
    and blank lines before its first frame (which decode to nothing), to hand to the decoder.
    ``nonstream`` names the provider of a non-stream body instead, ``error`` is the
    :class:`ProviderError` of an error body (``{"error": {...}}``, as ``from_native`` gives
    it); ``gave_up`` says the limit was reached undecided. ``finish`` at EOF reads what is
    left as whole.
    """

    def __init__(self, limit: int = SNIFF_LIMIT, *, first_frame: str | None = None) -> None:
        self.limit = limit
        # Where the reader checked against it ends its first frame (``"line"``, ``"event"``):
        # a verdict comes from that frame or not at all, so it is the same however the body
        # was cut (a later frame in the same read must not decide before the reader fails
        # on an earlier one).
        self.first_frame = first_frame
        self.verdict: Verdict | None = None
        self.nonstream: str | None = None
        self.error: ProviderError | None = None
        self.gave_up = False
        self.counted = 0  # bytes of frames read: what the limit counts
        self._form = b""  # the first byte of the first frame, once seen
        self._kept: list[bytes] = []  # the body from its first frame on
        self._held = 0
        self._skipped = 0  # bytes of comments and blank lines before the first frame
        self._line: list[bytes] = []  # the last line, not whole yet
        self._in_comment = False  # inside a comment line before the first frame
        self._indent = b""  # blank space that may start the first frame's line
        self._frame: list[bytes] = []  # the lines of the SSE frame being read
        self._first_line: bytes | None = None  # a ``{`` body's first line, once whole
        self._line_awaited = False  # a ``{`` body's long first line, waited for past the limit

    @property
    def head(self) -> bytes:
        return b"".join(self._kept)

    @property
    def decided(self) -> bool:
        return (
            self.verdict is not None or self.nonstream is not None or self.error is not None
            or self.gave_up
        )

    @property
    def pending_object(self) -> bool:
        """Whether the body is JSON (its first byte ``{``) not told yet: a reader of another
        form (an event stream, a line reader) waits for the verdict before reading it."""
        return self._form == b"{" and not self.decided

    def feed(self, chunk: bytes) -> Verdict | None:
        if self.gave_up:
            return self.verdict
        if not self._form:
            chunk = self._skip_leading(chunk)
            if not chunk:
                return None
            self._form = chunk.lstrip(_LEADING)[:1]
        self._kept.append(chunk)
        self._held += len(chunk)
        if self._form in _TOLD_BY_FIRST_BYTE:
            self._told_by_first_byte(final=False)
            return self.verdict
        if self._form == b"{":
            self._object_form(chunk)
        else:
            self._lines(chunk)
        unsure = self.verdict is None or not self.verdict.strong
        over = self.counted > self.limit and not self._line_awaited
        if unsure and not self.nonstream and not self.error and not self.gave_up and (
            over or self._held > _HELD_LIMIT
        ):
            self._give_up()
        return self.verdict

    def finish(self) -> Verdict | None:
        """EOF: the last line counts as whole."""
        if self.decided or not self._form:
            return self.verdict
        if self._form in _TOLD_BY_FIRST_BYTE:
            self._told_by_first_byte(final=True)
        elif self._form == b"{":
            self._object_end()
        else:
            self._lines(b"\n")
        return self.verdict

    @property
    def first_byte_tells(self) -> str | None:
        """The provider the first byte names (before the frame a verdict carries is in)."""
        return _TOLD_BY_FIRST_BYTE.get(self._form)

    def _told_by_first_byte(self, *, final: bool) -> None:
        """The verdict once the frame it carries is in, the same however the body was cut:
        the event stream's first message (its length is its first four bytes), the array's
        first line; at most ``_RAW`` bytes of it."""
        head = self.head.lstrip(_LEADING)
        if self._form == b"[":  # (Gemini's array holds objects: ``[build-system]`` is TOML)
            element = head[1:].lstrip(_LEADING)[:1]
            if not element and not final:
                return
            if element and element not in (b"{", b"]"):
                self.gave_up = True
                return
        if self._form == b"\x00":
            end = min(max(int.from_bytes(head[:4], "big"), 12), _RAW) if len(head) >= 4 else 0
        else:
            end = head.find(b"\n")
            end = min(end, _RAW) if end >= 0 else _RAW
        if final or (end and len(head) >= end):
            provider = _TOLD_BY_FIRST_BYTE[self._form]
            self.verdict = Verdict(provider, True, head[:end] if end else head[:_RAW])

    # -- before the first frame --------------------------------------------------------------

    def _skip_leading(self, chunk: bytes) -> bytes:
        """``chunk`` less the blank lines and comment lines before the first frame (which
        then starts with its line, as it came: a line that starts with a space is no field
        of the SSE stream, so the decoder must see the space). More than ``_HELD_LIMIT``
        of them is giving up, at the same byte however the body was cut."""
        kept = self._skip_comments(chunk)
        self._skipped += len(chunk) - len(kept)
        if self._skipped > _HELD_LIMIT:
            self.gave_up = True
            return b""
        return kept

    def _skip_comments(self, chunk: bytes) -> bytes:
        while chunk:
            if self._in_comment:
                ends = [at for at in (chunk.find(b"\n"), chunk.find(b"\r")) if at >= 0]
                if not ends:
                    return b""
                chunk = chunk[min(ends) + 1 :]
                self._in_comment = False
                continue
            rest = chunk.lstrip(_LEADING)
            skipped = chunk[: len(chunk) - len(rest)]
            cut = max(skipped.rfind(b"\n"), skipped.rfind(b"\r"))
            indent = skipped[cut + 1 :] if cut >= 0 else self._indent + skipped
            self._indent = b""
            if not rest:
                self._indent = indent[-1024:]  # (what a line may start with, kept short)
                return b""
            if rest[:1] != b":":
                return indent + rest
            self._in_comment = True
            chunk = rest
        return chunk

    # -- SSE lines ---------------------------------------------------------------------------

    def _lines(self, chunk: bytes) -> None:
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r", 0, len(chunk) - 1))
        if cut < 0:  # (a line not whole yet: counted when it is, held meanwhile)
            self._line.append(chunk)
            return
        complete = b"".join([*self._line, chunk[: cut + 1]])
        rest = chunk[cut + 1 :]
        self._line = [rest] if rest else []
        if b"\r" in complete:
            complete = complete.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        start = 0
        while start < len(complete):  # (line by line, up to the one that tells)
            end = complete.index(b"\n", start)
            self._line_read(complete[start:end])
            start = end + 1
            if self.verdict is not None or self.gave_up:
                return  # (the first frame that tells decides: nothing after it changes that)

    def _line_read(self, line: bytes) -> None:
        stripped = line.strip()
        if not stripped:
            if self._frame and self.first_frame == "event":
                self.gave_up = True  # (the first event told nothing)
            self._frame = []
            return
        if stripped[:1] == b":":
            return
        self.counted += len(line)
        self._frame.append(line)
        found: tuple[str, bool] | None = None
        if stripped.startswith(b"event:"):
            provider = of_event_name(stripped[6:].strip())
            found = (provider, True) if provider else None
        elif stripped.startswith(b"data:"):
            found = of_payload(stripped[5:].strip())
        if found is not None and self.verdict is None:
            self.verdict = Verdict(found[0], found[1], b"\n".join(self._frame))
        elif self.first_frame == "line":
            self.gave_up = True  # (the first line told nothing)

    # -- one JSON object per line, or one JSON document --------------------------------------

    def _object_form(self, chunk: bytes) -> None:
        self.counted += len(chunk)
        if self._first_line is not None or b"\n" not in chunk:
            return  # (a document: told at EOF, or by its keys at the limit)
        head = self.head
        self._first_line = first = head[: head.index(b"\n")]
        try:
            value = orjson.loads(first)
        except orjson.JSONDecodeError:
            return  # not one object per line: a JSON document
        provider = first_line_nonstream(value)
        if error_body(value, strict=True):  # (an NDJSON stream never starts so)
            self.error = body_error(value, first)
        elif provider is not None:
            self.nonstream = provider
        else:
            self.verdict = Verdict("ollama", True, first[:200])

    def _object_end(self) -> None:
        head = self.head
        provider = looks_nonstream(head)
        if provider is not None:
            self.nonstream = provider
        elif (error := _error_of(head)) is not None:
            self.error = error
        elif b"\n" in head or b'"done"' in head:
            self.verdict = Verdict("ollama", True, head[:200])

    def _give_up(self) -> None:
        if self.verdict is not None:  # (a guess from an error frame: it stands)
            self.gave_up = True
            return
        if self._form == b"{":
            head = self.head
            self.nonstream = looks_nonstream(head)
            if self.nonstream is None and b'"done"' in head:  # a long first Ollama line
                self.verdict = Verdict("ollama", True, head[:200])
                return
            if self.nonstream is None and self._first_line is None and (
                    self._held <= _HELD_LIMIT):
                # (a long first line, no non-stream body's start: told once it is whole, as
                # when it came in one read)
                self._line_awaited = True
                return
        self.gave_up = self.nonstream is None


def _error_of(body: bytes) -> ProviderError | None:
    """The error of a whole body that is a provider's error body, else ``None``."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return body_error(value, body) if error_body(value) else None


def sniff(head: bytes) -> str | None:
    """The provider whose stream starts with `head`.

    Args:
        head: The body's first bytes (a line is read once it is whole).

    Returns:
        Its provider id, or `None` if not decidable yet, or if it is no stream (see
            `looks_nonstream`).
    """
    scanner = HeadScanner()
    verdict = scanner.feed(head)
    if verdict is not None:
        return verdict.provider
    return None if scanner.gave_up else scanner.first_byte_tells
