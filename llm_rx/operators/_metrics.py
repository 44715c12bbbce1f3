"""``metrics()``: how a reply streamed — time to first token, gaps, stalls, throughput."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import reactivex
from pydantic import BaseModel, ConfigDict
from reactivex import Observable, abc
from reactivex.scheduler import TimeoutScheduler

from ..events import (
    Event,
    RefusalDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ..response import Usage

__all__ = ["StreamMetrics", "metrics"]

_CONTENT = (TextDelta, ThinkingDelta, RefusalDelta, ToolArgsDelta)


class StreamMetrics(BaseModel):
    """Timings of one reply, in seconds of the scheduler's clock.

    ``time_to_first_token``: from subscription to the first content delta (text, thinking,
    refusal or tool arguments); ``None`` if none came. ``max_gap`` / ``mean_gap``: between
    consecutive events after the first. ``stalls``: gaps longer than the ``stall_after``
    threshold. ``tokens_per_second``: reported output tokens over the time from the first
    content delta to the end (``None`` when usage was not reported: never estimated);
    ``deltas_per_second`` is the same over the number of content deltas.
    """

    model_config = ConfigDict(frozen=True)

    time_to_first_token: float | None
    duration: float
    events: int
    content_deltas: int
    max_gap: float | None
    mean_gap: float | None
    stalls: int
    output_tokens: int | None
    tokens_per_second: float | None
    deltas_per_second: float | None


def metrics(
    stall_after: float = 2.0,
) -> Callable[[Observable[Event]], Observable[StreamMetrics]]:
    """One [`StreamMetrics`][llm_rx.StreamMetrics] when the events end (also before an error
    is passed on).

    ```text
    events:   ----S--t-t------------t-U-M-|        (stall_after=5)
    metrics()
    result:   ----------------------------m|       m.stalls == 1
    ```

    Times come from the scheduler the subscription runs on (``TestScheduler`` in tests),
    so the operator is deterministic in virtual time.

    Args:
        stall_after: Seconds without a content delta that count as a stall.

    Returns:
        An operator for ``.pipe()``.
    """

    def operator(source: Observable[Event]) -> Observable[StreamMetrics]:
        def subscribe(
            observer: abc.ObserverBase[StreamMetrics], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            clock = scheduler or TimeoutScheduler.singleton()
            started = clock.now
            first: datetime | None = None
            last: datetime | None = None
            gaps: list[float] = []
            counts = [0, 0]  # events, content deltas
            usage = Usage()

            def on_next(event: Event) -> None:
                nonlocal first, last, usage
                now = clock.now
                if last is not None:
                    gaps.append((now - last).total_seconds())
                last = now
                counts[0] += 1
                if isinstance(event, _CONTENT):
                    counts[1] += 1
                    if first is None:
                        first = now
                elif isinstance(event, UsageUpdate):
                    usage = usage.overlay(event.usage)

            def result() -> StreamMetrics:
                end = clock.now
                streaming = (end - first).total_seconds() if first is not None else None
                tokens = usage.output_tokens
                return StreamMetrics(
                    time_to_first_token=(
                        (first - started).total_seconds() if first is not None else None
                    ),
                    duration=(end - started).total_seconds(),
                    events=counts[0],
                    content_deltas=counts[1],
                    max_gap=max(gaps) if gaps else None,
                    mean_gap=sum(gaps) / len(gaps) if gaps else None,
                    stalls=sum(1 for gap in gaps if gap > stall_after),
                    output_tokens=tokens,
                    tokens_per_second=(
                        tokens / streaming if tokens is not None and streaming else None
                    ),
                    deltas_per_second=counts[1] / streaming if streaming else None,
                )

            def on_error(error: Exception) -> None:
                observer.on_next(result())
                observer.on_error(error)

            def on_completed() -> None:
                observer.on_next(result())
                observer.on_completed()

            return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator
