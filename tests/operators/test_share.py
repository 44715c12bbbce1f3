"""share() and fan_out(): one upstream read feeding several operators, a read at a time."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import Event, MessageStart, TextDelta
from llm_rx.sources import EventSource

from ..captures import CAPTURES, capture
from ..helpers import kinds
from ..sinks.timeline import events_of

AT = datetime(2026, 11, 1, tzinfo=UTC)
WHOLE = [c.name for c in CAPTURES if llm_rx.reassemble(c.path).complete][:40]


class Counting(EventSource):
    """A source that counts its subscriptions (reads a capture in 1 KiB reads)."""

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self.data = data
        self.subscriptions = 0

    def _read(self, reading: Any, scheduler: Any) -> Any:
        self.subscriptions += 1
        return llm_rx.from_bytes(
            [self.data[n:n + 1024] for n in range(0, len(self.data), 1024)]
        )._read(reading, scheduler)


@pytest.mark.parametrize("name", WHOLE)
def test_fan_out_every_branch_sees_the_whole_reply_from_one_read(name: str) -> None:
    # bug class: a multicast over a synchronous source whose first subscriber reads it all
    # (RxPY share()), or branches that see different events
    source = Counting(capture(name).data)
    ((response, texts, events, cost, last),) = source.pipe(lxo.fan_out(
        lxo.to_response(), lxo.text_only(), ops.to_list(), lxo.cost(at=AT),
        lxo.trace(TracerProvider().get_tracer("tests")),
    ), ops.to_list()).run()
    assert last == events[-1]  # (a tap's last value: the last event)
    assert source.subscriptions == 1
    assert response == llm_rx.reassemble(capture(name).path)
    assert kinds(events) == kinds(events_of(capture(name).path))
    assert texts is None or isinstance(texts, str)
    assert cost == llm_rx.from_file(capture(name).path).pipe(lxo.cost(at=AT)).run()


def test_fan_out_branches_behind_it_keep_their_per_read_fusion() -> None:
    # bug class: a multicast that hands operators one event at a time (a hop per event)
    seen: list[Any] = []

    def probe(source: Any) -> Any:
        seen.append(source)
        return lxo.to_response()(source)

    llm_rx.from_file(capture("openai/chat-text-basic.sse").path).pipe(
        lxo.fan_out(probe)).run()
    assert isinstance(seen[0], EventSource)


def test_fan_out_emits_the_values_and_the_error_stays_on_the_response() -> None:
    # bug class: an error in one branch losing what the others made (the partial response);
    # then: the error raised by .run() after them, losing them all the same
    data = capture("anthropic/error-overloaded-midstream.synthetic.sse").data
    out: list[Any] = []
    llm_rx.from_bytes(data).pipe(lxo.fan_out(lxo.to_response(), lxo.cost(at=AT))).subscribe(
        out.append, out.append, lambda: out.append("completed"))
    (response, cost), end = out
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert not cost.complete
    assert end == "completed"


def test_fan_out_dispose_disposes_the_upstream() -> None:
    subject: Subject[Event] = Subject()
    subscription = subject.pipe(lxo.fan_out(lxo.to_response(), lxo.text_only())).subscribe()
    assert len(subject.observers) == 1
    subscription.dispose()
    assert subject.observers == []


def test_fan_out_needs_an_operator() -> None:
    with pytest.raises(ValueError, match="at least one"):
        lxo.fan_out()


def test_share_subscribes_upstream_once_for_every_subscriber() -> None:
    subject: Subject[Event] = Subject()
    shared = subject.pipe(lxo.share())
    first: list[Event] = []
    second: list[Event] = []
    one = shared.subscribe(first.append)
    subject.on_next(MessageStart("openai-chat"))
    two = shared.subscribe(second.append)
    subject.on_next(TextDelta(0, "hi"))
    assert len(subject.observers) == 1
    assert first == [MessageStart("openai-chat"), TextDelta(0, "hi")]
    assert second == [TextDelta(0, "hi")]  # from where the read was
    one.dispose()
    assert len(subject.observers) == 1
    two.dispose()
    assert subject.observers == []  # the last to leave unsubscribes upstream


def test_share_after_the_end_gives_only_the_end_as_rxpy_does() -> None:
    # bug class: a late subscriber that silently re-reads (or never ends)
    shared = llm_rx.from_file(capture("openai/chat-text-basic.sse").path).pipe(lxo.share())
    first = shared.pipe(ops.to_list()).run()
    late: list[Any] = []
    shared.subscribe(late.append, late.append, lambda: late.append("completed"))
    assert first
    assert late == ["completed"]


def test_share_isolates_a_failing_subscriber() -> None:
    # bug class: one consumer's exception reaching the others (RxPY's Subject raises it
    # into the upstream)
    subject: Subject[Event] = Subject()
    shared = subject.pipe(lxo.share())
    errors: list[Exception] = []
    kept: list[Event] = []

    def fail(_: Event) -> None:
        raise RuntimeError("consumer bug")

    shared.subscribe(fail, errors.append)
    shared.subscribe(kept.append)
    subject.on_next(MessageStart("openai-chat"))
    subject.on_next(TextDelta(0, "hi"))
    assert [type(error) for error in errors] == [RuntimeError]
    assert kept == [MessageStart("openai-chat"), TextDelta(0, "hi")]
