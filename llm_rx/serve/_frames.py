"""A recorded stream cut into its frames, as bytes that join back to the stream exactly.

Pacing sends one frame per tick, and an in-band error goes in between two frames: both need
to know where a frame of each form ends (an SSE event at its blank line, an NDJSON line at
its newline, an AWS event-stream message at the length its prelude gives, a JSON array
element at its closing bracket). Bytes after the last whole frame are a last piece of their
own, so nothing of the recording is lost.
"""

from __future__ import annotations

import re
import struct

from ..errors import LlmRxError, WireFormatError
from ..wire.json_array import JSONArrayDecoder

__all__ = ["cut_after", "split_frames"]

_SSE_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def split_frames(data: bytes, form: str) -> list[bytes]:
    """``data`` (a stream of ``form``) as a list of pieces, each ending where a frame does."""
    ends = _ends(data, form)
    pieces, start = [], 0
    for end in ends:
        if end > start:
            pieces.append(data[start:end])
            start = end
    if start < len(data):
        pieces.append(data[start:])
    return pieces


def cut_after(pieces: list[bytes], size: int) -> list[bytes]:
    """The first pieces that hold at least ``size`` bytes (all of them if they hold fewer)."""
    total = 0
    for count, piece in enumerate(pieces, 1):
        total += len(piece)
        if total >= size:
            return pieces[:count]
    return list(pieces)


def _ends(data: bytes, form: str) -> list[int]:
    if form in ("chat", "generate"):
        return [match.end() for match in re.finditer(rb"\n", data)]
    if form == "eventstream":
        return _message_ends(data)
    if form == "json-array":
        return _element_ends(data)
    return [match.end() for match in _SSE_END.finditer(data)]


def _message_ends(data: bytes) -> list[int]:
    ends, at = [], 0
    while at + 4 <= len(data):
        (total,) = struct.unpack_from(">I", data, at)
        if total < 16 or at + total > len(data):
            break
        at += total
        ends.append(at)
    return ends


def _element_ends(data: bytes) -> list[int]:
    """Where each element of a JSON array ends (elements are verbatim slices of the array)."""
    decoder = JSONArrayDecoder(max_frame=len(data) + 1)
    try:
        elements = decoder.decode(data)
    except LlmRxError as error:  # (a damaged recording: its whole elements are still frames)
        elements = list(error.frames) if isinstance(error, WireFormatError) else []
    ends, at = [], 0
    for element in elements:
        at = data.index(element, at) + len(element)
        ends.append(at)
    return ends
