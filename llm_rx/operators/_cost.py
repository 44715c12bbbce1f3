"""``cost()``: what a reply cost, priced from its final usage when the events end."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import reactivex
from reactivex import Observable, abc

from ..events import Event, MessageStart, MessageStop, UsageUpdate
from ..response import Response, Usage
from ._adapter import Fold, folded
from ._hub import read_kinds
from ._notes import noting
from ._pricing import Cost, price, price_list

__all__ = ["cost"]


_READ: frozenset[type[Any]] = frozenset({UsageUpdate, MessageStart, MessageStop})


class _Tally(Fold[Cost]):
    """What a price needs from a reply's events: the served model, its wire, the usage."""

    def __init__(self, source: Observable[Any], at: datetime | None) -> None:
        self.kinds = read_kinds(source)  # (a fan_out's hub finds a read's types once)
        self.at = at
        self.model: str | None = None
        self.provider: str | None = None
        self.usage = Usage()
        self.started = False
        self.stopped = False

    def step(self, events: list[Event]) -> tuple[list[Cost], Exception | None]:
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

    def end(self, error: Exception | None) -> tuple[list[Cost], Exception | None]:
        """The price (marked not complete after an error), unless nothing started."""
        if error is not None:
            if not self.started:
                return [], error
            self.stopped = False
        return [price(self.usage, self.model, self.provider, complete=self.stopped,
                      at=self.at)], error


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
        priced = folded(lambda given, _: _Tally(given, at))(source)

        def subscribe(
            observer: abc.ObserverBase[Cost], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            with noting(note):  # (a display before it shows the price in its footer)
                return priced.subscribe(observer, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator
