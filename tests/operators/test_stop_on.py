"""``stop_on()`` in virtual time: a stop at once, at the end of the block in progress, the
Response it leaves, the cancel call, and the subscription windows."""

from __future__ import annotations

from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import CancelledStreamError
from llm_rx.events import (
    BlockStart,
    BlockStop,
    MessageStart,
    MessageStop,
    TextDelta,
    ThinkingDelta,
    UsageUpdate,
)
from llm_rx.response import Usage

on_next, on_completed, on_error = ReactiveTest.on_next, ReactiveTest.on_completed, \
    ReactiveTest.on_error
subscribe = ReactiveTest.subscribe

REPLY = [
    on_next(210, MessageStart("openai-responses", "m", "resp_1")),
    on_next(220, BlockStart(0, "thinking")),
    on_next(230, ThinkingDelta(0, "hmm")),
    on_next(240, ThinkingDelta(0, " more")),
    on_next(250, BlockStop(0)),
    on_next(260, BlockStart(1, "text")),
    on_next(270, TextDelta(1, "Hel")),
    on_next(280, UsageUpdate(Usage(input_tokens=5, output_tokens=3))),
    on_next(290, TextDelta(1, "lo")),
    on_next(300, BlockStop(1)),
    on_next(310, MessageStop("end_turn")),
    on_completed(320),
]


def _run(at: str, stop_time: int, cancel: Any = None) -> tuple[Any, Any, Any]:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(*REPLY)
    trigger = scheduler.create_hot_observable(on_next(stop_time, "stop"))
    observer = scheduler.start(lambda: source.pipe(lxo.stop_on(trigger, at, cancel=cancel)))
    return observer, source, trigger


def test_stop_on_now_ends_at_the_trigger_and_lets_go_of_both() -> None:
    calls: list[str] = []
    observer, source, trigger = _run("now", 235, calls.append)
    times = [m.time for m in observer.messages]
    assert times == [210, 220, 230, 235]
    assert isinstance(observer.messages[-1].value.exception, CancelledStreamError)
    assert source.subscriptions == [subscribe(200, 235)]
    assert trigger.subscriptions == [subscribe(200, 235)]
    assert calls == ["resp_1"]  # (the provider's cancel, once, with the reply's id)


def test_stop_on_block_lets_the_block_in_progress_close() -> None:
    observer, source, _ = _run("block", 235)
    kinds = [(m.time, type(m.value.value).__name__) for m in observer.messages[:-1]]
    assert kinds == [(210, "MessageStart"), (220, "BlockStart"), (230, "ThinkingDelta"),
                     (240, "ThinkingDelta"), (250, "BlockStop")]
    assert observer.messages[-1].time == 250
    assert source.subscriptions == [subscribe(200, 250)]


def test_stop_on_block_between_blocks_stops_at_once() -> None:
    observer, source, _ = _run("block", 255)
    assert observer.messages[-1].time == 255
    assert observer.messages[-1].value.kind == "E"
    assert source.subscriptions == [subscribe(200, 255)]


def test_stop_on_after_the_end_changes_nothing() -> None:
    calls: list[str] = []
    observer, _source, trigger = _run("now", 400, calls.append)
    assert observer.messages[-1] == on_completed(320)
    assert trigger.subscriptions == [subscribe(200, 320)]
    assert calls == []


@pytest.mark.parametrize(("at", "when", "text", "thinking"), [
    ("now", 275, "Hel", "hmm more"), ("block", 275, "Hello", "hmm more"),
    ("now", 235, "", "hmm"),
])
def test_stop_on_response_is_interrupted_cancelled_with_what_arrived(
    at: str, when: int, text: str, thinking: str
) -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(*REPLY)
    trigger = scheduler.create_hot_observable(on_next(when, "stop"))
    observer = scheduler.start(
        lambda: source.pipe(lxo.stop_on(trigger, at), lxo.to_response()))  # type: ignore[arg-type]
    response: llm_rx.Response = observer.messages[0].value.value
    assert (response.complete, response.stop_reason) == (False, "interrupted")
    assert response.error is not None
    assert response.error.kind == "cancelled"
    assert response.text == text
    assert [b.text for b in response.content if b.type == "thinking"] == [thinking]
    if at == "block":
        assert response.usage.input_tokens == 5  # (the usage so far)


def test_stop_on_a_trigger_error_is_the_replys() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(*REPLY)
    trigger = scheduler.create_hot_observable(on_error(235, ValueError("boom")))
    observer = scheduler.start(lambda: source.pipe(lxo.stop_on(trigger)))
    assert isinstance(observer.messages[-1].value.exception, ValueError)
    assert source.subscriptions == [subscribe(200, 235)]


def test_stop_on_a_failing_cancel_is_a_note() -> None:
    def cancel(reply_id: str) -> None:
        raise RuntimeError("no route")

    observer, _, _ = _run("now", 235, cancel)
    error = observer.messages[-1].value.exception
    assert "the cancel call for 'resp_1' failed: RuntimeError: no route" in error.__notes__


def test_stop_on_a_trigger_that_emitted_before_stops_before_anything() -> None:
    from reactivex.subject import BehaviorSubject

    # (a trigger that gives its item at subscription on any thread: ``reactivex.of(1)``
    # gives it on the current thread's trampoline, later if one is running there)
    events = list(llm_rx.from_bytes(b"data: {}\n\n", "openai-chat").pipe(
        lxo.stop_on(BehaviorSubject(1)), ops.materialize(), ops.to_list()).run())
    assert [n.kind for n in events] == ["E"]


def test_stop_on_refuses_an_unknown_at() -> None:
    import reactivex

    with pytest.raises(ValueError, match="at must be"):
        lxo.stop_on(reactivex.never(), "later")  # type: ignore[arg-type]


def test_stop_on_a_trigger_pressed_twice_cancels_once() -> None:
    calls: list[str] = []
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(*REPLY)
    trigger = scheduler.create_hot_observable(on_next(235, "stop"), on_next(238, "again"),
                                              on_next(245, "and again"))
    observer = scheduler.start(
        lambda: source.pipe(lxo.stop_on(trigger, "block", cancel=calls.append)))
    assert observer.messages[-1].time == 250
    assert calls == ["resp_1"]


def test_stop_on_right_after_a_source_stays_a_source_a_read_at_a_time() -> None:
    from pathlib import Path

    import reactivex

    from llm_rx.sources import EventSource

    path = Path(llm_rx.__file__).parent / "data/anthropic/thinking-signature.sse"
    events = llm_rx.from_file(path).pipe(lxo.stop_on(reactivex.never()))
    assert isinstance(events, EventSource)  # (to_response() after it folds a read at a time)
    assert events.pipe(lxo.to_response()).run() == llm_rx.reassemble(path)
    reads: list[list[Any]] = []
    events.subscribe_steps(None, reads.append, print, print, lambda: None)
    assert len(reads) < sum(map(len, reads))  # (several events a read)
