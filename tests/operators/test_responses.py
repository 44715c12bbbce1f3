"""``responses()`` and ``to_responses()``: a stream of several responses, one per response,
each with exactly one end; never two replies merged."""

from __future__ import annotations

from typing import Any

import pytest
import reactivex as rx
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
    MetadataUpdate,
    Opaque,
    TextDelta,
    UsageUpdate,
)
from llm_rx.response import Usage
from tests.captures import CAPTURES, Capture, capture
from tests.helpers import decode_events, first_reply


def _reply(id: str | None, text: str, stop: bool = True) -> list[Event]:
    events: list[Event] = [MessageStart("openai-responses", "m", id), BlockStart(0, "text"),
                           TextDelta(0, text), BlockStop(0)]
    return [*events, MessageStop("end_turn")] if stop else events


def _split(events: list[Event]) -> list[list[Event]]:
    out: list[list[Event]] = []
    rx.from_iterable(events).pipe(lxo.responses()).subscribe(
        lambda inner: inner.pipe(ops.to_list()).subscribe(out.append))
    return out


def test_responses_one_after_another_each_its_own() -> None:
    first, second = _reply("r1", "Hello"), _reply("r2", "Again")
    assert _split([*first, *second]) == [first, second]


def test_responses_a_second_start_while_one_is_open_ends_it_not_complete() -> None:
    first, second = _reply("r1", "cut", stop=False), _reply("r2", "steered")
    replies = rx.from_iterable([*first, *second]).pipe(lxo.to_responses()).run()
    assert [r.text for r in replies] == ["cut", "steered"]
    assert not replies[0].complete
    assert replies[0].stop_reason == "interrupted"
    assert replies[1].complete


def test_responses_the_same_start_said_again_is_one_response() -> None:
    start = MessageStart("anthropic", "m", "msg_1")
    events = [start, start, *_reply("msg_1", "Hi")[1:]]
    assert _split(events) == [events]
    assert _split([MessageStart("anthropic", "m", None), *_reply("msg_1", "Hi")]) == [
        [MessageStart("anthropic", "m", None), *_reply("msg_1", "Hi")]]


def test_responses_a_start_with_another_id_before_any_content_is_another_response() -> None:
    events = [MessageStart("anthropic", "m", "a"), *_reply("b", "Hi")]
    assert [len(r) for r in _split(events)] == [1, 5]


def test_responses_each_ends_where_its_response_ends() -> None:
    # (live: the first response is whole before the second arrives)
    source: Subject[Event] = Subject()
    got: list[Any] = []
    source.pipe(lxo.responses(), ops.flat_map(lambda inner: inner.pipe(lxo.to_response()))
                ).subscribe(got.append)
    for event in _reply("r1", "one"):
        source.on_next(event)
    source.on_next(_reply("r2", "two")[0])
    assert [r.text for r in got] == ["one"]
    for event in _reply("r2", "two")[1:]:
        source.on_next(event)
    source.on_completed()
    assert [r.text for r in got] == ["one", "two"]


def test_to_responses_an_error_ends_the_open_response_only() -> None:
    error = IncompleteStreamError("cut")
    stream = rx.concat(rx.from_iterable([*_reply("r1", "one"), *_reply("r2", "tw", False)]),
                       rx.throw(error))
    replies = stream.pipe(lxo.to_responses()).run()
    assert [(r.text, r.complete) for r in replies] == [("one", True), ("tw", False)]
    assert replies[1].error is not None
    assert replies[1].error.kind == "incomplete"
    with pytest.raises(IncompleteStreamError):
        rx.throw(error).pipe(lxo.to_responses()).run()  # (nothing arrived: passed on)


def test_to_responses_of_one_recorded_reply_is_to_response() -> None:
    cap = capture("anthropic/thinking-signature.sse")
    events = llm_rx.from_bytes(cap.data, provider=cap.provider)
    assert events.pipe(lxo.to_responses()).run() == [llm_rx.reassemble(cap.data, cap.provider)]


@pytest.mark.parametrize("second", [_reply("r2", "Again"), _reply(None, "Again")])
def test_to_response_of_several_responses_never_merges_them(second: list[Event]) -> None:
    # bug class: two replies on one stream read as one (the second's text appended)
    response = rx.from_iterable([*_reply("r1", "Hello"), *second]).pipe(
        lxo.to_response()).run()
    assert response.text == "Hello"
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "protocol"
    assert "responses()" in response.error.message


def test_to_response_a_start_with_another_id_while_open_is_another_response() -> None:
    events = [*_reply("r1", "Hel", stop=False), *_reply("r2", "Again")]
    response = rx.from_iterable(events).pipe(lxo.to_response()).run()
    assert response.text == "Hel"
    assert response.error is not None
    assert response.error.kind == "protocol"


def test_to_responses_an_error_between_two_responses_is_no_response_s() -> None:
    # bug class: an error after a response's stop folded into that finished response
    error = IncompleteStreamError("closed before the next response")
    stream = rx.concat(rx.from_iterable(_reply("r1", "one")), rx.throw(error))
    with pytest.raises(IncompleteStreamError):
        stream.pipe(lxo.to_responses()).run()
    got: list[Any] = []
    errors: list[Exception] = []
    stream.pipe(lxo.responses()).subscribe(
        lambda inner: inner.pipe(lxo.to_response()).subscribe(got.append), errors.append)
    assert [(r.text, r.complete, r.error) for r in got] == [("one", True, None)]
    assert errors == [error]


@pytest.mark.parametrize("cap", CAPTURES, ids=lambda cap: cap.name)
def test_to_responses_of_every_recorded_reply_is_its_one_response(cap: Capture) -> None:
    # bug class: a start that only fills in what the open one lacked (a fallback model, a
    # resumed stream's late id) read as a second response
    events = llm_rx.from_bytes(cap.data, provider=cap.provider)
    replies = events.pipe(lxo.to_responses()).run()
    stops = [type(e) for e in decode_events([cap.data], cap.provider)[0]].count(MessageStop)
    assert len(replies) == max(stops, 1)  # (a recorded body of several replies: each)
    assert replies[0].model_dump() == first_reply(cap.data, cap.provider).model_dump()


def test_responses_a_start_that_fills_in_is_the_same_response() -> None:
    fallback = MessageStart("anthropic", "other-model", None)
    late_id = MessageStart("openai-responses", "m", "r1")
    for events in ([*_reply("r1", "Hi")[:3], fallback, *_reply("r1", "Hi")[3:]],
                   [*_reply(None, "Hi")[:3], late_id, *_reply(None, "Hi")[3:]]):
        assert _split(events) == [events]


def test_to_response_the_same_id_started_again_after_content_is_another_response() -> None:
    events = [*_reply("r1", "Hel", stop=False), *_reply("r1", "Again")]
    assert [len(r) for r in _split(events)] == [4, 5]
    response = rx.from_iterable(events).pipe(lxo.to_response()).run()
    assert response.text == "Hel"
    assert response.error is not None
    assert response.error.kind == "protocol"


def test_decode_gives_one_reply_however_the_next_one_is_cut_into_reads() -> None:
    # bug class: decode() gave the next reply's events when they came in the same read
    body = capture("openai/responses-basic-llm.sse").data
    for chunks in ([body + body], [body, body], [body + body[:100], body[100:]]):
        events = rx.from_iterable(chunks).pipe(lxo.decode("openai-responses"), ops.to_list()).run()
        assert [type(e) for e in events].count(MessageStart) == 1
        assert type(events[-1]) is MessageStop


def test_responses_the_same_start_after_metadata_only_is_the_same_response() -> None:
    # (usage and metadata are no content: the start said again is the same response, in
    # responses() and to_response() alike)
    start = MessageStart("anthropic", "m", "msg_1")
    events = [start, UsageUpdate(Usage(input_tokens=3)), MetadataUpdate({"k": 1}), start,
              *_reply("msg_1", "Hi")[1:]]
    assert _split(events) == [events]
    reply = rx.from_iterable(events).pipe(lxo.to_response()).run()
    assert (reply.text, reply.complete) == ("Hi", True)
    opaque = [*_reply("msg_1", "", stop=False)[:1], Opaque("ping", {}), *_reply("msg_1", "Hi")]
    assert [len(r) for r in _split(opaque)] == [2, 5]
    assert not rx.from_iterable(opaque).pipe(lxo.to_response()).run().complete
