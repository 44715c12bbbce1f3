"""``to_redis()``: a tap that writes a reply's events to a Redis Stream as they pass.

Followers on other machines read it with `llm_rx.sources.from_redis()`; the layout is in
`llm_rx._redis_entries`. ``redis`` is never imported here: any client with redis-py's
``pipeline()`` (sync ``redis.Redis`` or ``redis.asyncio.Redis``, valkey's too) will do.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from typing import Any

import orjson
from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable, SerialDisposable

from ..errors import CancelledStreamError, LlmRxError, SinkWriteError
from ..events import Event
from ..operators._adapter import reads
from ..sources import EventSource
from ..sources._redis_entries import HEARTBEAT_FIELD, end_entry, event_entry
from ..sources._source import Reading, Steps, TextFold

__all__ = ["DEFAULT_HEARTBEAT", "DEFAULT_TTL", "to_redis"]

#: Seconds a reply's stream is kept after its last write (a day, as resumable streams keep).
DEFAULT_TTL = 24 * 3600
#: Seconds between the entries that tell followers the producer is alive while the reply is
#: silent (a model thinking): well under ``from_redis``'s default ``heartbeat_timeout``.
DEFAULT_HEARTBEAT = 5.0
HEARTBEAT: dict[str, bytes] = {HEARTBEAT_FIELD: b""}

Entries = list[dict[str, bytes]]
Failed = Callable[[LlmRxError], None]


class _Target:
    """Where the entries go: one non-transactional pipeline (one round trip) per batch."""

    def __init__(self, client: Any, key: str, maxlen: int | None, ttl: int | None) -> None:
        self.client, self.key, self.maxlen, self.ttl = client, key, maxlen, ttl

    def pipeline(self, entries: Entries) -> Any:
        pipe = self.client.pipeline(transaction=False)
        for fields in entries:
            if self.maxlen is None:
                pipe.xadd(self.key, fields)
            else:
                pipe.xadd(self.key, fields, maxlen=self.maxlen, approximate=True)
        if self.ttl is not None:  # (renewed by every write: a dead producer's reply expires)
            pipe.expire(self.key, self.ttl)
        return pipe

    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.client.pipeline(transaction=False).execute)


def _write_error(entries: Entries, error: Exception) -> SinkWriteError:
    raw = b"\n".join(orjson.dumps({k: v.decode() for k, v in fields.items()})
                     for fields in entries).decode()
    failure = SinkWriteError(f"the reply could not be written to Redis "
                             f"({type(error).__name__}: {error})", raw)
    failure.__cause__ = error
    return failure


class _SyncWriter:
    """Writes each batch at once, before its events pass on; heartbeats come from a thread
    of their own (the client's pool makes that safe), never after the end."""

    def __init__(self, target: _Target, heartbeat: float | None) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._closed = threading.Event()
        if heartbeat is not None:
            threading.Thread(target=self._beat, args=(heartbeat,), daemon=True,
                             name="llm-rx redis heartbeat").start()

    def _beat(self, interval: float) -> None:
        while not self._closed.wait(interval):
            with self._lock:
                if not self._closed.is_set():  # (a failure here: the next write reports it)
                    self._execute([HEARTBEAT])

    def _execute(self, entries: Entries) -> LlmRxError | None:
        try:
            self._target.pipeline(entries).execute()
        except Exception as error:  # noqa: BLE001 - any client's failure: typed for the pipeline
            return _write_error(entries, error)
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

    def __init__(self, target: _Target, failed: Failed, heartbeat: float | None) -> None:
        self._target, self._failed = target, failed
        self._queue: list[tuple[Entries, Callable[[LlmRxError | None], None] | None]] = []
        self._task: asyncio.Task[None] | None = None
        self._broken: LlmRxError | None = None
        self._timer: asyncio.TimerHandle | None = None
        if heartbeat is not None:
            self._beat(heartbeat, first=True)

    def _beat(self, interval: float, first: bool = False) -> None:
        if not first:
            self._push([HEARTBEAT], None)
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
                    await self._target.pipeline(entries).execute()
                except Exception as error:  # noqa: BLE001 - typed, reported below
                    self._broken = _write_error(entries, error)
                    self.close()
                    self._failed(self._broken)
            for _, then in batch:
                if then is not None:
                    then(self._broken)
        self._task = None


def to_redis(
    client: Any,
    key: str,
    *,
    maxlen: int | None = None,
    ttl: int | None = DEFAULT_TTL,
    heartbeat: float | None = DEFAULT_HEARTBEAT,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Append each event to the Redis Stream ``key`` as it passes (a tap: the events go on
    unchanged), then an end entry; followers read it with ``sources.from_redis``.

    ```text
    events:   -S-t-t-M-|            -S-t-#            -S-t-  (disposed)
    to_redis(client, key)
    events:   -S-t-t-M-|            -S-t-#            -S-t-
    stream:    S t t M end(null)     S t end(error)    S t end(cancelled)
    ```

    Each read of the source is one pipeline (one round trip), not one per event. With a sync
    client a read is written before its events pass on; with ``redis.asyncio`` it is written
    by a task on the running loop, and the end passes on once everything is written. A
    write that fails (the server went away) stops the pipeline with a ``SinkWriteError``
    after the events that arrived. ``maxlen`` trims the stream (approximately); ``ttl``
    (seconds, renewed on each write) lets a reply expire; ``None`` keeps it. Every
    ``heartbeat`` seconds until the end a heartbeat entry tells followers the producer is
    alive (``None``: none; a follower then gives up after its timeout of silence).

    Args:
        client: A redis-py client, sync (``redis.Redis``) or ``redis.asyncio``.
        key: The Redis Stream's key.
        maxlen: The stream's length it is trimmed to (approximately); ``None``: no limit.
        ttl: Seconds until the reply expires, renewed on each write; ``None``: it stays.
        heartbeat: Seconds between heartbeat entries; ``None``: none.

    Returns:
        An operator for ``.pipe()``.
    """
    if heartbeat is not None and heartbeat <= 0:
        raise ValueError(f"heartbeat must be positive or None, not {heartbeat!r}")

    def operator(source: Observable[Event]) -> Observable[Event]:
        return _RedisTap(source, _Target(client, key, maxlen, ttl), heartbeat)

    return operator


class _RedisTap(EventSource):
    """The tap, an ``EventSource`` itself, so the operators after it still get whole reads."""

    def __init__(
        self, source: Observable[Event], target: _Target, heartbeat: float | None
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

        writer: _SyncWriter | _AsyncWriter = (
            _AsyncWriter(self._target, broke, self._heartbeat) if self._target.is_async()
            else _SyncWriter(self._target, self._heartbeat)
        )

        def step(events: list[Event]) -> tuple[list[Any], Exception | None]:
            nonlocal finished
            if finished:
                return [], None
            failure = writer.write([event_entry(event) for event in events]) if events else None
            values, step_failure = (events, None) if steps is None else steps(events)
            if failure is not None:
                finished = True
            return values, failure or step_failure

        def end(error: Exception | None, deliver: Callable[[LlmRxError | None], None]) -> None:
            nonlocal finished
            if finished:
                return
            finished = True
            writer.finish([end_entry(error)], deliver)

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

