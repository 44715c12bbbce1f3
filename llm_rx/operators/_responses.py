"""``responses()``: a stream that carries several responses, one after another (a WebSocket
that carries one response after another, an agent's turns on one connection, a run and the
run that resumes it), as one observable per response."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, abc
from reactivex.subject import ReplaySubject

from ..events import (
    ChoiceEnd,
    Custom,
    Dropped,
    Event,
    MessageStart,
    MessageStop,
    MetadataUpdate,
    UsageUpdate,
)

__all__ = ["responses"]

# What is no content of a response (a start said again after these is the same response)
_NO_CONTENT: frozenset[type[object]] = frozenset(
    {MessageStart, MessageStop, MetadataUpdate, UsageUpdate, ChoiceEnd, Custom, Dropped})


class _Split:
    """One subscription's state: the response open now, and whether a new start begins
    another one."""

    __slots__ = ("current", "ended", "observer", "seen", "start")

    def __init__(self, observer: abc.ObserverBase[Observable[Event]]) -> None:
        self.observer = observer
        self.current: ReplaySubject[Event] | None = None
        self.start: MessageStart | None = None  # the open response's start
        self.seen = False  # content arrived (a block, a delta, an opaque frame)
        self.ended = False  # its MessageStop arrived

    def new(self, event: MessageStart) -> bool:
        """Whether ``event`` begins another response: after the open one ended, with another
        id, or with the same id once the open one carried anything (the same start said
        again before any content is the same response; a start without an id, or one that
        gives the id the open one lacked, fills in what it lacked: a fallback model, a
        resumed stream's late id)."""
        if self.current is None or self.start is None:
            return self.current is None
        if self.ended:
            return True
        if event.id is None or self.start.id is None:
            return False
        return event.id != self.start.id or self.seen

    def on_next(self, event: Event) -> None:
        if isinstance(event, MessageStart) and self.new(event):
            if self.current is not None:
                self.current.on_completed()  # (the open one ends here, not complete)
            self.current = ReplaySubject()
            self.start, self.seen, self.ended = event, False, False
            self.observer.on_next(self.current)
        elif self.current is None:  # (a stream whose first start was not seen)
            self.current = ReplaySubject()
            self.observer.on_next(self.current)
            self.seen = event.__class__ not in _NO_CONTENT
        elif isinstance(event, MessageStop):
            self.ended = True
        elif event.__class__ not in _NO_CONTENT:
            self.seen = True
        self.current.on_next(event)

    def on_error(self, error: Exception) -> None:
        if self.current is not None and not self.ended:
            self.current.on_error(error)
        elif self.current is not None:  # (an error between two responses is neither's)
            self.current.on_completed()
        self.observer.on_error(error)

    def on_completed(self) -> None:
        if self.current is not None:
            self.current.on_completed()
        self.observer.on_completed()


def responses() -> Callable[[Observable[Event]], Observable[Observable[Event]]]:
    """One observable per response on the stream, each with exactly one reply's events.

    ```text
    events:    -S1-t-M-S2-t-t-M-|
    responses()
    result:    -R1-----R2-------|     R1: -S1-t-M-|   R2: -S2-t-t-M-|
    ```

    A `MessageStart` begins a new response after the open one's `MessageStop`, or while it
    is open with another id, or with the same id once the open one carried anything (then
    the open one ends there, without its stop: it is not complete); the same start said
    again with the same id before any content is the same response, and a start without an
    id (or giving the id the open one lacked) fills in what the open one lacked. Each inner
    observable replays what it holds to a late subscriber and ends where its response ends;
    an error ends the open one and the outer one (an error that comes after a response's
    stop, before the next one starts, ends only the outer one: it is no response's). Fold
    each with `to_response()`, or use [`to_responses()`][llm_rx.operators.to_responses].

    Returns:
        An operator for ``.pipe()``.
    """

    def operator(source: Observable[Event]) -> Observable[Observable[Event]]:
        def subscribe(observer: abc.ObserverBase[Observable[Event]],
                      scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
            split = _Split(observer)  # (state per subscription)
            return source.subscribe(split.on_next, split.on_error, split.on_completed,
                                    scheduler=scheduler)

        return Observable(subscribe)

    return operator
