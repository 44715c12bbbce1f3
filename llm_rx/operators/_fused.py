"""Operators that run in their source's own loop when they sit right after a source."""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import TypeVar

import reactivex
from reactivex import Observable, abc

from .. import speed as fast
from ..events import Event
from ..sources import EventSource
from ..sources._source import Steps

__all__ = ["fused", "texts_of"]

_T = TypeVar("_T")
_text: Callable[[Event], str] = itemgetter(1)  # a text delta's text


def fused(
    steps: Steps[_T], otherwise: Callable[[Observable[Event]], Observable[_T]]
) -> Callable[[Observable[Event]], Observable[_T]]:
    """An operator that maps each read's events with ``steps`` in the loop of an
    `EventSource` it is applied to, and is ``otherwise`` after any
    other observable (the same values, one observer hop per event more), or when the
    shortcuts are off at subscription (see `llm_rx.wire.fast`)."""

    def operator(source: Observable[Event]) -> Observable[_T]:
        if not isinstance(source, EventSource):
            return otherwise(source)

        def subscribe(
            observer: abc.ObserverBase[_T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            if not fast.active():
                return otherwise(source).subscribe(observer, scheduler=scheduler)
            return source.subscribe_steps(
                steps, observer.on_next, observer.on_error, observer.on_error,
                observer.on_completed, scheduler,
            )

        return reactivex.create(subscribe)

    return operator


def texts_of(kind: type[Event]) -> Steps[str]:
    """The texts of a read's ``kind`` deltas (``TextDelta``, ``ThinkingDelta``), in order."""

    def steps(events: list[Event]) -> tuple[list[str], Exception | None]:
        return [_text(event) for event in events if event.__class__ is kind], None

    return steps
