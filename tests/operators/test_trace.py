"""trace(): a reply as an OpenTelemetry span (GenAI semantic conventions), checked with the
SDK's in-memory exporter; timings in virtual time."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracerProvider, StatusCode
from reactivex import Observable
from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import Event, MessageStart, TextDelta, UsageUpdate
from llm_rx.response import Usage

from ..captures import capture
from ..helpers import kinds, reads_of
from ..sinks.timeline import cold_timeline, events_of


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def _tracer(exporter: InMemorySpanExporter) -> Any:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("tests")


def _traced(
    name: str, exporter: InMemorySpanExporter, per_event: bool = False
) -> tuple[list[Any], ReadableSpan]:
    """The events trace() passed on, and its span: right after the source (a read at a time)
    or after an observable that is no source (an event at a time)."""
    out: list[Any] = []
    source: Observable[Event] = llm_rx.from_file(capture(name).path)
    if per_event:
        source = source.pipe(ops.map(lambda event: event))
    source.pipe(lxo.trace(_tracer(exporter))).subscribe(out.append, out.append)
    (span,) = exporter.get_finished_spans()
    return out, span


# capture -> the attributes its span must carry (the wire's own values)
EXPECTED: dict[str, dict[str, Any]] = {
    "anthropic/thinking-signature.sse": {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
        "gen_ai.system": "anthropic", "gen_ai.response.model": "claude-sonnet-4-20250514",
        "gen_ai.response.finish_reasons": ("end_turn",), "gen_ai.usage.input_tokens": 43,
        "gen_ai.usage.output_tokens": 282, "gen_ai.usage.cache_read.input_tokens": 0,
        "gen_ai.usage.cache_creation.input_tokens": 0,
    },
    "openai/chat-text-basic.sse": {
        "gen_ai.provider.name": "openai", "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.response.finish_reasons": ("stop",), "gen_ai.usage.input_tokens": 14,
        "gen_ai.usage.output_tokens": 30, "gen_ai.usage.reasoning.output_tokens": 0,
    },
    "openai/responses-code-interpreter-reasoning.sse": {
        "gen_ai.provider.name": "openai", "gen_ai.usage.cache_read.input_tokens": 3200,
        "gen_ai.usage.reasoning.output_tokens": 128, "gen_ai.usage.input_tokens": 3727,
    },
    "gemini/sse-thought-parts.sse": {
        "gen_ai.provider.name": "gcp.gemini", "gen_ai.response.model": "gemini-2.5-pro",
        "gen_ai.response.finish_reasons": ("STOP",), "gen_ai.usage.output_tokens": 1256,
        "gen_ai.usage.reasoning.output_tokens": 787,
    },
    "gemini-interactions/function-call-requires-action.sse": {
        "gen_ai.provider.name": "gcp.gemini", "gen_ai.response.model": "gemini-2.5-flash",
        "gen_ai.response.finish_reasons": ("requires_action",),
        "gen_ai.usage.input_tokens": 53, "gen_ai.usage.output_tokens": 80,
        "gen_ai.usage.reasoning.output_tokens": 65,
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_trace_span_attributes_follow_the_genai_conventions(
    name: str, exporter: InMemorySpanExporter
) -> None:
    # bug class: a wrong or made-up attribute name, the requested model instead of the
    # served one, usage counts that were not reported written as 0
    events, span = _traced(name, exporter)
    attributes = dict(span.attributes or {})
    for key, value in EXPECTED[name].items():
        assert attributes[key] == value, key
    response = llm_rx.reassemble(capture(name).path)
    assert attributes["gen_ai.response.id"] == response.id
    for field, key in (("cache_read_tokens", "gen_ai.usage.cache_read.input_tokens"),
                       ("cache_write_tokens", "gen_ai.usage.cache_creation.input_tokens")):
        assert (key in attributes) == (getattr(response.usage, field) is not None)
    assert span.status.status_code is StatusCode.UNSET
    assert "error.type" not in attributes
    # every event passed through unchanged
    assert kinds(events) == kinds(events_of(capture(name).path))


def test_trace_error_reply_records_the_error_type(exporter: InMemorySpanExporter) -> None:
    # bug class: a failed reply's span that reads as a success
    out, span = _traced("anthropic/error-overloaded-midstream.synthetic.sse", exporter)
    assert isinstance(out[-1], llm_rx.errors.ProviderError)
    assert span.attributes is not None
    assert span.attributes["error.type"] == "ProviderError"
    assert span.status.status_code is StatusCode.ERROR


def test_trace_cut_stream_is_an_incomplete_error(exporter: InMemorySpanExporter) -> None:
    data = capture("openai/chat-text-basic.sse").data
    out: list[Any] = []
    llm_rx.from_bytes(data[: len(data) // 2], provider="openai-chat").pipe(
        lxo.trace(_tracer(exporter))).subscribe(out.append, out.append)
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["error.type"] == "IncompleteStreamError"
    assert "gen_ai.response.finish_reasons" not in span.attributes


def test_trace_dispose_ends_the_span_marked_cancelled(exporter: InMemorySpanExporter) -> None:
    # bug class: a span left open forever when the reader stops; then: the consumer's own
    # dispose recorded as an ERROR
    subject: Subject[Event] = Subject()
    subscription = subject.pipe(lxo.trace(_tracer(exporter))).subscribe(lambda _: None)
    subject.on_next(MessageStart("openai-chat", "gpt-4o"))
    assert exporter.get_finished_spans() == ()
    subscription.dispose()
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["llm_rx.cancelled"] is True
    assert "error.type" not in span.attributes
    assert span.status.status_code is StatusCode.UNSET
    subject.on_completed()
    assert len(exporter.get_finished_spans()) == 1  # ended once


def test_trace_times_in_virtual_time(exporter: InMemorySpanExporter) -> None:
    # bug class: time to first token measured from the first event (not the subscription),
    # or from a wall clock in a test that runs in virtual time
    scheduler = TestScheduler()
    events = events_of(capture("anthropic/text-basic.sse").path)
    first = next(n for n, event in enumerate(events) if isinstance(event, TextDelta))
    source = cold_timeline(scheduler, events, start=3, step=2)
    scheduler.start(lambda: source.pipe(lxo.trace(_tracer(exporter))), created=0,
                    subscribed=100, disposed=10_000)
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["gen_ai.response.time_to_first_chunk"] == 3 + 2 * first
    assert span.start_time == 100 * 1_000_000_000
    assert span.end_time == (100 + 3 + 2 * len(events)) * 1_000_000_000
    (event,) = span.events
    assert event.name == "gen_ai.first_token"
    assert event.timestamp == (100 + 3 + 2 * first) * 1_000_000_000


def test_trace_is_the_same_a_read_and_an_event_at_a_time(
    exporter: InMemorySpanExporter,
) -> None:
    name = "openai/responses-code-interpreter-reasoning.sse"
    per_read, span = _traced(name, exporter)
    exporter.clear()
    per_event, general = _traced(name, exporter, per_event=True)
    assert kinds(per_read) == kinds(per_event) == kinds(events_of(capture(name).path))
    ttft = "gen_ai.response.time_to_first_chunk"  # (a wall clock here: differs run to run)
    assert {k: v for k, v in (general.attributes or {}).items() if k != ttft} == {
        k: v for k, v in (span.attributes or {}).items() if k != ttft}


def test_trace_without_a_recording_tracer_passes_the_events_through() -> None:
    # bug class: a tap that costs work per event when tracing is not configured
    source = llm_rx.from_file(capture("openai/chat-text-basic.sse").path)
    traced = source.pipe(lxo.trace(NoOpTracerProvider().get_tracer("x")), ops.to_list()).run()
    assert kinds(traced) == kinds(events_of(capture("openai/chat-text-basic.sse").path))


@pytest.mark.parametrize("name", ["anthropic/thinking-signature.sse",
                                  "ollama/chat-gemma3-text.ndjson", "gemini/sse-thought-parts.sse"])
def test_trace_and_cost_behind_fan_out_look_at_each_read_once(
    name: str, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bug class: the hub's event types of a read handed to a reading of another read (a span
    # or a price missing a usage), or found again by every operator behind the hub
    from llm_rx.operators import _hub

    found: list[int] = []
    original = _hub.Hub.kinds

    def counted(self: _hub.Hub, events: list[Event]) -> frozenset[type[Event]]:
        read = self._kinds[0]
        kinds = original(self, events)
        found.append(read is not events)
        return kinds

    monkeypatch.setattr(_hub.Hub, "kinds", counted)

    def run(per_event: bool = False) -> tuple[Any, Any, dict[str, Any]]:
        exporter.clear()
        source: Observable[Event] = llm_rx.from_bytes(reads_of(capture(name).data, 512))
        if per_event:  # (behind an observable that is no source: an event at a time)
            source = source.pipe(ops.map(lambda event: event))
        response, cost, _ = source.pipe(lxo.fan_out(
            lxo.to_response(), lxo.cost(), lxo.trace(_tracer(exporter)))).run()
        (span,) = exporter.get_finished_spans()
        ttft = "gen_ai.response.time_to_first_chunk"
        return response, cost, {k: v for k, v in (span.attributes or {}).items() if k != ttft}

    fused = run()
    assert found
    assert sum(found) < len(found) / 2  # (once a read, for three operators)
    general = run(per_event=True)
    assert fused[0] == general[0]
    assert fused[1].model_dump(exclude={"priced_at"}) == general[1].model_dump(
        exclude={"priced_at"})
    assert fused[2] == general[2]
    assert "gen_ai.usage.output_tokens" in fused[2]


def test_trace_names_the_span_operation_and_model(exporter: InMemorySpanExporter) -> None:
    _, span = _traced("anthropic/thinking-signature.sse", exporter)
    assert span.name == "chat claude-sonnet-4-20250514"


def test_trace_dispose_records_the_usage_seen_so_far(exporter: InMemorySpanExporter) -> None:
    subject: Subject[Event] = Subject()
    subscription = subject.pipe(lxo.trace(_tracer(exporter))).subscribe(lambda _: None)
    subject.on_next(MessageStart("anthropic", "claude"))
    subject.on_next(UsageUpdate(Usage(input_tokens=12, output_tokens=3)))
    subscription.dispose()
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["gen_ai.usage.input_tokens"] == 12
    assert span.attributes["gen_ai.usage.output_tokens"] == 3
