"""A reply whose head never arrived is not complete: where the wire has a start frame
(Anthropic ``message_start``, Responses ``response.created`` / ``queued`` / ``in_progress``,
Bedrock ``messageStart``), a stream that ends properly without one is a tail (the end of a
file, a late subscriber to a live bus, a Responses stream resumed with ``starting_after``):
its content is kept, ``complete`` is false, and a protocol error says the start was not seen.
A start that comes late, after a first delta, is fine."""

from __future__ import annotations

import pytest

import llm_rx
from llm_rx.errors import ProtocolError

from ..captures import CAPTURES, Capture, capture
from ..helpers import decode_events
from .frames import Frame, body_of, frames_of, kind_of

_STARTS = {
    "anthropic": {"message_start"},
    "openai-responses": {"response.created", "response.queued", "response.in_progress"},
    "bedrock-converse": {"messageStart"},
}
_DELTAS = {"content_block_delta", "response.output_text.delta", "contentBlockDelta",
           "response.reasoning_summary_text.delta", "response.function_call_arguments.delta"}


def _whole(cap: Capture) -> bool:
    return llm_rx.reassemble(cap.data, cap.provider).complete


WITH_STARTS = [c for c in CAPTURES if c.provider in _STARTS and _whole(c)]


def _is_start(cap: Capture, frame: Frame) -> bool:
    return kind_of(frame) in _STARTS[cap.provider]


def _content(response: llm_rx.Response) -> list[object]:
    return [block.model_dump(mode="json") for block in response.content]


@pytest.mark.parametrize("cap", WITH_STARTS, ids=lambda c: c.name)
def test_start_frame_cut_off_is_not_complete(cap: Capture) -> None:
    # bug class: the tail of a reply (its start frame cut off) read as the whole reply
    frames = frames_of(cap)
    tail = [frame for frame in frames if not _is_start(cap, frame)]
    assert len(tail) < len(frames)
    whole = llm_rx.reassemble(cap.data, cap.provider)
    response = llm_rx.reassemble(body_of(tail), cap.provider)
    assert not response.complete
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "protocol"
    assert "start" in response.error.message.lower()
    assert response.error.raw is not None  # the terminal frame, that found it out
    # what arrived is kept (a start that carried the content took it with it)
    kept = [] if "message_start_content" in cap.features else _content(whole)
    assert _content(response) == kept
    _, error = decode_events([body_of(tail)], cap.provider)
    assert isinstance(error, ProtocolError)


@pytest.mark.parametrize(
    "cap", [c for c in WITH_STARTS if c.provider != "bedrock-converse"], ids=lambda c: c.name
)
def test_start_frame_late_after_a_first_delta_is_complete(cap: Capture) -> None:
    # bug class: a start frame that came late (after a first delta) taken for no start
    frames = frames_of(cap)
    starts = [frame for frame in frames if _is_start(cap, frame)]
    rest = [frame for frame in frames if not _is_start(cap, frame)]
    first = next((i for i, frame in enumerate(rest) if kind_of(frame) in _DELTAS), None)
    if first is None:
        pytest.skip("no delta to come before the start")
    if len({kind_of(frame) for frame in starts}) < len(starts):
        pytest.skip("a start repeated, or a second message: not one start to move")
    late = rest[: first + 1] + starts + rest[first + 1 :]
    whole = llm_rx.reassemble(cap.data, cap.provider)
    response = llm_rx.reassemble(body_of(late), cap.provider)
    assert response.complete
    assert response.error is None
    assert response.stop_reason == whole.stop_reason
    assert response.text == whole.text


def test_start_frame_bedrock_late_after_content_is_a_protocol_error() -> None:
    # Bedrock's messageStart after content is another message spliced in, not a late start.
    cap = capture("bedrock/converse-stream-text.eventstream")
    frames = frames_of(cap)
    start = frames[0]
    assert kind_of(start) == "messageStart"
    late = [*frames[1:3], start, *frames[3:]]
    response = llm_rx.reassemble(body_of(late), cap.provider)
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "protocol"


def test_start_frame_responses_resumed_after_its_head_is_complete() -> None:
    # A stream resumed with ``starting_after`` is decoded after the first connection's
    # events: the two together have the start, and are the whole reply.
    cap = capture("openai/responses-background-queued.sse")
    frames = frames_of(cap)
    cut = len(frames) // 2
    head, resumed = frames[:cut], frames[cut:]
    assert not llm_rx.reassemble(body_of(resumed), cap.provider).complete
    response = llm_rx.reassemble([body_of(head), body_of(resumed)], cap.provider)
    assert response == llm_rx.reassemble(cap.data, cap.provider)
    assert response.complete


def test_start_frame_responses_background_start_is_queued() -> None:
    # A background reply starts with response.queued: without created, it is still whole.
    cap = capture("openai/responses-background-queued.sse")
    frames = [frame for frame in frames_of(cap) if kind_of(frame) != "response.created"]
    assert any(kind_of(frame) == "response.queued" for frame in frames)
    assert llm_rx.reassemble(body_of(frames), cap.provider).complete


@pytest.mark.parametrize("provider", ["openai-chat", "gemini", "ollama"])
def test_start_frame_formats_without_one_have_nothing_to_check(provider: str) -> None:
    # OpenAI chat, Gemini and Ollama have no start frame: every chunk is alike, so a tail
    # cannot be told from a whole reply, and one that ends properly is complete.
    cap = next(c for c in CAPTURES if c.provider == provider and _whole(c)
               and len(frames_of(c)) > 3 and c.data[:1] != b"[")  # (an array has its head)
    tail = frames_of(cap)[2:]
    assert llm_rx.reassemble(body_of(tail), provider).complete
