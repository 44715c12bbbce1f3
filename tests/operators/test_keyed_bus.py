"""keyed / for_key: concurrent replies on one bus, one reply's error reaching its own
consumers only."""

from __future__ import annotations

from typing import Any

from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import ReactiveTest, TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError
from llm_rx.events import Event

from ..captures import capture

TEXT = capture("openai/chat-gpt41-nano-text.sse").data
THINKING = capture("anthropic/thinking-signature.sse").data
CUT = TEXT[: len(TEXT) // 2]
on_next, on_completed = ReactiveTest.on_next, ReactiveTest.on_completed


def _kinds(events: list[Any]) -> list[tuple[Any, ...]]:
    return [(type(e), *e) for e in events]


def test_the_natural_subscribe_kills_the_bus_for_everyone() -> None:
    # (the trap keyed() avoids: a Subject ends at the first reply's error)
    bus: Subject[Event] = Subject()
    errors: list[Exception] = []
    bus.subscribe(lambda e: None, errors.append)
    llm_rx.from_bytes(CUT).subscribe(bus)
    assert bus.is_stopped
    assert len(errors) == 1


def test_keyed_replies_share_a_bus_and_an_error_reaches_its_own_consumer_only() -> None:
    bus: Subject[lxo.Keyed[Event]] = Subject()
    responses: dict[str, list[Any]] = {"good": [], "cut": [], "other": []}
    ends: dict[str, list[Any]] = {"good": [], "cut": [], "other": []}
    for key in responses:
        bus.pipe(lxo.for_key(key), lxo.to_response()).subscribe(
            responses[key].append, ends[key].append, lambda key=key: ends[key].append("done"))
    everything: list[lxo.Keyed[Event]] = []
    bus.subscribe(everything.append, everything.append)

    llm_rx.from_bytes(TEXT).pipe(lxo.keyed("good")).subscribe(bus.on_next)
    llm_rx.from_bytes(CUT).pipe(lxo.keyed("cut")).subscribe(bus.on_next)
    llm_rx.from_bytes(THINKING).pipe(lxo.keyed("other")).subscribe(bus.on_next)

    assert not bus.is_stopped
    assert responses["good"][0].complete
    assert ends["good"] == ["done"]
    cut = responses["cut"][0]
    assert not cut.complete
    assert cut.stop_reason == "interrupted"
    assert ends["cut"] == ["done"]  # (to_response() turned the cut into its Response)
    assert responses["other"][0].model_dump() == llm_rx.reassemble(THINKING).model_dump()
    kinds = {(item.key, item.notification.kind) for item in everything}
    assert ("cut", "E") in kinds
    assert ("good", "C") in kinds
    assert ("other", "C") in kinds


def test_for_key_gives_the_replys_own_events_then_its_own_error() -> None:
    bus: Subject[lxo.Keyed[Event]] = Subject()
    seen: list[Any] = []
    errors: list[Exception] = []
    bus.pipe(lxo.for_key(2)).subscribe(seen.append, errors.append)
    llm_rx.from_bytes(TEXT).pipe(lxo.keyed(1)).subscribe(bus.on_next)
    llm_rx.from_bytes(CUT).pipe(lxo.keyed(2)).subscribe(bus.on_next)
    expected: list[Any] = []
    llm_rx.from_bytes(CUT).subscribe(expected.append, lambda e: None)
    assert _kinds(seen) == _kinds(expected)
    assert len(errors) == 1
    assert isinstance(errors[0], IncompleteStreamError)


def test_interleaved_replies_stay_apart_on_virtual_time() -> None:
    scheduler = TestScheduler()
    first = list(llm_rx.from_bytes(TEXT).pipe(ops.to_list()).run())
    second = list(llm_rx.from_bytes(THINKING).pipe(ops.to_list()).run())
    a = scheduler.create_hot_observable(
        [on_next(300 + 2 * i, e) for i, e in enumerate(first)]
        + [on_completed(300 + 2 * len(first))])
    b = scheduler.create_hot_observable(
        [on_next(301 + 2 * i, e) for i, e in enumerate(second)]
        + [on_completed(301 + 2 * len(second))])
    bus: Subject[lxo.Keyed[Event]] = Subject()
    out: dict[str, list[Any]] = {"a": [], "b": []}
    for key in out:
        bus.pipe(lxo.for_key(key), lxo.to_response()).subscribe(out[key].append)
    a.pipe(lxo.keyed("a")).subscribe(bus.on_next, scheduler=scheduler)
    b.pipe(lxo.keyed("b")).subscribe(bus.on_next, scheduler=scheduler)
    scheduler.start()
    assert out["a"][0].model_dump() == llm_rx.reassemble(TEXT).model_dump()
    assert out["b"][0].model_dump() == llm_rx.reassemble(THINKING).model_dump()

