"""``share()``: one upstream subscription for every subscriber, a read at a time."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..events import Event
from ._hub import Hub

__all__ = ["share"]


def share() -> Callable[[Observable[Event]], Observable[Event]]:
    """RxPY's ``share()`` for event streams, keeping the fusion of the operators behind it.

    ```text
    events:   -S-t-t-M-|
    share()
    first:    -S-t-t-M-|         (subscribed at the start)
    second:       -t-M-|         (subscribed later: from where the read is)
    ```

    The first subscriber subscribes upstream; the last one to dispose unsubscribes (a later
    subscriber subscribes upstream again). A subscriber that comes after the events ended
    gets only their end, as with RxPY. Each upstream read's events are handed to every
    subscriber as one batch: ``to_response()``, ``text_only()``, ``cost()`` and ``trace()``
    behind it fold a read at a time, as they do right after a source. Over a synchronous
    source the first subscriber reads it all: use [`fan_out()`][llm_rx.operators.fan_out]
    there (or an async source).
    """

    def operator(source: Observable[Event]) -> Observable[Event]:
        return Hub(source, auto_connect=True)

    return operator
