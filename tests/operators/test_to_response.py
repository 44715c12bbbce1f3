"""to_response(): one Response when the events end; an error after the start is kept in it."""

from __future__ import annotations

from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError, WireFormatError
from llm_rx.events import (
    BlockStart,
    BlockStop,
    MessageStart,
    MessageStop,
    TextDelta,
    UsageUpdate,
)
from llm_rx.response import Response, Usage

on_next, on_completed, on_error = (
    ReactiveTest.on_next, ReactiveTest.on_completed, ReactiveTest.on_error
)
subscribe = ReactiveTest.subscribe

EVENTS = {
    "S": MessageStart("anthropic", "claude-x", "msg_1"),
    "b": BlockStart(0, "text"),
    "h": TextDelta(0, "Hel"),
    "l": TextDelta(0, "lo"),
    "e": BlockStop(0),
    "u": UsageUpdate(Usage(input_tokens=3, output_tokens=2)),
    "M": MessageStop("end_turn"),
}


def test_to_response_marbles_emits_once_at_completion() -> None:
    with marbles_testing() as (start, _cold, hot, _exp):
        source = hot("-S-b-h-l-e-u-M-|", EVENTS)
        results = start(source.pipe(lxo.to_response()))
    assert len(results) == 2
    response = results[0].value.value
    assert isinstance(response, Response)
    assert results[0].time == results[1].time  # emitted and completed on the source's end
    assert response.text == "Hello"
    assert response.complete
    assert response.usage.output_tokens == 2


def test_to_response_error_after_start_gives_interrupted_response() -> None:
    scheduler = TestScheduler()
    failure = IncompleteStreamError("cut")
    source = scheduler.create_hot_observable(
        on_next(210, EVENTS["S"]),
        on_next(220, EVENTS["b"]),
        on_next(230, EVENTS["h"]),
        on_error(240, failure),
    )
    observer = scheduler.start(lambda: source.pipe(lxo.to_response()))
    (first, last) = observer.messages
    assert first.time == 240
    assert last.time == 240
    response = first.value.value
    assert response.text == "Hel"
    assert response.complete is False
    assert response.stop_reason == "interrupted"
    assert last.value.kind == "C"
    assert source.subscriptions == [subscribe(200, 240)]


def test_to_response_error_before_start_is_passed_on() -> None:
    scheduler = TestScheduler()
    failure = WireFormatError("not a stream", "<html>")
    source = scheduler.create_hot_observable(on_error(220, failure))
    observer = scheduler.start(lambda: source.pipe(lxo.to_response()))
    assert observer.messages == [on_error(220, failure)]


def test_to_response_disposal_stops_the_subscription() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        on_next(210, EVENTS["S"]), on_next(900, EVENTS["M"]), on_completed(950)
    )
    observer = scheduler.start(lambda: source.pipe(lxo.to_response()), disposed=500)
    assert observer.messages == []
    assert source.subscriptions == [subscribe(200, 500)]


def test_to_response_state_is_per_subscription() -> None:
    events = llm_rx.from_bytes(
        b'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}],'
        b'"model":"m"}\n\ndata: [DONE]\n\n',
        "openai-chat",
    )
    folded = events.pipe(lxo.to_response())
    first = folded.run()
    second = folded.run()
    assert first.text == second.text == "x"


def test_to_response_events_without_message_stop_are_incomplete() -> None:
    with marbles_testing() as (start, _cold, hot, _exp):
        results = start(hot("-S-b-h-|", EVENTS).pipe(lxo.to_response()))
    response = results[0].value.value
    assert response.complete is False
    assert response.stop_reason == "interrupted"


def test_a_live_reply_a_delta_a_read_keeps_its_parts_joined() -> None:
    # bug class: to_response() fed a read of one event (a live stream's) one by one, past
    # the builder's bound on a block's parts: a string object kept per delta
    import reactivex

    from llm_rx.events import BlockStart, MessageStart, TextDelta
    from llm_rx.operators._to_response import _Reply

    reply = _Reply(reactivex.empty(), None)
    reply.step([MessageStart("anthropic", None, None)])
    reply.step([BlockStart(0, "text")])
    for _ in range(20_000):
        assert reply.step([TextDelta(0, "ab")]) == ([], None)
    assert reply._builder._blocks[0].joined == 4
    assert reply.end(None)[0][0].text == "ab" * 20_000
