"""think_tags: reasoning written into the answer text between tags, as thinking blocks."""

from __future__ import annotations

import pytest
import reactivex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reactivex import Observable
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError
from llm_rx.events import (
    BlockStart,
    BlockStop,
    Event,
    MessageStart,
    MessageStop,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from llm_rx.response import Response, TextBlock, ThinkingBlock, ToolCallBlock

from ..captures import capture

R1 = "huggingface/together-deepseek-r1-think-tags.sse"


def _events(*texts: str, stop: bool = True, start: bool = True) -> list[Event]:
    events: list[Event] = [MessageStart("openai-chat")]
    if start:
        events.append(BlockStart(0, "text"))
    events += [TextDelta(0, text) for text in texts]
    if stop:
        events += [BlockStop(0), MessageStop("end_turn")]
    return events


def _source(events: list[Event]) -> Observable[Event]:
    return reactivex.from_iterable(events)


def _response(events: list[Event], **tags: str) -> Response:
    result: Response = _source(events).pipe(lxo.think_tags(**tags), lxo.to_response()).run()
    return result


def _kinds(response: Response) -> list[tuple[str, str]]:
    return [(block.type, getattr(block, "text", "")) for block in response.content]


def test_think_tags_on_the_deepseek_r1_capture_splits_reasoning_from_answer() -> None:
    data = capture(R1).data
    plain = llm_rx.reassemble(data)
    split = llm_rx.from_bytes(data, provider="openai-chat").pipe(
        lxo.think_tags(), lxo.to_response()
    ).run()
    assert [block.type for block in split.content] == ["thinking", "text"]
    assert "<think>" not in split.text
    assert "</think>" not in split.thinking
    assert f"<think>{split.thinking}</think>{split.text}" == plain.text  # byte-identical
    assert (split.stop_reason, split.complete, split.usage) == (
        plain.stop_reason, plain.complete, plain.usage
    )


def test_think_tags_is_opt_in_the_text_keeps_its_tags_without_it() -> None:
    assert llm_rx.reassemble(capture(R1).data).text.startswith("<think>\n")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_think_tags_do_not_depend_on_where_the_deltas_split(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from([
        "<think>a<b</think>answer <thin",
        "pre<think>x</think>mid<think>y</thin</think>post",
        "<think></think><<think>>",
        "no tags at all, < and </ and <think",
        "<think>never closes <",
    ]))
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=len(text))))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    whole = _response(_events(text))
    chunked = _response(_events(*pieces))
    assert _kinds(chunked) == _kinds(whole)


def test_think_tags_alternate_blocks_in_order() -> None:
    response = _response(_events("pre<think>x</think>mid<think>y</think>post"))
    assert _kinds(response) == [
        ("text", "pre"), ("thinking", "x"), ("text", "mid"), ("thinking", "y"), ("text", "post")
    ]


def test_think_tags_a_tag_split_one_character_a_delta() -> None:
    response = _response(_events(*"<think>hm</think>ok"))
    assert _kinds(response) == [("thinking", "hm"), ("text", "ok")]


def test_think_tags_a_tag_start_that_never_completes_is_text() -> None:
    response = _response(_events("answer <thi"))
    assert _kinds(response) == [("text", "answer <thi")]


def test_think_tags_that_never_close_stay_thinking_and_the_stop_is_kept() -> None:
    events = [*_events("<think>cut by max tok", stop=False), MessageStop("max_tokens")]
    response = _response(events)
    assert _kinds(response) == [("thinking", "cut by max tok")]
    assert (response.stop_reason, response.complete) == ("max_tokens", True)


def test_think_tags_a_cut_stream_keeps_what_was_held_back_and_is_not_complete() -> None:
    subject: Subject[Event] = Subject()
    responses: list[Response] = []
    subject.pipe(lxo.think_tags(), lxo.to_response()).subscribe(responses.append)
    for event in _events("<think>hm</thi", stop=False):
        subject.on_next(event)
    subject.on_error(IncompleteStreamError("EOF before the end"))
    (response,) = responses
    assert _kinds(response) == [("thinking", "hm</thi")]
    assert not response.complete
    assert response.stop_reason == "interrupted"


def test_think_tags_renumber_the_blocks_after_a_split_one() -> None:
    events: list[Event] = [
        MessageStart("anthropic"), BlockStart(0, "text"), TextDelta(0, "<think>r</think>a"),
        BlockStop(0), BlockStart(1, "tool_call", id="c1", name="f"), ToolArgsDelta(1, "{}"),
        BlockStop(1), MessageStop("tool_use"),
    ]
    out = _source(events).pipe(lxo.think_tags(), ops.to_list()).run()
    assert [e.index for e in out if isinstance(e, BlockStart)] == [0, 1, 2]
    assert ToolArgsDelta(2, "{}") in out
    assert BlockStop(2) in out
    response = _source(events).pipe(lxo.think_tags(), lxo.to_response()).run()
    assert isinstance(response.content[2], ToolCallBlock)
    assert response.content[2].arguments == {}


def test_think_tags_keep_an_empty_signed_text_block() -> None:
    events: list[Event] = [
        MessageStart("gemini"), BlockStart(0, "text"), TextDelta(0, "hi"), BlockStop(0),
        BlockStart(1, "text"), SignatureDelta(1, "SIG"), BlockStop(1), MessageStop("end_turn"),
    ]
    response = _source(events).pipe(lxo.think_tags(), lxo.to_response()).run()
    assert response.content == [TextBlock(text="hi"), TextBlock(text="", signature="SIG")]


def test_think_tags_leave_real_thinking_blocks_alone() -> None:
    events: list[Event] = [
        MessageStart("anthropic"), BlockStart(0, "thinking"), ThinkingDelta(0, "<think>"),
        SignatureDelta(0, "S"), BlockStop(0), MessageStop("end_turn"),
    ]
    response = _source(events).pipe(lxo.think_tags(), lxo.to_response()).run()
    assert response.content == [ThinkingBlock(text="<think>", signature="S")]


def test_think_tags_with_other_tags() -> None:
    response = _response(_events("[R]why[/R]so"), open="[R]", close="[/R]")
    assert _kinds(response) == [("thinking", "why"), ("text", "so")]


def test_think_tags_refuse_an_empty_tag() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        lxo.think_tags(open="")
