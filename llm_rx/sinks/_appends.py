"""What the appending sinks share (``to_redis``, ``to_durable_stream``): a tap that hands
each read of the reply to a writer as entries (`llm_rx.sources._redis_entries`) and the end as
an end entry, and the two writers — sync (each batch written before its events pass on) and
async (one task on the running loop) — over a *target* that sends one batch at a time.

A target has ``name`` (for errors), ``is_async()`` and ``send(entries)`` (a coroutine for an
async target); ``send`` raises whatever its client raises, and the writer types it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Protocol

import orjson
from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable, SerialDisposable

from ..errors import CancelledStreamError, LlmRxError, SinkWriteError
from ..events import Event
from ..operators._adapter import reads
from ..sources import EventSource
from ..sources._redis_entries import HEARTBEAT_FIELD, end_entry, event_entry
from ..sources._source import Reading, Steps, TextFold

__all__ = ["HEARTBEAT", "Entries", "EventEntries", "Target", "WritingTap"]

HEARTBEAT: dict[str, bytes] = {HEARTBEAT_FIELD: b""}

Entries = list[Any]  # (a layout's: field maps for Redis and JSON items, bytes for a wire)
Failed = Callable[[LlmRxError], None]



class Target(Protocol):
    """Where a writer sends its batches, and how events become them (its layout)."""

    name: str

    def entries(self, events: list[Event]) -> Entries: ...

    def end(self, error: Exception | None) -> Entries: ...

    def heartbeat(self) -> Entries: ...

    def is_async(self) -> bool: ...

    def send(self, entries: Entries) -> Any: ...


class EventEntries:
    """The layout of `llm_rx.sources._redis_entries`: an entry per event, an end entry."""

    def entries(self, events: list[Event]) -> Entries:
        return [event_entry(event) for event in events]

    def end(self, error: Exception | None) -> Entries:
        return [end_entry(error)]

    def heartbeat(self) -> Entries:
        return [HEARTBEAT]


def _write_error(target: Target, entries: Entries, error: Exception) -> SinkWriteError:
    raw = b"\n".join(fields if isinstance(fields, bytes) else
                     orjson.dumps({k: v.decode() for k, v in fields.items()})
                     for fields in entries).decode("utf-8", "replace")
    failure = SinkWriteError(f"the reply could not be written to {target.name} "
                             f"({type(error).__name__}: {error})", raw)
    failure.__cause__ = error
    return failure


class _SyncWriter:
    """Writes each batch at once, before its events pass on; heartbeats come from a thread
    of their own (the client's pool makes that safe), never after the end."""

    def __init__(self, target: Target, heartbeat: float | None) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._closed = threading.Event()
        if heartbeat is not None:
            threading.Thread(target=self._beat, args=(heartbeat,), daemon=True,
                             name=f"llm-rx {target.name} heartbeat").start()

    def _beat(self, interval: float) -> None:
        while not self._closed.wait(interval):
            with self._lock:
                if not self._closed.is_set():  # (a failure here: the next write reports it)
                    self._execute(self._target.heartbeat())

    def _execute(self, entries: Entries) -> LlmRxError | None:
        try:
            self._target.send(entries)
        except Exception as error:  # noqa: BLE001 - any client's failure: typed for the pipeline
            return _write_error(self._target, entries, error)
        return None

    def write(self, entries: Entries) -> LlmRxError | None:
        with self._lock:
            failure = self._execute(entries)
        if failure is not None:
            self.close()
        return failure

    def finish(self, entries: Entries, then: Callable[[LlmRxError | None], None]) -> None:
        with self._lock:
            self._closed.set()
            failure = self._execute(entries)
        then(failure)

    def close(self) -> None:
        self._closed.set()


class _AsyncWriter:
    """Writes batches in order from one task on the running loop, a round trip for what
    queued meanwhile; events pass on at once, and a failure arrives at ``failed`` later."""

    def __init__(self, target: Target, failed: Failed, heartbeat: float | None) -> None:
        self._target, self._failed = target, failed
        self._queue: list[tuple[Entries, Callable[[LlmRxError | None], None] | None]] = []
        self._task: asyncio.Task[None] | None = None
        self._broken: LlmRxError | None = None
        self._timer: asyncio.TimerHandle | None = None
        if heartbeat is not None:
            self._beat(heartbeat, first=True)

    def _beat(self, interval: float, first: bool = False) -> None:
        if not first:
            self._push(self._target.heartbeat(), None)
        self._timer = asyncio.get_running_loop().call_later(interval, self._beat, interval)

    def write(self, entries: Entries) -> LlmRxError | None:
        self._push(entries, None)
        return None

    def finish(self, entries: Entries, then: Callable[[LlmRxError | None], None]) -> None:
        self.close()
        self._push(entries, then)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _push(self, entries: Entries, then: Callable[[LlmRxError | None], None] | None) -> None:
        self._queue.append((entries, then))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            entries = [fields for part, _ in batch for fields in part]
            if self._broken is None:
                try:
                    await self._target.send(entries)
                except Exception as error:  # noqa: BLE001 - typed, reported below
                    self._broken = _write_error(self._target, entries, error)
                    self.close()
                    self._failed(self._broken)
            for _, then in batch:
                if then is not None:
                    then(self._broken)
        self._task = None


class WritingTap(EventSource):
    """The tap, an ``EventSource`` itself, so the operators after it still get whole reads;
    ``target`` makes the target of one subscription."""

    def __init__(
        self, source: Observable[Event], target: Callable[[], Target], heartbeat: float | None
    ) -> None:
        super().__init__()
        self._source, self._target, self._heartbeat = source, target, heartbeat

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        raise NotImplementedError  # (subscribe_steps is what reads)

    def subscribe_steps(
        self,
        steps: Steps[Any] | None,
        on_next: Callable[[Any], None],
        on_step_error: Callable[[Exception], None],
        on_error: Callable[[Exception], None],
        on_completed: Callable[[], None],
        scheduler: abc.SchedulerBase | None = None,
        fold: TextFold | None = None,  # (not passed on: every event is written)
    ) -> abc.DisposableBase:
        finished = False  # a terminal went downstream (or is on its way)
        upstream = SerialDisposable()

        def broke(error: LlmRxError) -> None:  # an async write failed
            nonlocal finished
            if not finished:
                finished = True
                upstream.dispose()
                on_step_error(error)

        target = self._target()  # (a fresh one per subscription: its producer's sequence)
        writer: _SyncWriter | _AsyncWriter = (
            _AsyncWriter(target, broke, self._heartbeat) if target.is_async()
            else _SyncWriter(target, self._heartbeat)
        )

        def step(events: list[Event]) -> tuple[list[Any], Exception | None]:
            nonlocal finished
            if finished:
                return [], None
            failure = writer.write(target.entries(events)) if events else None
            values, step_failure = (events, None) if steps is None else steps(events)
            if failure is not None:
                finished = True
            return values, failure or step_failure

        def end(error: Exception | None, deliver: Callable[[LlmRxError | None], None]) -> None:
            nonlocal finished
            if finished:
                return
            finished = True
            writer.finish(target.end(error), deliver)

        def stopped(error: Exception) -> None:  # a write, a step or a consumer failed
            if finished:  # (our own write failure: nothing more can be written)
                on_step_error(error)
                return
            end(error, lambda _: on_step_error(error))

        def failed(error: Exception) -> None:  # the source failed: its error wins
            end(error, lambda _: on_error(error))

        def completed() -> None:
            end(None, lambda failure: on_completed() if failure is None else on_error(failure))

        def dispose() -> None:
            cancel = CancelledStreamError("the producer stopped reading before the reply ended")
            end(cancel, lambda _: None)

        upstream.disposable = reads(self._source).subscribe_steps(  # (a read at a time; an
            step, on_next, stopped, failed, completed, scheduler)  # event, after any other)
        return CompositeDisposable(Disposable(dispose), upstream)

