"""``stop_on()``: a user's stop — the reply ends when a trigger emits, upstream is let go, and
the provider is told to stop working (and billing) where it has a way to be told."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from typing import Any, Literal

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, SingleAssignmentDisposable

from ..errors import CancelledStreamError
from ..events import BlockStart, BlockStop, Event, MessageStart
from ..sources import EventSource
from ..sources._source import Reading
from ._adapter import reads
from ._hub import read_kinds

__all__ = ["stop_on"]

#: The tasks of async cancel calls still running (a task nobody holds may be collected).
_PENDING: set[asyncio.Future[Any]] = set()


def stop_on(
    trigger: Observable[Any],
    at: Literal["now", "block"] = "now",
    *,
    cancel: Callable[[str], Any] | None = None,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """End the reply when ``trigger`` emits (a Stop button, a budget, a timer): a user's stop.

    ```text
    events:   -S-B0-t-t-t-t-X0-B1-t-t-X1-M-|
    trigger:  --------x
    stop_on(trigger, at="now")
    result:   -S-B0-t-t#                       # = CancelledStreamError
    stop_on(trigger, at="block")
    result:   -S-B0-t-t-t-t-X0#                (the block in progress closes first)
    ```

    With ``at="now"`` nothing after the trigger passes; with ``at="block"`` the blocks open
    when it emitted go on to their ends (a block that starts after it does not pass), then
    the reply ends; a reply whose own end comes first ends as it would have. The upstream
    subscription is disposed at once at the stop: an llm-rx source closes its connection
    (the server sees the client go) or its SDK stream. Then ``cancel``, when given, is called
    once with the reply's id (`MessageStart.id`; not called when the reply had none), for a
    provider that keeps working after the client went away (a background run:
    ``cancel=lambda reply_id: client.responses.cancel(reply_id)``, see the how-to page on
    long replies); an awaitable it returns runs as a task on the running loop. A cancel
    call that fails is said in a note on the error.

    The reply then ends with a [`CancelledStreamError`][llm_rx.CancelledStreamError]: after
    ``to_response()`` a `Response` with ``complete: false``, ``stop_reason:
    "interrupted"``, ``error.kind: "cancelled"``, the content and usage so far; the UI
    encoders write a user's stop (the AI SDK's ``abort``, AG-UI's ``cancelled`` outcome).
    An error of the trigger is passed on as the reply's; a trigger that completes without
    emitting changes nothing. Right after a source it passes a read's events on as one read
    (it looks into a read only when it holds a start or the end of a block), so
    ``to_response()`` and the taps after it keep the source's per-read path.

    Args:
        trigger: Any observable: its first item stops the reply.
        at: ``"now"``, or ``"block"`` (after the blocks in progress close).
        cancel: Called once with the reply's id at the stop (the provider's cancel call).

    Returns:
        An operator for ``.pipe()``.
    """
    if at not in ("now", "block"):
        raise ValueError(f'at must be "now" or "block", not {at!r}')

    def operator(source: Observable[Event]) -> Observable[Event]:
        return _Stopping(source, trigger, at == "block", cancel)

    return operator


#: The events whose read a stop looks into (a read of deltas only is passed on whole).
_LOOKED_AT: frozenset[type[Any]] = frozenset({MessageStart, BlockStart, BlockStop})


class _Stop:
    """One subscription's stop: where the reply is (its id, its open blocks), whether a stop
    was asked, and whether the reading ended; ``lock`` serialises the reads, the trigger and
    the end (the trigger may come from any thread)."""

    def __init__(self, reading: Reading, at_block: bool,
                 cancel: Callable[[str], Any] | None) -> None:
        self.reading = reading
        self.at_block = at_block
        self.cancel = cancel
        self.lock = threading.RLock()
        self.open: set[int] = set()
        self.reply: str | None = None
        self.stopping = False
        self.done = False
        self.upstream = SingleAssignmentDisposable()
        self.stopper = SingleAssignmentDisposable()

    def stopped(self) -> CancelledStreamError:
        """The error the reply ends with; the provider told to stop (``cancel``)."""
        error = CancelledStreamError("the reply was stopped (stop_on)")
        if self.cancel is not None and self.reply is not None:
            _cancelled(self.cancel, self.reply, error)
        return error

    def step(self, events: list[Event], kinds: frozenset[type[Any]]
             ) -> tuple[list[list[Event]], Exception | None]:
        """A read's events: passed on as one read, up to where a stop at the block's end
        falls (then the stop, as the step's failure)."""
        with self.lock:
            if self.done:
                return [], None
            if _LOOKED_AT.isdisjoint(kinds):  # (the usual read: deltas only)
                return [events], None
            for position, event in enumerate(events):
                if isinstance(event, MessageStart):
                    if self.reply is None and event.id:
                        self.reply = event.id
                elif isinstance(event, BlockStart):
                    if self.stopping:  # (a block after the stop does not pass)
                        return [events[:position]] if position else [], self._ending()
                    self.open.add(event.index)
                elif isinstance(event, BlockStop):
                    self.open.discard(event.index)
                    if self.stopping and not self.open:
                        return [events[: position + 1]], self._ending()
            return [events], None

    def _ending(self) -> CancelledStreamError:
        """The stop at the block's end: the read's events up to it go on, then the reading
        ends with it (``ended``)."""
        self.stopper.dispose()
        return self.stopped()

    def emit(self, values: list[Event]) -> None:
        with self.lock:
            if not self.done:
                self.reading.emit(values)

    def on_stop(self, _: Any) -> None:
        with self.lock:
            if self.done or self.stopping:
                return
            self.stopping = True
            if not (self.at_block and self.open):
                self.finish(None)

    def finish(self, error: Exception | None) -> None:
        """End now: upstream let go, then the stop (or the trigger's error)."""
        with self.lock:
            if self.done:
                return
            self.done = True
            self.stopper.dispose()
            self.upstream.dispose()
            self.reading.end(error if error is not None else self.stopped())

    def ended(self, error: Exception | None) -> None:
        """The events ended on their own (or with the stop a step raised)."""
        with self.lock:
            if self.done:
                return
            self.done = True
            self.stopper.dispose()
            self.reading.end(error)


class _Stopping(EventSource):
    """The events of ``source`` until ``trigger`` emits (see `stop_on`), a read at a time
    (what follows stays on the per-read path)."""

    def __init__(self, source: Observable[Event], trigger: Observable[Any], at_block: bool,
                 cancel: Callable[[str], Any] | None) -> None:
        super().__init__()
        self._given = source
        self._source = reads(source)
        self._trigger = trigger
        self._at_block = at_block
        self._cancel = cancel

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        stop = _Stop(reading, self._at_block, self._cancel)
        kinds = read_kinds(self._given)

        def step(events: list[Event]) -> tuple[list[list[Event]], Exception | None]:
            return stop.step(events, kinds(events))

        stop.stopper.disposable = self._trigger.subscribe(
            stop.on_stop, stop.finish, scheduler=scheduler)
        if not stop.done:
            stop.upstream.disposable = self._source.subscribe_steps(
                step, stop.emit, stop.ended, stop.ended, lambda: stop.ended(None), scheduler)
        return CompositeDisposable(stop.stopper, stop.upstream)


def _cancelled(cancel: Callable[[str], Any], reply_id: str, error: CancelledStreamError) -> None:
    """Call ``cancel(reply_id)``; an awaitable it gives runs as a task on the running loop;
    a failure is said in a note on ``error``."""
    try:
        result = cancel(reply_id)
    except Exception as failure:  # noqa: BLE001 - said on the error the reply ends with
        error.add_note(f"the cancel call for {reply_id!r} failed: "
                       f"{type(failure).__name__}: {failure}")
        return
    if not inspect.isawaitable(result):
        return
    try:
        task = asyncio.ensure_future(result, loop=asyncio.get_running_loop())
    except RuntimeError:  # (no loop runs here: the awaitable can never run)
        close = getattr(result, "close", None)
        if close is not None:
            close()
        error.add_note(f"the cancel call for {reply_id!r} returned an awaitable and no "
                       "event loop runs here to await it")
        return
    _PENDING.add(task)
    task.add_done_callback(_PENDING.discard)
