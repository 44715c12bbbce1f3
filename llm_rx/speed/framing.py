"""How each wire cuts a body into frames, as the compiled core (:mod:`.core`) needs to know it:
where a frame ends, whether the framer holds nothing, the last whole frame of a read, and a
learnt payload program with the bytes around its payload (an SSE event's lines, an NDJSON
line's end, an event-stream message's header bytes), checked against the frame it came from.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["LINES", "MESSAGES", "SSE", "Framing", "Program", "Raw"]


class Program(NamedTuple):
    """A learnt frame's payload as pieces around holes (see ``_scan.c``), and what it was
    learnt as (the decoder's template: a new one is a new program)."""

    source: object
    pieces: tuple[bytes, ...]
    holes: bytes


class Raw(NamedTuple):
    """A program with the bytes around its payload: what the core reads from a read."""

    source: object
    pieces: tuple[bytes, ...]
    holes: bytes
    headers: bytes = b""  # (an event-stream message's header bytes: read by scan_messages)
    end: bytes = b""  # (the frame's last bytes, where they say where it ends)


def _core() -> Any:
    from . import core

    return core


# -- SSE ------------------------------------------------------------------------------------


def _sse_end(chunk: bytes, start: int) -> int:
    stop = chunk.find(b"\n\n", start)  # (a CR LF stream's end, looked for only before it)
    crlf = chunk.find(b"\r\n\r\n", start, stop + 2 if stop >= 0 else len(chunk))
    if crlf >= 0:
        return crlf + 4
    return stop + 2 if stop >= 0 else -1


def _sse_head(frame: bytes, first: bytes, names: bool, named: bytes) -> bytes | None:
    """The bytes before ``first`` (the payload's start) in ``frame``, one whole SSE event:
    ``data: `` and an ``event:`` line before it (a plain name, never ``error``, and only where
    the framer gives bare payloads for named events, or the name is ``named``: one the
    decoder reads as it reads a bare payload), or ``None``."""
    at = frame.find(b"data: " + first)
    if at < 0:
        return None
    head = frame[:at]
    if head:
        name = head[7:-1]
        if ((names and name != named) or not head.startswith(b"event: ")
                or head.count(b"\n") != 1 or not head.endswith(b"\n")
                or not name.replace(b"_", b"").replace(b".", b"").isalnum() or name == b"error"):
            return None
    return head + b"data: "


def _checked(raw: Raw, frame: bytes) -> Raw | None:
    """``raw`` if it reads ``frame`` whole, as its one frame."""
    core = _core()
    try:
        if raw.headers:
            found = core.scan_messages(frame, 0, raw.headers, raw.pieces, raw.holes, [],
                                       len(frame))
        else:
            found = core.scan(frame, 0, raw.pieces, raw.holes, [], len(frame))
    except ValueError:  # (a program the core cannot read: more holes than it takes)
        return None
    return raw if found[:2] == (len(frame), 1) else None


def _around(program: Program, head: bytes, end: bytes) -> Raw:
    pieces = program.pieces
    return Raw(program.source, (head + pieces[0], *pieces[1:-1], pieces[-1] + end),
               program.holes, b"", end)


def _sse_raw(program: Program, frame: bytes, names: bool, named: bytes) -> Raw | None:
    head = _sse_head(frame, program.pieces[0], names, named)
    if head is None:
        return None
    end = b"\r\n\r\n" if frame.endswith(b"\r\n\r\n") else b"\n\n"
    return _checked(_around(program, head, end), frame)


def _lines_raw(program: Program, frame: bytes, names: bool, named: bytes) -> Raw | None:
    end = b"\r\n" if frame.endswith(b"\r\n") else b"\n"
    return _checked(_around(program, b"", end), frame)


def _last_frame(ends: tuple[bytes, ...]) -> Callable[[bytes, bytes], bytes]:
    def last(chunk: bytes, first: bytes) -> bytes:
        """The last frame whole in ``chunk`` (which starts at a frame's start) whose payload
        starts with ``first``, or ``b""``."""
        whole = max(chunk.rfind(end) + len(end) for end in ends)
        at = chunk.rfind(first, 0, whole)
        if at < 0:
            return b""
        start = max(found + len(end) if (found := chunk.rfind(end, 0, at)) >= 0 else 0
                    for end in ends)
        stop = min((found + len(end) for end in ends if (found := chunk.find(end, at)) >= 0),
                   default=-1)
        return chunk[start:stop] if stop >= 0 else b""

    return last


def _line_end(chunk: bytes, start: int) -> int:
    stop = chunk.find(b"\n", start)
    return stop + 1 if stop >= 0 else -1


# -- AWS event-stream messages --------------------------------------------------------------

_LENGTH = struct.Struct(">I")


def _message_end(chunk: bytes, start: int) -> int:
    if len(chunk) - start < 12:
        return -1
    (total,) = _LENGTH.unpack_from(chunk, start)
    return start + total if 16 <= total <= len(chunk) - start else -1


def _messages_raw(program: Program, frame: bytes, names: bool, named: bytes) -> Raw | None:
    if _message_end(frame, 0) != len(frame):
        return None
    (headers,) = _LENGTH.unpack_from(frame, 4)
    block = frame[12 : 12 + headers]
    return _checked(Raw(program.source, program.pieces, program.holes, block), frame) if (
        block) else None


def _one_message(chunk: bytes, first: bytes) -> bytes:
    return chunk if _message_end(chunk, 0) == len(chunk) and first in chunk else b""


class Framing(NamedTuple):
    """A wire's framing, as the core reads it."""

    end: Callable[[bytes, int], int]  # where the frame from a position ends, or -1
    resting: Callable[[Any], Callable[[], bool]]  # the framer -> whether it holds nothing
    last_frame: Callable[[bytes, bytes], bytes]  # (chunk, payload's first bytes) -> a frame
    raw: Callable[[Program, bytes, bool, bytes], Raw | None]  # (program, frame, names, named)


def _not_holding(framer: Any) -> Callable[[], bool]:
    def resting() -> bool:
        return not framer.holding

    return resting


def _nothing_buffered(framer: Any) -> Callable[[], bool]:
    def resting() -> bool:
        return not framer.buffered

    return resting


#: SSE events (``data:`` lines, a blank line after each).
SSE = Framing(_sse_end, lambda framer: framer.at_rest, _last_frame((b"\n\n", b"\r\n\r\n")),
              _sse_raw)
#: NDJSON lines.
LINES = Framing(_line_end, _not_holding, _last_frame((b"\n",)), _lines_raw)
#: AWS event-stream messages (Bedrock's): a length first, CRCs checked.
MESSAGES = Framing(_message_end, _nothing_buffered, _one_message, _messages_raw)
