"""Taps that stay fused: a tap applied to an event source is an event source again.

A tap (a live display, ``trace()``) passes every event through while it looks at them. Put
after an `EventSource`, it gives a `Tapped` source: the tap
looks at each read's events in the source's own loop, then hands the read on unchanged, so
what follows it (``to_response()``, another tap, a ``fan_out()``) is still right after a
source and takes a read at a time. With the shortcuts off (`llm_rx.wire.fast`) the
tap's general Rx form runs instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable

from .. import speed as fast
from ..events import Event
from ..sources import EventSource
from ..sources._source import Reading

__all__ = ["Tap", "Tapped"]


class Tap(Protocol):
    """One subscription's tap."""

    def step(self, events: list[Event]) -> tuple[int, Exception | None]:
        """Look at a read's events: how many pass (all, unless it failed), and the failure."""

    def end(self, error: Exception | None) -> Exception | None:
        """The events ended (with ``error``): the error to pass on, if any."""

    def cancel(self) -> None:
        """The subscription was disposed before the end (nothing to pass on)."""


class Tapped(EventSource):
    """``source``'s reads, each looked at by a tap made per subscription by ``make`` (which
    may give ``None``: nothing to look at, the reads go straight through). ``otherwise`` is
    the same tap as an ordinary Rx operator over ``source``, for the shortcuts off."""

    def __init__(
        self,
        source: EventSource,
        make: Callable[[abc.SchedulerBase | None], Tap | None],
        otherwise: Observable[Event],
    ) -> None:
        super().__init__()
        self._source = source
        self._make = make
        self._otherwise = otherwise

    def _subscribe_core(
        self, observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        if not fast.active():
            return self._otherwise.subscribe(observer, scheduler=scheduler)
        return super()._subscribe_core(observer, scheduler)

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        tap = self._make(scheduler)
        if tap is None:
            return self._source._read(reading, scheduler)
        failed = False

        def emit(events: list[Event]) -> None:
            nonlocal failed
            if failed:
                return
            passed, failure = tap.step(events)
            if failure is None:
                reading.emit(events)
                return
            failed = True
            if passed:
                reading.emit(events[:passed])
            reading.end(tap.end(failure))

        def stopped() -> bool:
            return failed or reading.stopped()

        def end(error: Exception | None) -> None:
            if failed:
                return
            if reading.stopped():  # (the reader went away: disposed, or its on_next failed)
                tap.cancel()
                return
            reading.end(tap.end(error))

        upstream = self._source._read(
            Reading(emit, stopped, end, shortcuts=reading.shortcuts), scheduler)
        return CompositeDisposable(upstream, Disposable(tap.cancel))
