"""paced(): a simulated pace that delivers every item, then the end (virtual time)."""

from __future__ import annotations

import pytest
from reactivex.notification import OnNext
from reactivex.testing import ReactiveTest, TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError

from ..captures import capture

on_next, on_completed, on_error = (
    ReactiveTest.on_next, ReactiveTest.on_completed, ReactiveTest.on_error
)
subscribe = ReactiveTest.subscribe


def test_paced_delivers_every_item_before_the_error() -> None:
    scheduler = TestScheduler()
    cut = IncompleteStreamError("cut")
    source = scheduler.create_cold_observable(
        on_next(10, "S"), on_next(20, "b"), on_next(30, "t"), on_error(40, cut)
    )
    result = scheduler.start(lambda: source.pipe(lxo.paced(100.0)))
    assert result.messages == [
        on_next(310, "S"), on_next(410, "b"), on_next(510, "t"), on_error(510, cut)
    ]
    assert source.subscriptions == [subscribe(200, 240)]


def test_paced_completes_after_the_last_item() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(10, "a"), on_completed(15))
    result = scheduler.start(lambda: source.pipe(lxo.paced(50.0)))
    assert result.messages == [on_next(260, "a"), on_completed(260)]


def test_paced_uses_the_scheduler_given() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(10, "a"), on_next(11, "b"),
                                              on_completed(12))
    result = scheduler.start(lambda: source.pipe(lxo.paced(5.0, scheduler=scheduler)))
    assert result.messages == [on_next(215, "a"), on_next(220, "b"), on_completed(220)]


def test_paced_dispose_cancels_the_pending_items() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(on_next(10, "a"), on_next(20, "b"),
                                              on_completed(30))
    result = scheduler.start(lambda: source.pipe(lxo.paced(100.0)), disposed=350)
    assert result.messages == [on_next(310, "a")]


def test_paced_a_cut_capture_keeps_every_event_and_still_reassembles() -> None:
    data = capture("anthropic/text-basic.sse").data
    cut = data[: data.index(b"content_block_stop")]  # cut inside the answer
    scheduler = TestScheduler()
    paced = llm_rx.from_bytes(cut, "anthropic").pipe(lxo.paced(1.0), lxo.to_response())
    result = scheduler.start(lambda: paced, disposed=10_000)
    (response,) = [message.value.value for message in result.messages
                   if isinstance(message.value, OnNext)]
    assert response.complete is False
    assert response.stop_reason == "interrupted"
    assert response.text == llm_rx.reassemble(cut, "anthropic").text != ""
    events: list[object] = []
    llm_rx.from_bytes(cut, "anthropic").subscribe(events.append, lambda _: None)
    assert result.messages[-1].time == 200 + len(events)  # one second apart, nothing dropped


@pytest.mark.parametrize("seconds", [-0.5, float("nan")])
def test_paced_refuses_a_negative_pace(seconds: float) -> None:
    with pytest.raises(ValueError, match="seconds"):
        lxo.paced(seconds)
