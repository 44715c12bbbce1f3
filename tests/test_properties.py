"""Properties over every capture: chunk boundaries never matter; a cut stream never finishes."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx.response import RefusalBlock, Response, TextBlock, ThinkingBlock, ToolCallBlock

from .captures import CAPTURES, Capture
from .helpers import outcome, split_at

_PROPERTY = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _terminal_offset(capture: Capture) -> int:
    """Where the frame that lets the stream count as finished starts."""
    data = capture.data
    if capture.provider == "bedrock-converse":
        return _eventstream_offset(data, b"messageStop")
    if capture.provider == "anthropic":
        match = re.search(rb'(?:event: ?message_stop\r?\n)?data: ?\{"type": ?"message_stop"', data)
    elif capture.provider == "ollama":
        match = re.search(rb'^[^\n]*"done": ?true', data, re.M)
    elif capture.provider == "gemini":
        if data.lstrip()[:1] == b"[":  # the JSON-array form ends only with its closing "]"
            return data.rindex(b"]")
        # (a finish reason, or a blocked prompt's: the reply ends with no candidate)
        match = re.search(rb'data: ?[^\n]*(?:"finishReason": ?["1-9]|"blockReason": ?")', data)
    elif capture.provider == "openai-responses":
        match = re.search(
            rb'(?:event: ?[\w.]+\r?\n)?data: ?[^\n]*"type": ?'
            rb'"(?:response\.completed|response\.incomplete|response\.failed|error)"',
            data,
        )
    elif capture.provider == "gemini-interactions":  # (the early-2026 name is "complete")
        match = re.search(rb'(?:event: ?[\w.]+\r?\n)?data: ?[^\n]*"event_type": ?'
                          rb'"interaction\.complete', data)
    else:
        match = re.search(rb'data: ?[^\n]*"finish_reason": ?"|data: ?\[DONE\]', data)
    return match.start() if match else len(data)


def _eventstream_offset(data: bytes, event_type: bytes) -> int:
    """Where the first AWS event-stream message with ``:event-type`` ``event_type`` starts
    (read from the length prefixes, not through llm-rx)."""
    header = b":event-type\x07" + len(event_type).to_bytes(2, "big") + event_type
    pos = 0
    while pos + 12 <= len(data):
        total = int.from_bytes(data[pos : pos + 4], "big")
        if header in data[pos : pos + total]:
            return pos
        pos += total
    return len(data)


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
@_PROPERTY
@given(cuts=st.lists(st.integers(min_value=0, max_value=200_000), max_size=40))
def test_rechunk_any_offsets_same_events(capture: Capture, cuts: list[int]) -> None:
    data = capture.data
    pieces = split_at(data, [cut % (len(data) + 1) for cut in cuts])
    assert outcome(pieces, capture.provider) == outcome([data], capture.provider)


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_rechunk_one_byte_at_a_time_same_events(capture: Capture) -> None:
    data = capture.data[:20_000]  # the head: bytes one by one are slow on the long captures
    single = [data[i : i + 1] for i in range(len(data))]
    assert outcome(single, capture.provider) == outcome([data], capture.provider)


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_rechunk_one_event_per_read_same_events(capture: Capture) -> None:
    # bug class: a shortcut for a read holding exactly one whole event (a live stream's usual
    # read) that differs from the general framing
    data = capture.data
    ends = [match.end() for match in re.finditer(rb"\r?\n\r?\n|\n(?=\{)", data)]
    assert outcome(split_at(data, ends), capture.provider) == outcome([data], capture.provider)


def _texts(response: Response) -> list[tuple[str, str]]:
    out = []
    for block in response.content:
        if isinstance(block, (TextBlock, ThinkingBlock, RefusalBlock)):
            out.append((block.type, block.text))
        elif isinstance(block, ToolCallBlock):
            out.append((block.type, block.raw_arguments))
    return out


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
@_PROPERTY
@given(fraction=st.floats(min_value=0.0, max_value=1.0))
def test_truncated_capture_is_incomplete_and_a_prefix(capture: Capture, fraction: float) -> None:
    if _terminal_offset(capture) == 0:
        pytest.skip("the first frame ends the reply: no prefix of it is a reply")
    full = llm_rx.reassemble(capture.data, capture.provider)
    cut = int(_terminal_offset(capture) * fraction)
    cut = min(cut, _terminal_offset(capture) - 1) if _terminal_offset(capture) else 0
    response = llm_rx.reassemble(capture.data[: max(cut, 0)], capture.provider)
    assert response.complete is False
    assert response.stop_reason in ("interrupted", "error")
    assert response.error is not None
    if response.stop_reason == "error":
        assert response.error.kind == "provider"
    for (kind, text), (full_kind, full_text) in zip(
        _texts(response), _texts(full), strict=False
    ):
        assert kind == full_kind
        assert full_text.startswith(text)
    assert len(_texts(response)) <= len(_texts(full))
