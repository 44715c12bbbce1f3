"""``cost()``: what a reply cost, priced from its final usage when the events end."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import reactivex
from reactivex import Observable, abc

from .. import speed as fast
from ..events import Event, MessageStart, MessageStop, UsageUpdate
from ..response import Response, Usage
from ..sources import EventSource
from ._hub import Kinds, read_kinds
from ._notes import noting
from ._pricing import Cost, price, price_list

__all__ = ["cost"]


_READ: frozenset[type[Any]] = frozenset({UsageUpdate, MessageStart, MessageStop})


class _Tally:
    """What a price needs from a reply's events: the served model, its wire, the usage."""

    __slots__ = ("kinds", "model", "provider", "started", "stopped", "usage")

    def __init__(self, kinds: Kinds) -> None:
        self.kinds = kinds  # (a read's event types: a fan_out's hub finds them once a read)
        self.model: str | None = None
        self.provider: str | None = None
        self.usage = Usage()
        self.started = False
        self.stopped = False

    def feed_all(self, events: list[Event]) -> tuple[list[Cost], Exception | None]:
        if _READ.isdisjoint(self.kinds(events)):  # (the usual read: deltas only)
            return [], None
        for event in events:
            cls = event.__class__
            if cls is UsageUpdate:
                self.usage = self.usage.overlay(event.usage)  # type: ignore[union-attr]
            elif cls is MessageStart:
                self.started = True
                self.provider = event.provider  # type: ignore[union-attr]
                self.model = event.model or self.model  # type: ignore[union-attr]
            elif cls is MessageStop:
                self.stopped = True
        return [], None


def cost(at: datetime | None = None) -> Callable[[Observable[Event]], Observable[Cost]]:
    """One [`Cost`][llm_rx.operators.Cost] when the events end (also before an error from
    upstream is passed on, then marked not ``complete``).

    ```text
    events:   -S-b-t-t-e-U-M-|        events:  -S-b-t-U-#
    cost()                            cost()
    result:   ---------------c|       result:  ---------c#    (c.complete is False)
    ```

    The served model (the one the wire reported) is priced, with the prices of ``at`` (now,
    when ``None``). Needs the ``cost`` extra (``genai-prices``). A live display earlier in
    the same pipeline shows the price in its footer.

    Args:
        at: The moment whose prices apply (now when ``None``).

    Returns:
        An operator for ``.pipe()``.
    """
    price_list()  # (fails here, at the call, when the extra is not installed)

    def note(response: Response) -> str:
        return price(
            response.usage, response.model, response.provider, complete=response.complete,
            at=at,
        ).text()

    def operator(source: Observable[Event]) -> Observable[Cost]:
        def subscribe(
            observer: abc.ObserverBase[Cost], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            tally = _Tally(read_kinds(source))

            def result() -> Cost:
                return price(
                    tally.usage, tally.model, tally.provider, complete=tally.stopped, at=at)

            def on_next(event: Event) -> None:
                tally.feed_all([event])

            def on_error(error: Exception) -> None:
                if tally.started:
                    tally.stopped = False
                    observer.on_next(result())
                observer.on_error(error)

            def on_completed() -> None:
                observer.on_next(result())
                observer.on_completed()

            with noting(note):
                if isinstance(source, EventSource) and fast.active():  # a read at a time
                    return source.subscribe_steps(
                        tally.feed_all, observer.on_next, on_error, on_error, on_completed,
                        scheduler,
                    )
                return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator
