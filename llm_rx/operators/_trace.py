"""``trace()``: record a reply as an OpenTelemetry span and the GenAI client metrics,
passing every event through.

Attribute and metric names follow the OpenTelemetry GenAI semantic conventions.
``opentelemetry-api`` (the ``otel`` extra) is imported when ``trace()`` is called, never by
importing llm-rx. Every way a reply ends ends its span once: the end, an error, a cut, a
stop, a dispose, and a subscription nobody disposed that is garbage collected
(``llm_rx.end_reason`` says which).
"""

from __future__ import annotations

import importlib
import weakref
from collections.abc import Callable
from datetime import datetime
from typing import Any

from reactivex import Observable, abc
from reactivex.scheduler import TimeoutScheduler

from ..errors import CancelledStreamError, IncompleteStreamError
from ..events import (
    ChoiceEnd,
    Event,
    MessageStart,
    MessageStop,
    RefusalDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ..native.observability import semconv_provider
from ..response import Usage
from ._adapter import Fold, folded
from ._hub import Kinds, read_kinds

__all__ = ["trace"]

_CONTENT = (TextDelta, ThinkingDelta, RefusalDelta, ToolArgsDelta)
#: What a span reads, before and after the first content delta (a read with none of these
#: is passed on without a look at each event).
_BEFORE: frozenset[type[Any]] = frozenset(
    {*_CONTENT, UsageUpdate, MessageStart, ChoiceEnd, MessageStop})
_AFTER: frozenset[type[Any]] = _BEFORE - set(_CONTENT)
_USAGE = (
    ("input_tokens", "gen_ai.usage.input_tokens"),
    ("output_tokens", "gen_ai.usage.output_tokens"),
    ("cache_read_tokens", "gen_ai.usage.cache_read.input_tokens"),
    ("cache_write_tokens", "gen_ai.usage.cache_creation.input_tokens"),
    ("reasoning_tokens", "gen_ai.usage.reasoning.output_tokens"),
)


def _nanos(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


class _Instruments:
    """The GenAI client histograms of one ``trace()`` (``None``: no metrics are recorded)."""

    def __init__(self, meter: Any) -> None:
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration.")
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}",
            description="Number of input and output tokens used.")
        self.first = meter.create_histogram(
            "gen_ai.client.operation.time_to_first_chunk", unit="s",
            description="Time to receive the first chunk.")
        self.per_chunk = meter.create_histogram(
            "gen_ai.client.operation.time_per_output_chunk", unit="s",
            description="Time per output chunk, for each chunk after the first.")


def _ended(error: Exception | None) -> str:
    """How a reply ended, as ``llm_rx.end_reason`` says it."""
    if error is None:
        return "complete"
    if isinstance(error, CancelledStreamError):
        return "stopped"
    return "cut" if isinstance(error, IncompleteStreamError) else "error"


class _Span:
    """One subscription's span and what the reply's events said so far: a tap's fold
    (`_Recorder` calls it), whose values are the events it looked at."""

    def __init__(self, span: Any, clock: abc.SchedulerBase, kinds: Kinds,
                 instruments: _Instruments | None) -> None:
        self.span = span
        self.kinds = kinds  # (a read's event types: a fan_out's hub finds them once a read)
        self.clock = clock
        self.instruments = instruments
        self.started = clock.now
        self.first: datetime | None = None
        self.last: datetime | None = None  # (the last read with output: its moment)
        self.usage = Usage()
        self.finishes: dict[int, str] = {}  # choice -> its finish reason
        self.stop: str | None = None
        self.ended = False
        self.watched = _BEFORE
        self.metric_attributes: dict[str, Any] = {"gen_ai.operation.name": "chat"}

    def step(self, events: list[Event]) -> tuple[list[Event], Exception | None]:
        kinds = self.kinds(events)
        if self.last is not None and self.instruments is not None \
                and not kinds.isdisjoint(_CONTENT):  # (a chunk of output after the first)
            now = self.clock.now
            self.instruments.per_chunk.record(
                (now - self.last).total_seconds(), self.metric_attributes)
            self.last = now
        if self.watched.isdisjoint(kinds):  # (the usual read: deltas only)
            return events, None
        for event in events:
            cls = event.__class__
            if cls not in self.watched:
                continue
            if cls is UsageUpdate:
                self.usage = self.usage.overlay(event.usage)  # type: ignore[union-attr]
            elif self.first is None and isinstance(event, _CONTENT):
                self.first = self.last = self.clock.now
                self.watched = _AFTER
                self.span.add_event("gen_ai.first_token", timestamp=_nanos(self.first))
                if self.instruments is not None:
                    self.instruments.first.record(
                        (self.first - self.started).total_seconds(), self.metric_attributes)
            elif isinstance(event, MessageStart):
                self._start(event)
            elif isinstance(event, ChoiceEnd):
                self.finishes[event.choice] = _reason(event.native, event.stop_reason)
            elif isinstance(event, MessageStop):
                self.stop = _reason(event.native, event.stop_reason)
        return events, None

    def _start(self, event: MessageStart) -> None:
        name = semconv_provider(event.provider)
        self.span.set_attribute("gen_ai.provider.name", name)
        self.span.set_attribute("gen_ai.system", name)
        self.metric_attributes["gen_ai.provider.name"] = name
        if event.model is not None:
            self.span.set_attribute("gen_ai.response.model", event.model)
            self.metric_attributes["gen_ai.response.model"] = event.model
            self.span.update_name(f"chat {event.model}")  # ("{operation} {model}")
        if event.id is not None:
            self.span.set_attribute("gen_ai.response.id", event.id)

    def cancel(self) -> None:
        """The consumer disposed: its own choice, not a failure (the status stays unset)."""
        if not self.ended:
            self.span.set_attribute("llm_rx.cancelled", True)
        self.close(None, reason="disposed")

    def end(self, error: Exception | None) -> tuple[list[Event], Exception | None]:
        """End with how the events ended; the error to pass on. A user's stop
        (``stop_on``'s `CancelledStreamError`) is no failure: cancelled, the status unset."""
        if error is None:
            self.close(None)
        elif isinstance(error, CancelledStreamError):
            self.span.set_attribute("llm_rx.cancelled", True)
            self.close(None, reason="stopped")
        else:
            self.close(type(error).__name__, str(error), reason=_ended(error))
        return [], error

    def close(self, error: str | None, description: str | None = None, *,
              reason: str = "complete") -> None:
        """End the span (once): usage, finish reasons, how it ended, the error type when it
        failed; and record the metrics."""
        if self.ended:
            return
        self.ended = True
        span = self.span
        span.set_attribute("llm_rx.end_reason", reason)
        for name, key in _USAGE:
            if (value := getattr(self.usage, name)) is not None:
                span.set_attribute(key, value)
        reasons = [self.finishes[choice] for choice in sorted(self.finishes)]
        if not reasons and self.stop is not None:
            reasons = [self.stop]
        if reasons:
            span.set_attribute("gen_ai.response.finish_reasons", reasons)
        if self.first is not None:
            span.set_attribute(
                "gen_ai.response.time_to_first_chunk",
                (self.first - self.started).total_seconds(),
            )
        if error is not None:
            otel = importlib.import_module("opentelemetry.trace")
            span.set_attribute("error.type", error)
            span.set_status(otel.Status(otel.StatusCode.ERROR, description))
            self.metric_attributes["error.type"] = error
        now = self.clock.now
        span.end(end_time=_nanos(now))
        if self.instruments is not None:
            self._measured(now)

    def _measured(self, now: datetime) -> None:
        """The operation's duration and the tokens reported (none when none were)."""
        assert self.instruments is not None
        attributes = self.metric_attributes
        self.instruments.duration.record((now - self.started).total_seconds(), attributes)
        for kind, count in (("input", self.usage.input_tokens),
                            ("output", self.usage.output_tokens)):
            if count is not None:
                self.instruments.tokens.record(count, {**attributes, "gen_ai.token.type": kind})


class _Recorder(Fold[Event]):
    """The fold a subscription holds: each call goes to its span's `_Span`; when the fold
    is garbage collected before its span ended (a subscription nobody disposed, dropped),
    the span ends then (``llm_rx.end_reason``: ``collected``)."""

    def __init__(self, span: _Span) -> None:
        self._span = span
        weakref.finalize(self, span.close, None, reason="collected")

    def step(self, events: list[Event]) -> tuple[list[Event], Exception | None]:
        return self._span.step(events)

    def end(self, error: Exception | None) -> tuple[list[Event], Exception | None]:
        return self._span.end(error)

    def cancel(self) -> None:
        self._span.cancel()


def _reason(native: Any, stop_reason: str) -> str:
    """The provider's own finish value when it is a string, else the canonical one."""
    return native if isinstance(native, str) else stop_reason


def trace(tracer: Any = None, *, meter: Any = None
          ) -> Callable[[Observable[Event]], Observable[Event]]:
    """Pass every event through while recording the reply as a span of ``tracer`` (the
    global tracer provider's ``llm_rx`` tracer when ``None``).

    ```text
    events:   -S-b-t-t-e-U-M-|        events:  -S-b-t-#
    trace()                           trace()
    result:   -S-b-t-t-e-U-M-|        result:  -S-b-t-#
    span:     [--------------]        span:    [-----]   error.type = the error's class
    ```

    The span is named ``chat {model}`` (the GenAI semantic conventions' ``{operation}
    {model}``, with the served model once the reply names it; ``chat`` until then). It starts
    at subscription and ends at the end of the events, or at dispose (the consumer's own
    choice, not a failure: the status stays unset, ``llm_rx.cancelled`` is true, and the
    usage seen so far is recorded). Its times, and ``gen_ai.response.time_to_first_chunk``
    (seconds to the first content delta, also a ``gen_ai.first_token`` event), come from
    the subscription's scheduler.

    Every exit ends the span exactly once, with the usage seen so far and
    ``llm_rx.end_reason``: ``complete``; ``error`` or ``cut`` (``error.type`` the error's
    class, status ``ERROR``); ``stopped`` (a user's stop, `stop_on`: no failure, the status
    unset, ``llm_rx.cancelled`` true); ``disposed`` (a ``break`` out of ``to_aiter``, a
    dispose); ``collected`` (a subscription nobody disposed, garbage collected).

    The metrics of the GenAI conventions are recorded through ``meter`` (histograms, with
    ``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.response.model`` and, for
    a failed reply, ``error.type``): ``gen_ai.client.operation.duration`` at the end (any
    end), ``gen_ai.client.token.usage`` per reported input and output count (a count not
    reported is not recorded), ``gen_ai.client.operation.time_to_first_chunk`` at the first
    output, ``gen_ai.client.operation.time_per_output_chunk`` for each read with output after
    it (a live stream's read is one chunk). With neither a recording tracer nor a meter (no
    tracer or meter provider configured) the events go straight through: no work per event.

    Args:
        tracer: An OpenTelemetry ``Tracer``; ``None``: the global tracer provider's.
        meter: An OpenTelemetry ``Meter``; ``None``: the global meter provider's, when one
            is configured (else no metrics).

    Returns:
        An operator for ``.pipe()``.
    """
    otel = importlib.import_module("opentelemetry.trace")  # (the ``otel`` extra)
    kind = otel.SpanKind.CLIENT
    instruments = _instruments(meter)

    def recorder_for(source: Observable[Any], scheduler: abc.SchedulerBase | None) -> Fold[Event]:
        """A span for a subscription (the events go straight through, when it would not
        record)."""
        clock = scheduler or TimeoutScheduler.singleton()
        spans = tracer if tracer is not None else otel.get_tracer("llm_rx")
        span = spans.start_span(
            "chat", kind=kind, start_time=_nanos(clock.now),
            attributes={"gen_ai.operation.name": "chat"},
        )
        if not span.is_recording() and instruments is None:
            span.end()
            return _THROUGH
        return _Recorder(_Span(span, clock, read_kinds(source), instruments))

    return folded(recorder_for)


def _instruments(meter: Any) -> _Instruments | None:
    """The histograms of ``meter``, or of the global meter provider when one is configured
    (``None``: no metrics)."""
    if meter is None:
        metrics = importlib.import_module("opentelemetry.metrics")
        provider = metrics.get_meter_provider()
        if isinstance(provider, metrics.NoOpMeterProvider) or type(
                provider).__name__ == "_ProxyMeterProvider":  # (none configured)
            return None
        meter = provider.get_meter("llm_rx")
    return _Instruments(meter)


class _Through(Fold[Event]):
    """A tap that does not look: each read goes on as it is."""

    def step(self, events: list[Event]) -> tuple[list[Event], Exception | None]:
        return events, None


_THROUGH = _Through()
