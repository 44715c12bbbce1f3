"""A provider given by the caller that is not the body's: the first frame tells, not EOF.

Every capture (of provider A) is fed in small reads to the decoder of every other provider
B, as ``make_decoder`` gives it and alone; the ``WireFormatError`` must come from the read
that completes A's first frame or an earlier one, carrying the frame, with nothing emitted
before it.
"""

from __future__ import annotations

import re

import pytest

from llm_rx.errors import LlmRxError, WireFormatError
from llm_rx.events import Event
from llm_rx.wire.providers import ProviderId
from llm_rx.wire.registry import DECODERS, make_decoder
from llm_rx.wire.sse import DEFAULT_MAX_FRAME

from .captures import CAPTURES, Capture
from .helpers import reads_of

READ = 16
# The first line that is a field: not a comment, not blank, not one that starts with a space
# (OpenRouter's first line does: it names no field, so an SSE decoder skips it).
_FIRST_LINE = re.compile(rb"(?m)^(?![:\r\n ])")
_FRAME_END = re.compile(rb"\r?\n\r?\n|\r\r")


def first_frame_end(data: bytes) -> int:
    """Where the body's first frame ends (A's own framing, read without llm-rx)."""
    if data[:1] == b"\x00":  # AWS event stream: the first message's total length
        return int.from_bytes(data[:4], "big")
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] in (b"{", b"["):  # NDJSON, or the JSON array's opening line
        return len(data) - len(text) + text.index(b"\n") + 1
    start = _FIRST_LINE.search(data)
    assert start is not None
    end = _FRAME_END.search(data, start.start())
    return end.end() if end else len(data)


def is_sse(data: bytes) -> bool:
    return data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] not in (b"{", b"[", b"\x00")


# A decoder alone reads its own framing: an SSE decoder given a binary or JSON body sees no
# frame before EOF, so alone it is checked on SSE bodies (make_decoder checks every body).
CASES = [
    pytest.param(cap, forced, direct, id=f"{cap.name}->{forced}{'-alone' if direct else ''}")
    for cap in CAPTURES
    for forced in sorted(DECODERS)
    for direct in (False, True)
    if forced != cap.provider and (not direct or is_sse(cap.data))
]


@pytest.mark.parametrize(("cap", "forced", "direct"), CASES)
def test_forced_wrong_provider_fails_at_the_first_frame(
    cap: Capture, forced: ProviderId, direct: bool
) -> None:
    # bug class: a decoder given another provider's stream dropped every frame as unknown
    # and failed (or claimed an empty reply) only at EOF
    data = cap.data
    bound = first_frame_end(data)
    decoder = DECODERS[forced](DEFAULT_MAX_FRAME) if direct else make_decoder(forced)
    emitted: list[Event] = []
    offset = 0
    error: LlmRxError | None = None
    try:
        for piece in reads_of(data, READ):
            emitted.extend(decoder.decode(piece))
            offset += len(piece)
        emitted.extend(decoder.flush())
    except LlmRxError as raised:
        error = raised
    assert isinstance(error, WireFormatError), error
    assert offset < bound, f"raised by the read ending at {offset + READ}, frame ends at {bound}"
    assert error.raw, "the error carries the offending frame"
    assert emitted == []
    assert decoder.decode(b"data: {}\n\n") == []  # finished: nothing after the error

