"""Taps after a source stay a source: a display or trace() after an EventSource is an
EventSource, and a read goes through all of them in the source's loop; after any other
observable the same taps take an event at a time, and give the same."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from reactivex import Observable
from reactivex import operators as ops
from reactivex.scheduler import CurrentThreadScheduler, HistoricalScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import Event
from llm_rx.fold.builder import Snapshot
from llm_rx.sinks import live
from llm_rx.sources import EventSource

from ..captures import capture
from ..helpers import kinds
from ..sinks.timeline import events_of

NAME = "anthropic/thinking-signature.sse"


class Frames:
    def __init__(self) -> None:
        self.closed: list[Snapshot] = []

    def update(self, snapshot: Snapshot) -> None:
        pass

    def close(self, snapshot: Snapshot) -> None:
        self.closed.append(snapshot)


class Failing(Frames):
    def close(self, snapshot: Snapshot) -> None:
        raise RuntimeError("the view broke")


def _tracer() -> tuple[Any, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("tests"), exporter


def _reads(name: str) -> list[bytes]:
    data = capture(name).data
    return [data[n:n + 512] for n in range(0, len(data), 512)]


def _source(per_event: bool) -> Observable[Event]:
    """The capture's events: right from the source (a read at a time), or behind an
    operator that is no source (an event at a time)."""
    source = llm_rx.from_bytes(_reads(NAME))
    return source.pipe(ops.map(lambda event: event)) if per_event else source


def test_tap_after_a_source_is_a_source_again() -> None:
    # bug class: a tap that makes everything after it take one observer hop per event
    tracer, _ = _tracer()
    source = llm_rx.from_file(capture(NAME).path)
    assert isinstance(lxo.trace(tracer)(source), EventSource)
    assert isinstance(live(Frames, scheduler=HistoricalScheduler())(source), EventSource)


@pytest.mark.parametrize("per_event", [False, True])
def test_tap_pipeline_passes_every_read_on_unchanged(per_event: bool) -> None:
    tracer, exporter = _tracer()
    view = Frames()
    response = _source(per_event).pipe(
        live(lambda: view, scheduler=HistoricalScheduler()), lxo.trace(tracer),
        lxo.to_response()).run()
    events = _source(per_event).pipe(
        live(Frames, scheduler=HistoricalScheduler()), lxo.trace(tracer),
        ops.to_list()).run()
    assert response == llm_rx.reassemble(capture(NAME).path)
    assert kinds(events) == kinds(events_of(capture(NAME).path))
    assert view.closed[-1].response == response
    spans = exporter.get_finished_spans()
    assert len(spans) == 2
    assert all("error.type" not in (span.attributes or {}) for span in spans)


@pytest.mark.parametrize("per_event", [False, True])
def test_tap_reader_that_stops_early_cancels_the_taps(per_event: bool) -> None:
    # bug class: a tap that never hears its reader left (span open, display live)
    tracer, exporter = _tracer()
    view = Frames()
    _source(per_event).pipe(
        live(lambda: view, scheduler=HistoricalScheduler()), lxo.trace(tracer), ops.take(3)
    ).run(scheduler=CurrentThreadScheduler.singleton())  # (read, taken and disposed, in here)
    (span,) = exporter.get_finished_spans()
    assert (span.attributes or {})["llm_rx.cancelled"] is True  # (the reader's choice)
    (final,) = view.closed
    error = final.response.error
    assert error is not None
    assert error.kind == "cancelled"


@pytest.mark.parametrize("per_event", [False, True])
def test_tap_view_that_fails_at_the_end_fails_the_stream(per_event: bool) -> None:
    # bug class: a display's failure swallowed a read (or an event) at a time
    with pytest.raises(RuntimeError, match="the view broke"):
        _source(per_event).pipe(live(Failing, scheduler=HistoricalScheduler()),
                                ops.to_list()).run()
