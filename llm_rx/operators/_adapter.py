"""One adapter for every operator: a fold, stepped a read at a time, whatever the source.

An operator is a :class:`Fold` made per subscription — ``step`` over a read's events (the
values to emit, and the failure that ends the reply), ``end`` (the last values, and the error
to pass on), ``cancel`` (the reader went away first) — given to :func:`folded`. That is its
only body. After an llm-rx `EventSource` the fold takes each read as the source decoded it,
in the source's own loop (``subscribe_steps``); after any other observable it takes each
event as a read of one (:func:`reads`): the same code, so both give the same values.

What :func:`folded` gives is an `EventSource` again, whose reads are the fold's values of
each read: a tap (a live display, ``trace()``), whose values are the events it looked at,
leaves what follows it (``to_response()``, another tap, a ``fan_out()``) right after a
source, a read at a time.

```text
source ──► subscribe_steps(step) ──► the values of a read ──► the reader (one read)
           (a read; or an event,      (end: the last values,
            as a read of one)          then the error or the completion)
```
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable

from ..events import Event
from ..sources import EventSource
from ..sources._source import Reading, TextFold

__all__ = ["Fold", "Folded", "Make", "folded", "reads"]

_T = TypeVar("_T")


class Fold(Generic[_T]):
    """One subscription's operator, fed a read's events at a time."""

    #: Where a decoder may hand a delta's string instead of its event, for a fold that only
    #: folds the events and gives no value for a delta (offered to the source, which decides:
    #: see ``Decoder.fold_into``); ``None``: every event is stepped.
    text: TextFold | None = None

    def step(self, events: list[Event]) -> tuple[list[_T], Exception | None]:
        """A read's events: the values to emit (those of the events before the one it
        failed on, when it failed), and the failure, which ends the reply (`end`)."""
        raise NotImplementedError

    def end(self, error: Exception | None) -> tuple[list[_T], Exception | None]:
        """The events ended (with ``error``, an upstream's or the step's failure): the last
        values, and the error to pass on (``None``: the values complete)."""
        return [], error

    def cancel(self) -> None:
        """The reader went away before the end (disposed, or its ``on_next`` failed); also
        called once the reader let go after the end, when it changes nothing."""


#: Makes a subscription's fold: given the observable the operator was applied to (a
#: ``fan_out()``'s hub shares what it can) and the subscription's scheduler.
Make = Callable[[Observable[Any], abc.SchedulerBase | None], Fold[_T]]


def folded(make: Make[_T]) -> Callable[[Observable[Event]], Observable[_T]]:
    """The operator whose body is the fold ``make`` gives for each subscription."""

    def operator(source: Observable[Event]) -> Observable[_T]:
        return cast(Observable[_T], Folded(source, make))

    return operator


def reads(source: Observable[Any]) -> EventSource:
    """``source`` as reads: an `EventSource` as it is; any other observable an event at a
    time, each as a read of one."""
    return source if isinstance(source, EventSource) else _EachEvent(source)


class Folded(EventSource):
    """The reads of ``source`` (see `reads`) stepped by a fold made per subscription: each
    read's values go on as one read, then the fold's end."""

    def __init__(self, source: Observable[Any], make: Make[Any]) -> None:
        super().__init__()
        self._given = source
        self._source = reads(source)
        self._make = make

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        fold = self._make(self._given, scheduler)
        emit, end = reading.emit, reading.end
        fold_step, fold_end = fold.step, fold.end

        def step(events: list[Event]) -> tuple[list[list[Any]], Exception | None]:
            values, failure = fold_step(events)
            return ([values] if values else []), failure

        def finish(error: Exception | None) -> None:
            values, error = fold_end(error)
            if values:
                emit(values)
            end(error)

        def completed() -> None:
            finish(None)

        upstream = self._source.subscribe_steps(
            step, emit, finish, finish, completed, scheduler, fold.text)
        return CompositeDisposable(upstream, Disposable(fold.cancel))


class _EachEvent(EventSource):
    """The events of an observable that is no `EventSource`, each as a read of one."""

    def __init__(self, source: Observable[Any]) -> None:
        super().__init__()
        self._source = source

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        emit, stopped, end = reading.emit, reading.stopped, reading.end

        def on_next(event: Any) -> None:
            if not stopped():
                emit([event])

        def on_completed() -> None:
            end(None)

        return self._source.subscribe(on_next, end, on_completed, scheduler=scheduler)
