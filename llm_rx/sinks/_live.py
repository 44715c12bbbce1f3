"""``live()``: the engine of the live displays — snapshots rendered at their own rate.

A live display is a *tap*: it passes every event through unchanged while it renders, so one
subscription drives both the display and whatever follows it (``to_response()``, a meter).
Rendering is decoupled from the token rate: events only feed a
[`ResponseBuilder`][llm_rx.ResponseBuilder] (cheap), and a frame — an immutable
[`Snapshot`][llm_rx.Snapshot] — is rendered on the scheduler at most
``refresh_per_second`` times a second. Fragments that arrive while a frame renders are
coalesced into the next frame, never dropped; the final state is always rendered, in full,
when the events end (complete, cut short, failed or disposed).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from reactivex import Observable, abc
from reactivex.scheduler import ImmediateScheduler, TimeoutScheduler, TrampolineScheduler

from ..errors import CancelledStreamError
from ..events import Event
from ..fold.builder import Snapshot
from ..operators._adapter import Fold, folded
from ..operators._fold import BuilderFold
from ..operators._hub import shared_fold
from ..operators._notes import Note, notes

__all__ = ["DEFAULT_REFRESH_PER_SECOND", "LiveView", "live"]

#: Frames per second of the live displays unless told otherwise.
DEFAULT_REFRESH_PER_SECOND = 15.0


class LiveView(Protocol):
    """Where frames go: one view per subscription, opened when the subscription starts."""

    def update(self, snapshot: Snapshot) -> None:
        """Show the reply so far (in progress: not complete, no stop reason, no error).

        Args:
            snapshot: The reply as it stands; ``snapshot.response`` is made when read.
        """

    def close(self, snapshot: Snapshot) -> None:
        """Show the reply as it ended (complete, interrupted or failed); the last call.

        Args:
            snapshot: The reply as it ended; ``snapshot.notes`` are the footer lines of the
                operators after the display (the price, from ``cost()``).
        """


def _blocking(scheduler: abc.SchedulerBase) -> bool:
    """Schedulers that run timed work on the calling thread (by sleeping) cannot pace frames."""
    return isinstance(scheduler, (TrampolineScheduler, ImmediateScheduler))


def live(
    open_view: Callable[[], LiveView],
    *,
    refresh_per_second: float = DEFAULT_REFRESH_PER_SECOND,
    scheduler: abc.SchedulerBase | None = None,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Render the reply on a view while passing every event through unchanged.

    ```text
    events:  -S-b-t-t-t-t-t-t-t-t-t-t-M-|
    live(view, refresh_per_second=1/4)        (one frame per 4 ticks at most)
    result:  -S-b-t-t-t-t-t-t-t-t-t-t-M-|     (the same events, at the same times)
    frames:  -f-------f-------f-------f-F     (f: update, F: close with the final state)
    ```

    The first event is shown at once, later ones at most once per ``1 / refresh_per_second``
    seconds of the scheduler's clock: ``scheduler`` when given, else the subscription's
    (``AsyncIOScheduler`` under ``await``, a thread under ``.run()``), else a timer thread.
    The scheduler must take work from the thread the events arrive on (``AsyncIOScheduler``
    only from its loop's thread; ``AsyncIOThreadSafeScheduler`` from any).

    ``open_view`` is called on each subscription (a new view each time). An exception from
    the view goes to ``on_error``; an error from upstream is shown, then passed on. Disposing
    the subscription shows the reply as cancelled.

    Args:
        open_view: Called on each subscription: the [`LiveView`][llm_rx.sinks.LiveView] to
            show the reply on.
        refresh_per_second: The most frames a second.
        scheduler: The scheduler that times the frames (see above).

    Returns:
        An operator for ``.pipe()``.
    """
    if not refresh_per_second > 0:
        raise ValueError("refresh_per_second must be > 0")
    if scheduler is not None and _blocking(scheduler):
        raise ValueError("live displays need a scheduler with timers (not a trampoline)")
    interval = 1.0 / refresh_per_second

    def clock_of(subscribed: abc.SchedulerBase | None) -> abc.SchedulerBase:
        return scheduler or (
            subscribed if subscribed is not None and not _blocking(subscribed)
            else TimeoutScheduler.singleton()
        )

    def tap(source: Observable[Any], subscribed: abc.SchedulerBase | None) -> _LiveTap:
        fold = shared_fold(source) or BuilderFold()  # (right behind a fan_out: its builder)
        return _LiveTap(_Session(open_view(), clock_of(subscribed), interval, notes(), fold))

    return folded(tap)


class _LiveTap(Fold[Event]):
    """A display: fed a read at a time, its values the events it looked at."""

    def __init__(self, session: _Session) -> None:
        self._session = session

    def step(self, events: list[Event]) -> tuple[list[Event], Exception | None]:
        fed, failure = self._session.feed_all(events)
        if failure is None and self._session.failure is not None:  # (the view failed)
            return [], self._session.failure
        return (events if failure is None else events[:fed]), failure

    def end(self, error: Exception | None) -> tuple[list[Event], Exception | None]:
        session = self._session
        if error is not None:
            with contextlib.suppress(Exception):  # the upstream error is the one to report
                session.finish(error)
            return [], error
        try:
            session.finish(None)
        except Exception as failure:  # noqa: BLE001 - the view failed: report it
            return [], failure
        return [], session.failure

    def cancel(self) -> None:
        with contextlib.suppress(Exception):  # disposing never raises; nobody to tell
            self._session.finish(CancelledStreamError("the display was disposed"))


class _Session:
    """One subscription's display: the builder, the next frame's timer, the view.

    ``_lock`` guards the builder and the timer (held briefly, by the event thread too): a
    frame's snapshot is taken *and materialised* under it, since a snapshot reads the
    builder's lists and the builder is not thread-safe. ``_render_lock`` lets one frame
    render at a time and makes the final frame the last one. Events arriving during a render
    wait only for ``_lock``, never for the render: they are coalesced into the next frame.
    """

    def __init__(
        self,
        view: LiveView,
        clock: abc.SchedulerBase,
        interval: float,
        board: list[Note],
        fold: BuilderFold | None = None,
    ) -> None:
        self._view: LiveView | None = view  # None once closed
        self._board = board  # what the operators after the display say in its footer
        self._clock = clock
        self._interval = interval
        # (no history: a snapshot is materialised as it is taken, under ``_lock``; a
        # read's text deltas for one block are then appended in one call). The builder
        # and its lock are a fold's, shared with the reassembly behind a ``fan_out()``.
        self._fold = fold = fold or BuilderFold()
        self._builder = fold.builder
        self._lock = fold.lock
        # Re-entrant: a view's update may itself push events that end the stream (a view
        # that drives its source); the final frame then waits until that update returns.
        self._render_lock = threading.RLock()
        self._rendering = False
        self._deferred: Snapshot | None = None
        self._timer: abc.DisposableBase | None = None  # the next frame, when one is due
        self._shown: datetime | None = None  # when the last frame was taken
        self.failure: Exception | None = None  # the view failed: the stream fails with it

    def feed_all(self, events: list[Event]) -> tuple[int, Exception | None]:
        """Feed a read's events: how many were fed, and the error of the one that was not."""
        outcome = self._fold.feed_all(events)
        if outcome[1] is None:
            with self._lock:
                self._due()
        return outcome

    def _due(self) -> None:
        """Schedule the next frame if none is (``_lock`` held)."""
        if self._timer is None and self._view is not None:
            wait = 0.0
            if self._shown is not None:
                elapsed = (self._clock.now - self._shown).total_seconds()
                wait = max(0.0, self._interval - elapsed)
            self._timer = self._clock.schedule_relative(wait, self._frame)

    def _frame(self, _scheduler: abc.SchedulerBase, _state: Any = None) -> None:
        with self._render_lock:
            with self._lock:
                self._timer = None
                view = self._view
                if view is None:
                    return
                snapshot = self._builder.snapshot()
                snapshot.response  # noqa: B018 - materialised here: the builder is not thread-safe
                self._shown = self._clock.now
            self._rendering = True
            try:
                view.update(snapshot)
            except Exception as error:  # noqa: BLE001 - reported through on_error
                with self._lock:
                    self._view = None
                    self.failure = error
                with contextlib.suppress(Exception):  # let it release what it holds (a
                    view.close(snapshot)  # terminal region), if it still can
            finally:
                self._rendering = False
            final, self._deferred = self._deferred, None
            if final is not None:
                view.close(final)

    def finish(self, error: Exception | None) -> None:
        """Render the final state (once): what arrived, marked with how it ended."""
        with self._render_lock:
            with self._lock:
                view, self._view = self._view, None
                if self._timer is not None:
                    self._timer.dispose()
                    self._timer = None
                if view is None:
                    return
                snapshot = self._builder.snapshot(error, final=True)
                response = snapshot.response  # (materialised while no event can be fed)
            snapshot.notes = tuple(
                line for note in self._board if (line := note(response)) is not None)
            if self._rendering:  # called from inside this thread's update: close after it
                self._deferred = snapshot
                return
            view.close(snapshot)
