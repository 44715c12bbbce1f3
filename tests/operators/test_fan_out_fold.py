"""fan_out(): the live displays and to_response() behind it fold the reply once, together.

Each still materialises its own response from the shared builder; the outcome (frames, final
snapshot, response, errors) is the one a display and a ``to_response()`` behind a hop give,
each on its own builder; and it is the same a read at a time (after a source) and an event at
a time (after any other observable).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from reactivex import Observable, abc
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.testing import TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import BlockStart, Event, MessageStart, MessageStop, TextDelta
from llm_rx.fold.builder import ResponseBuilder, Snapshot
from llm_rx.operators._fold import SharedFold
from llm_rx.response import Response
from llm_rx.sinks._live import live
from llm_rx.sources import EventSource
from llm_rx.sources._source import Reading

from ..captures import CAPTURES, capture
from ..wire.test_fast_paths import Case, mutated

AT = datetime(2026, 11, 1, tzinfo=UTC)


class Vandal:
    """A view that records each frame's response as it gets it, then empties every container
    of that response it can reach (what a careless view could do to what it is shown)."""

    def __init__(self) -> None:
        self.frames: list[tuple[str, Any, tuple[str, ...]]] = []

    def update(self, snapshot: Snapshot) -> None:
        self._seen("update", snapshot)

    def close(self, snapshot: Snapshot) -> None:
        self._seen("close", snapshot)

    def _seen(self, kind: str, snapshot: Snapshot) -> None:
        response = snapshot.response
        self.frames.append((kind, response.model_dump(mode="json"), snapshot.notes))
        choices: list[Any] = [response, *response.choices]
        for choice in choices:
            for block in choice.content:
                if isinstance(getattr(block, "meta", None), dict):
                    block.meta.clear()
                if isinstance(getattr(block, "citations", None), list):
                    block.citations.clear()
            choice.content.clear()
            if choice.logprobs is not None:
                choice.logprobs.clear()
        response.choices.clear()
        response.extra.clear()
        response.choice_extra.clear()


def _handed_out(values: list[Any]) -> Callable[[Observable[Any]], Observable[Any]]:
    """to_response() (right behind the hub), keeping what its response was when emitted."""

    def keep(response: Response) -> None:
        values.append(response.model_dump(mode="json"))

    def branch(source: Observable[Event]) -> Observable[Any]:
        return source.pipe(lxo.to_response(), ops.do_action(keep))

    return branch


def _observed(source: Callable[[Callable[[], None]], Observable[Event]]) -> dict[str, Any]:
    """Two displays (one right behind the hub, one behind a hop), the reassembly before and
    after them, a cost; frames rendered between reads. Everything each one saw and gave."""
    scheduler = TestScheduler()
    first, second = Vandal(), Vandal()
    emitted: list[Any] = []
    out: list[Any] = []
    source(lambda: scheduler.advance_by(1.0)).pipe(lxo.fan_out(
        _handed_out(emitted),
        live(lambda: first, scheduler=scheduler),
        lxo.cost(at=AT),
        lambda o: o.pipe(ops.map(lambda event: event), live(lambda: second, scheduler=scheduler),
                         lxo.to_response()),
        lxo.to_response(),
    )).subscribe(out.append, lambda e: out.append((type(e), str(e))))
    values = out[0]
    return {
        "responses": [value.model_dump(mode="json") if value is not None else None
                      for value in (values[0], values[3], values[4])],
        "emitted": emitted,  # (what the first response was when it was handed out)
        "cost": values[2],
        "error": out[1:],
        "first": first.frames,
        "second": second.frames,
    }


def _each_event(
    source: Callable[[Callable[[], None]], Observable[Event]],
) -> Callable[[Callable[[], None]], Observable[Event]]:
    """The same events, through an observable that is no source: an event at a time."""
    return lambda between: source(between).pipe(ops.map(lambda event: event))


def _alone(seen: dict[str, Any]) -> None:
    """What the folds right behind the hub (one builder) gave is what the display and the
    reassembly behind a hop (each its own builder) gave."""
    assert seen["first"] == seen["second"]
    shared, hopped, last = seen["responses"]
    assert shared == last
    if seen["error"] == []:  # (else the reassembly behind the display gets its error)
        assert shared == hopped


def _from_reads(chunks: list[bytes], provider: str) -> Callable[[Callable[[], None]], Any]:
    def source(between: Callable[[], None]) -> Observable[Event]:
        def reads() -> Iterator[bytes]:
            for chunk in chunks:
                yield chunk
                between()  # (a frame is due: rendered now, between two reads)

        return llm_rx.from_bytes(reads(), provider)  # type: ignore[arg-type]

    return source


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_fan_out_shared_fold_gives_what_separate_folds_give(case: Case) -> None:
    # bug class: the display and the reassembly sharing a builder see different events than
    # each would alone (a read fed twice, or missed), or one changes what the other got; or
    # the shared fold stepped a read at a time gives what it gives an event at a time
    reads = _observed(_from_reads(case.chunks, case.provider))
    events = _observed(_each_event(_from_reads(case.chunks, case.provider)))
    assert reads == events
    _alone(reads)
    first = reads["responses"][0]
    if first is not None:
        assert reads["emitted"] == [first]  # (not changed after it was handed out)


@pytest.mark.parametrize("name", [c.name for c in CAPTURES][::7])
def test_fan_out_response_is_the_reassembly_whatever_the_display_does(name: str) -> None:
    # bug class: a view that changes the response it is shown changing the reassembly's
    data, provider = capture(name).data, capture(name).provider
    got = _observed(_from_reads([data[n:n + 512] for n in range(0, len(data), 512)], provider))
    try:
        expected = llm_rx.reassemble(data).model_dump(mode="json")
    except llm_rx.errors.LlmRxError:
        return  # (a capture of an error before any reply: nothing to reassemble)
    assert got["responses"][0] == expected
    assert got["responses"][2] == expected
    assert got["first"][-1][1] == expected  # (the display's last frame: the same reply)


class Reads(EventSource):
    """Hands ``reads`` (lists of events) over one by one, ``between`` after each, then the end."""

    def __init__(self, reads: list[list[Any]], between: Callable[[], None]) -> None:
        super().__init__()
        self._reads = reads
        self._between = between

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        for events in self._reads:
            if reading.stopped():
                break
            reading.emit(list(events))
            self._between()
        reading.end(None)
        return Disposable()


READS: list[list[Any]] = [
    [MessageStart("openai-chat", "m", "r1"), BlockStart(0, "text")],
    [TextDelta(0, "Hello"), TextDelta(0, ", ")],
    [TextDelta(0, "world"), "not an event", TextDelta(0, "!")],
    [TextDelta(0, "lost"), MessageStop("end_turn")],
]


def test_fan_out_a_malformed_event_ends_the_display_and_reassembly_as_on_their_own() -> None:
    # bug class: the shared builder's failure reported to one of its readers only, or at
    # another read; or the events after it fed to the other
    reads = _observed(lambda between: Reads(READS, between))
    events = _observed(_each_event(lambda between: Reads(READS, between)))
    assert reads == events
    _alone(reads)
    response = reads["responses"][0]
    assert response["stop_reason"] == "error"
    assert response["content"][0]["text"] == "Hello, world"
    assert reads["first"][-1][1]["content"][0]["text"] == "Hello, world"


def test_fan_out_folds_once_for_its_displays_and_reassembly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bug class: the shared fold not taken (each folds on its own), after a source or after
    # any other observable
    made: list[ResponseBuilder] = []
    original = ResponseBuilder.__init__

    def counted(self: ResponseBuilder, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ResponseBuilder, "__init__", counted)
    data = capture("anthropic/thinking-signature.sse").data
    scheduler = TestScheduler()

    def run(source: Observable[Event]) -> Any:
        made.clear()
        return source.pipe(lxo.fan_out(
            live(Vandal, scheduler=scheduler), lxo.to_response(), lxo.to_response(),
        )).run()

    fed: list[int] = []
    feed_shared = SharedFold.feed_shared

    def read(self: SharedFold, events: list[Event], kinds: Any) -> None:
        fed.append(len(events))
        feed_shared(self, events, kinds)

    monkeypatch.setattr(SharedFold, "feed_shared", read)
    reads = run(llm_rx.from_bytes(data))
    assert len(made) == 1
    assert max(fed) > 1  # (a read at a time)
    fed.clear()
    events = run(llm_rx.from_bytes(data).pipe(ops.map(lambda event: event)))
    assert len(made) == 1
    assert set(fed) == {1}  # (an event at a time)
    assert reads[1] == events[1] == reads[2] == llm_rx.reassemble(data)
