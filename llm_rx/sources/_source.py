"""The observable every source gives: events, read per subscription, fusable with a step."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable

from .. import speed
from ..errors import LlmRxError
from ..events import Event
from ..wire.base import Decoder, TextFold
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME
from ._engine import new_decoder

__all__ = ["EventSource", "Reading", "Steps", "TextFold", "read_through", "settle", "under"]

_T = TypeVar("_T")

#: Maps one read's events to values (for ``accumulate()``, one per event; for
#: ``to_response()``, none): the values of the events up to the first it failed on, and that
#: failure (``None`` when none failed).
Steps = Callable[[list[Event]], tuple[list[_T], Exception | None]]


class Reading(NamedTuple):
    """Where a source's reading reports: each read's events, whether to stop, the end; and,
    when its events only go to a fold, where a decoder may fold a delta's string directly
    (``fold``: see ``Decoder.fold_into``). ``shortcuts`` is the fast-path switch as the
    subscription saw it: the reading runs under it (`read_through`), wherever it runs."""

    emit: Callable[[list[Event]], None]
    stopped: Callable[[], bool]
    end: Callable[[Exception | None], None]  # (the decoding error, or ``None``)
    fold: TextFold | None = None
    shortcuts: bool = True


def read_through(reading: Reading, work: Callable[[], None]) -> None:
    """Run ``work`` (which reads and emits) under the subscription's fast-path switch (on a
    scheduler's thread too), then end ``reading`` with what it raised (a ``MemoryError``
    too, as it is: on a scheduler, raising it would leave the subscriber waiting for an end
    that never comes)."""
    try:
        with speed.fast_paths(reading.shortcuts):
            work()
    except Exception as error:  # noqa: BLE001 - settled below: never lost on a scheduler
        settle(reading, error)
        return
    settle(reading, None)


def under(shortcuts: bool, work: Callable[..., _T], *args: Any) -> _T:
    """``work(*args)`` under the fast-path setting a subscription saw (``Reading.shortcuts``),
    wherever it runs: for a reading pushed its reads (``decode()``), whose decoder makes
    parts of itself as the first bytes arrive, and those may be pushed from anywhere."""
    if speed.active() is shortcuts:
        return work(*args)
    with speed.fast_paths(shortcuts):
        return work(*args)


def settle(reading: Reading, failure: Exception | None) -> None:
    """End ``reading`` with how its work ended: ``None``, a typed error (a failing byte source
    arrives as one too), or any other exception, which is never lost in a task or on a
    scheduler — unless it was raised by an ``on_error`` already called (then it is raised)."""
    if failure is None or isinstance(failure, LlmRxError):
        reading.end(failure)
        return
    if reading.stopped():  # (delivered already: an on_error that raised)
        raise failure
    reading.end(failure)


class EventSource(Observable[Event]):
    """A cold observable of the events decoded from a byte source.

    Besides ``subscribe``, it can run a step over each read's events in its own loop
    (`subscribe_steps`), so an operator such as ``accumulate()``, ``to_response()`` or
    ``text_only()`` costs no observer hop per event when it sits right after the source.
    """

    def __init__(
        self, provider: ProviderName | None = None, max_frame: int = DEFAULT_MAX_FRAME
    ) -> None:
        super().__init__()
        self._provider = provider
        self._max_frame = max_frame

    def _subscribe_core(
        self, observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return self.subscribe_steps(
            None, observer.on_next, observer.on_error, observer.on_error, observer.on_completed,
            scheduler,
        )

    def subscribe_steps(
        self,
        steps: Steps[_T] | None,
        on_next: Callable[[_T], None],
        on_step_error: Callable[[Exception], None],
        on_error: Callable[[Exception], None],
        on_completed: Callable[[], None],
        scheduler: abc.SchedulerBase | None = None,
        fold: TextFold | None = None,
    ) -> abc.DisposableBase:
        """Subscribe with ``steps`` run on each read's events in the source's own loop:
        ``on_next`` gets their values, then ``on_completed()`` is called; a decoding error
        goes to ``on_error`` after the values of the events before it. When ``steps`` fails
        on an event, the values of those before it are passed on, then the reading stops and
        the failure goes to ``on_step_error``. With no ``steps``, ``on_next`` gets the events
        themselves.

        Disposing the result stops the reading. The callbacks are called as given: pass an
        operator's downstream observer's, which keep the observer grammar.

        ``fold``, for ``steps`` that only fold the events and give no value for a delta: the
        decoder may give it a delta's string instead of the event (see
        ``llm_rx.fold.blocks.appender``).
        """
        disposed = False

        def stopped() -> bool:
            return disposed

        def emit(events: list[Any]) -> None:
            nonlocal disposed
            values, failure = (events, None) if steps is None else steps(events)
            try:
                for value in values:
                    if disposed:
                        return
                    on_next(value)
            except Exception as error:  # a consumer's on_next failed
                # (the RxPY convention: a callback's exception stops the reading and goes
                # to on_error, so a pipeline never hangs on it)
                if disposed:  # (raised by an on_error already called, further on: theirs)
                    raise
                failure = error
            if failure is not None and not disposed:
                disposed = True
                on_step_error(failure)

        def end(error: Exception | None) -> None:
            if disposed:
                return
            if error is None:
                on_completed()
            else:
                on_error(error)

        def dispose() -> None:
            nonlocal disposed
            disposed = True

        reading = self._read(Reading(emit, stopped, end, fold, speed.active()), scheduler)
        return CompositeDisposable(Disposable(dispose), reading)

    def _decoder(self) -> Decoder:
        """A fresh decoder for a subscription."""
        return new_decoder(self._provider, self._max_frame)

    @abstractmethod
    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        """Start reading: ``reading.emit`` each read's events (those before a decoding error
        too), then ``reading.end`` with the error or ``None``; stop early once
        ``reading.stopped()``. Returns what cancels the reading."""
