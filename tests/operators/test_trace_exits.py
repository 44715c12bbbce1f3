"""trace() on every way a reply ends: one span each (never none, never two), with the usage
so far and the reason it ended; and the GenAI client metrics, read back with the
OpenTelemetry SDK's in-memory reader (timings in virtual time)."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

import pytest
import reactivex
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import (
    Event,
    MessageStart,
    RefusalDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from llm_rx.response import Usage

from ..captures import capture
from ..sinks.timeline import cold_timeline, events_of

TEXT = "anthropic/text-basic.sse"


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def _tracer(exporter: InMemorySpanExporter) -> Any:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("tests")


def _one(exporter: InMemorySpanExporter) -> dict[str, Any]:
    spans: tuple[ReadableSpan, ...] = exporter.get_finished_spans()
    assert len(spans) == 1, spans
    return dict(spans[0].attributes or {})


def test_trace_exit_complete(exporter: InMemorySpanExporter) -> None:
    llm_rx.from_file(capture(TEXT).path).pipe(lxo.trace(_tracer(exporter))).run()
    assert _one(exporter)["llm_rx.end_reason"] == "complete"


def test_trace_exit_error(exporter: InMemorySpanExporter) -> None:
    source = llm_rx.from_file(capture("anthropic/error-overloaded-midstream.synthetic.sse").path)
    source.pipe(lxo.trace(_tracer(exporter))).subscribe(on_error=lambda _: None)
    attributes = _one(exporter)
    assert (attributes["llm_rx.end_reason"], attributes["error.type"]) == (
        "error", "ProviderError")


def test_trace_exit_cut_keeps_the_usage_so_far(exporter: InMemorySpanExporter) -> None:
    data = capture("anthropic/thinking-signature.sse").data
    llm_rx.from_bytes(data[: len(data) * 3 // 4], "anthropic").pipe(
        lxo.trace(_tracer(exporter))).subscribe(on_error=lambda _: None)
    attributes = _one(exporter)
    assert attributes["llm_rx.end_reason"] == "cut"
    assert attributes["error.type"] == "IncompleteStreamError"
    assert attributes["gen_ai.usage.input_tokens"] == 43  # (from message_start)


def test_trace_exit_stopped_is_no_failure(exporter: InMemorySpanExporter) -> None:
    stop: Subject[Any] = Subject()

    def press(event: Event) -> None:
        if type(event) is TextDelta:
            stop.on_next(True)

    llm_rx.from_file(capture(TEXT).path).pipe(
        ops.do_action(press), lxo.stop_on(stop), lxo.trace(_tracer(exporter)),
    ).subscribe(on_error=lambda _: None)
    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert attributes["llm_rx.end_reason"] == "stopped"
    assert attributes["llm_rx.cancelled"] is True
    assert "error.type" not in attributes
    assert span.status.status_code is StatusCode.UNSET


def test_trace_exit_disposed_then_nothing_more(exporter: InMemorySpanExporter) -> None:
    subject: Subject[Event] = Subject()
    subscription = subject.pipe(lxo.trace(_tracer(exporter))).subscribe(lambda _: None)
    subject.on_next(MessageStart("openai-chat", "gpt-4o"))
    subscription.dispose()
    subject.on_next(UsageUpdate(Usage(input_tokens=1)))
    subject.on_completed()
    assert _one(exporter)["llm_rx.end_reason"] == "disposed"


def test_trace_exit_break_out_of_to_aiter(exporter: InMemorySpanExporter) -> None:
    data = capture(TEXT).data
    head = data[: data.index(b"event: content_block_stop")]

    async def chunks(never: asyncio.Event) -> Any:
        yield head  # (then a reply that goes on for ever: only the break ends it)
        await never.wait()

    async def main() -> None:
        events = llm_rx.from_async_bytes(chunks(asyncio.Event()), "anthropic").pipe(
            lxo.trace(_tracer(exporter)))
        async for event in llm_rx.to_aiter(events):
            if type(event) is TextDelta:
                break
        for _ in range(100):  # (the generator's close runs as the loop goes on: no timer)
            if exporter.get_finished_spans():
                break
            await asyncio.sleep(0)

    asyncio.run(main())
    assert _one(exporter)["llm_rx.end_reason"] == "disposed"


def test_trace_exit_a_dropped_subscription_garbage_collected(
    exporter: InMemorySpanExporter,
) -> None:
    with warnings.catch_warnings():  # (what earlier tests left to the collector is theirs)
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    subject: Subject[Event] = Subject()
    subject.pipe(lxo.trace(_tracer(exporter))).subscribe(lambda _: None)
    subject.on_next(MessageStart("anthropic", "claude"))
    subject.on_next(UsageUpdate(Usage(input_tokens=7)))
    assert exporter.get_finished_spans() == ()
    del subject
    gc.collect()
    attributes = _one(exporter)
    assert attributes["llm_rx.end_reason"] == "collected"
    assert attributes["gen_ai.usage.input_tokens"] == 7


def _metrics(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    found: dict[str, list[Any]] = {}
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found[metric.name] = list(metric.data.data_points)
    return found


def test_trace_metrics_in_virtual_time() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("tests")
    scheduler = TestScheduler()
    name = "anthropic/thinking-signature.sse"
    events = events_of(capture(name).path)
    output = [n for n, event in enumerate(events)
              if isinstance(event, (TextDelta, ThinkingDelta, ToolArgsDelta, RefusalDelta))]
    first = output[0]
    source = cold_timeline(scheduler, events, start=3, step=2)
    scheduler.start(lambda: source.pipe(lxo.trace(_tracer(InMemorySpanExporter()),
                                                  meter=meter)),
                    created=0, subscribed=100, disposed=10_000)
    found = _metrics(reader)
    (duration,) = found["gen_ai.client.operation.duration"]
    assert duration.sum == 3 + 2 * len(events)
    assert duration.attributes["gen_ai.provider.name"] == "anthropic"
    assert duration.attributes["gen_ai.operation.name"] == "chat"
    (ttfc,) = found["gen_ai.client.operation.time_to_first_chunk"]
    assert ttfc.sum == 3 + 2 * first
    (per_chunk,) = found["gen_ai.client.operation.time_per_output_chunk"]
    assert per_chunk.count == len(output) - 1
    assert per_chunk.sum == 2 * (output[-1] - output[0])
    tokens = {p.attributes["gen_ai.token.type"]: p.sum
              for p in found["gen_ai.client.token.usage"]}
    response = llm_rx.reassemble(capture(name).path)
    assert tokens == {"input": response.usage.input_tokens,
                      "output": response.usage.output_tokens}


def test_trace_metrics_of_a_cut_reply_carry_the_error_type() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("tests")
    data = capture(TEXT).data
    llm_rx.from_bytes(data[: len(data) // 2], "anthropic").pipe(
        lxo.trace(_tracer(InMemorySpanExporter()), meter=meter)).subscribe(
        on_error=lambda _: None)
    (duration,) = _metrics(reader)["gen_ai.client.operation.duration"]
    assert duration.attributes["error.type"] == "IncompleteStreamError"


def test_trace_metrics_only_with_no_tracer_still_recorded() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("tests")
    from opentelemetry.trace import NoOpTracerProvider

    reactivex.from_iterable(events_of(capture(TEXT).path)).pipe(
        lxo.trace(NoOpTracerProvider().get_tracer("x"), meter=meter)).run()
    assert "gen_ai.client.operation.duration" in _metrics(reader)
