"""The multicast behind ``share()`` and ``fan_out()``: one upstream read, a batch per read.

RxPY's ``Subject`` takes two locks and copies its observer list for every event. A hub is an
`EventSource` instead: it hands each upstream read's list of events to every reading
registered with it, so the operators behind it (``to_response()``, ``text_only()``,
``cost()``, ``trace()``...) still take a read at a time, and the observer list is read once
per read, not copied per event. The types of a read's events are found once for all of them
(:func:`read_kinds`): the shared builder, ``cost()`` and ``trace()`` each ask, and the hub
looks at the events once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from reactivex import Observable, abc
from reactivex.disposable import Disposable, SerialDisposable

from ..events import Event
from ..sources import EventSource
from ..sources._source import Reading
from ._adapter import reads
from ._fold import SharedFold
from ._notes import Note, notes, noting

__all__ = ["Hub", "Kinds", "read_kinds", "shared_fold"]

_OPEN = object()  # (the upstream has not ended)

#: The types of a read's events.
Kinds = Callable[[list[Event]], frozenset[type[Event]]]


def _kinds(events: list[Event]) -> frozenset[type[Event]]:
    return frozenset(map(type, events))


class Hub(EventSource):
    """Readings registered with it get the reads of one subscription to ``source``.

    With ``auto_connect`` the first reading connects and the last one to leave disconnects
    (RxPY's ``share()``: ``publish().ref_count()``); otherwise `connect` does. Once the
    upstream ended, a reading registered later gets that end at once, as RxPY's do.
    """

    def __init__(
        self,
        source: Observable[Event],
        *,
        auto_connect: bool,
        board: list[Note] | None = None,
        fold: SharedFold | None = None,
    ) -> None:
        super().__init__()
        self._board = board  # (where a fan_out gathers its branches' notes)
        self._fold = fold  # (fed each read for the folds behind it, once one took it)
        self._source = source
        self._auto = auto_connect
        self._readings: tuple[Reading, ...] = ()  # (replaced, never mutated: read unlocked)
        self._notes: tuple[Note, ...] = ()
        self._lock = threading.Lock()
        self._upstream = SerialDisposable()
        self._connected = False
        self._ended: object = _OPEN  # the error the upstream ended with, or None
        # The read being handed out and its events' types, once one asked (:meth:`kinds`).
        self._kinds: tuple[list[Event] | None, frozenset[type[Event]]] = (None, frozenset())

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        with self._lock:
            ended = self._ended
            if ended is _OPEN:
                self._readings = (*self._readings, reading)
                self._gather(notes())
            connect = self._auto and not self._connected and ended is _OPEN
        if ended is not _OPEN:
            reading.end(ended)  # type: ignore[arg-type]
            return Disposable()
        if connect:
            self.connect(scheduler)
        return Disposable(lambda: self._leave(reading))

    def _gather(self, found: list[Note]) -> None:
        new = tuple(note for note in found if note not in self._notes)
        self._notes += new
        if self._board is not None:
            self._board.extend(note for note in new if note not in self._board)

    def _leave(self, reading: Reading) -> None:
        with self._lock:
            self._readings = tuple(other for other in self._readings if other is not reading)
            disconnect = self._auto and not self._readings and self._connected
            if disconnect:
                self._connected = False
        if disconnect:
            self._upstream.disposable = Disposable()

    def connect(self, scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
        """Subscribe to the upstream once, for every reading registered by then (and after);
        disposing the result disconnects."""
        with self._lock:
            if self._connected:
                return self._upstream
            self._connected = True
        with noting(*self._notes):  # (the notes of every operator behind the hub)
            upstream = reads(self._source).subscribe_steps(
                self._batch, _nothing, self._end, self._end, self._completed, scheduler)
        self._upstream.disposable = upstream
        return self._upstream

    def upstream_error(self) -> Exception | None:
        """The error the upstream ended with (``None``: none, or not ended yet)."""
        ended = self._ended
        return ended if isinstance(ended, Exception) else None

    def kinds(self, events: list[Event]) -> frozenset[type[Event]]:
        """The types of ``events``: found once for the read every reading is handed (the
        same list, which nobody changes), otherwise found now."""
        read, kinds = self._kinds
        if read is events:
            return kinds
        kinds = frozenset(map(type, events))
        self._kinds = (events, kinds)
        return kinds

    def _batch(self, events: list[Event]) -> tuple[list[None], Exception | None]:
        fold = self._fold
        if fold is not None and fold.used:
            fold.feed_shared(events, self.kinds(events))
        for reading in self._readings:
            if not reading.stopped():
                reading.emit(events)
        return [], None

    def _end(self, error: Exception | None) -> None:
        with self._lock:
            if self._ended is not _OPEN:
                return
            self._ended = error
            readings, self._readings = self._readings, ()
            self._kinds = (None, frozenset())  # (the last read, let go)
        for reading in readings:
            if not reading.stopped():
                reading.end(error)

    def _completed(self) -> None:
        self._end(None)


def shared_fold(source: Observable[Event]) -> SharedFold | None:
    """The fold ``source`` feeds for the folds subscribed to it (see ``operators._fold``),
    when it is a ``fan_out()``'s hub that has not connected yet; taking it makes the hub
    feed it."""
    if not isinstance(source, Hub):
        return None
    hub = source
    fold = hub._fold
    with hub._lock:
        if fold is None or hub._connected:
            return None
        fold.used = True
    return fold


def read_kinds(source: Observable[Event]) -> Kinds:
    """How an operator applied to ``source`` finds the types of a read's events: the hub's
    (found once a read for all its readings) when ``source`` is a hub, else each time."""
    if isinstance(source, Hub):
        return source.kinds
    return _kinds


def _nothing(_value: None) -> None:
    """(A hub's step passes no values on: its readings get the events.)"""
