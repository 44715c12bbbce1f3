"""``trace()``: record a reply as an OpenTelemetry span, passing every event through.

Attribute names follow the OpenTelemetry GenAI semantic conventions. ``opentelemetry-api``
(the ``otel`` extra) is imported when ``trace()`` is called, never by importing llm-rx.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

from reactivex import Observable, abc
from reactivex.scheduler import TimeoutScheduler

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


class _Recorder(Fold[Event]):
    """One subscription's span and what the reply's events said so far: a tap, whose
    values are the events it looked at."""

    def __init__(self, span: Any, clock: abc.SchedulerBase, kinds: Kinds) -> None:
        self.span = span
        self.kinds = kinds  # (a read's event types: a fan_out's hub finds them once a read)
        self.clock = clock
        self.started = clock.now
        self.first: datetime | None = None
        self.usage = Usage()
        self.finishes: dict[int, str] = {}  # choice -> its finish reason
        self.stop: str | None = None
        self.ended = False
        self.watched = _BEFORE

    def step(self, events: list[Event]) -> tuple[list[Event], Exception | None]:
        if self.watched.isdisjoint(self.kinds(events)):  # (the usual read: deltas only)
            return events, None
        for event in events:
            cls = event.__class__
            if cls not in self.watched:
                continue
            if cls is UsageUpdate:
                self.usage = self.usage.overlay(event.usage)  # type: ignore[union-attr]
            elif self.first is None and isinstance(event, _CONTENT):
                self.first = self.clock.now
                self.watched = _AFTER
                self.span.add_event("gen_ai.first_token", timestamp=_nanos(self.first))
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
        if event.model is not None:
            self.span.set_attribute("gen_ai.response.model", event.model)
            self.span.update_name(f"chat {event.model}")  # ("{operation} {model}")
        if event.id is not None:
            self.span.set_attribute("gen_ai.response.id", event.id)

    def cancel(self) -> None:
        """The consumer disposed: its own choice, not a failure (the status stays unset)."""
        self.span.set_attribute("llm_rx.cancelled", True)
        self.close(None)

    def end(self, error: Exception | None) -> tuple[list[Event], Exception | None]:
        """End with how the events ended; the error to pass on."""
        if error is None:
            self.close(None)
        else:
            self.close(type(error).__name__, str(error))
        return [], error

    def close(self, error: str | None, description: str | None = None) -> None:
        """End the span (once): usage, finish reasons, and the error type when it failed."""
        if self.ended:
            return
        self.ended = True
        span = self.span
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
        span.end(end_time=_nanos(self.clock.now))


def _reason(native: Any, stop_reason: str) -> str:
    """The provider's own finish value when it is a string, else the canonical one."""
    return native if isinstance(native, str) else stop_reason


def trace(tracer: Any = None) -> Callable[[Observable[Event]], Observable[Event]]:
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
    the subscription's scheduler. With no tracer provider configured the span does not
    record, and the events go straight through: no work per event.

    Args:
        tracer: An OpenTelemetry ``Tracer``; ``None``: the global tracer provider's.

    Returns:
        An operator for ``.pipe()``.
    """
    otel = importlib.import_module("opentelemetry.trace")  # (the ``otel`` extra)
    kind = otel.SpanKind.CLIENT

    def recorder_for(source: Observable[Any], scheduler: abc.SchedulerBase | None) -> Fold[Event]:
        """A span for a subscription (the events go straight through, when it would not
        record)."""
        clock = scheduler or TimeoutScheduler.singleton()
        spans = tracer if tracer is not None else otel.get_tracer("llm_rx")
        span = spans.start_span(
            "chat", kind=kind, start_time=_nanos(clock.now),
            attributes={"gen_ai.operation.name": "chat"},
        )
        if not span.is_recording():
            span.end()
            return _THROUGH
        return _Recorder(span, clock, read_kinds(source))

    return folded(recorder_for)


class _Through(Fold[Event]):
    """A tap that does not look: each read goes on as it is."""

    def step(self, events: list[Event]) -> tuple[list[Event], Exception | None]:
        return events, None


_THROUGH = _Through()
