"""``from_redis()``: follow a reply that ``sinks.to_redis`` writes (or wrote) to a Redis Stream.

The layout is in `llm_rx.sources._redis_entries`. ``redis`` is never imported here: any client
with redis-py's ``xread()`` (sync ``redis.Redis`` or ``redis.asyncio.Redis``, valkey's too)
will do. What one subscription knows (the last entry id, when the producer was last heard
from) lives in a `_Follower`, shared by the sync and the async reading loop.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, overload

import reactivex
from reactivex import Observable, abc
from reactivex.scheduler import CurrentThreadScheduler

from ..errors import IncompleteStreamError, LlmRxError, StreamTimeoutError
from ..events import Event
from ..wire.resume import Cursor
from ._async import read_async
from ._engine import consumer_space
from ._redis_entries import Ended, read_entry
from ._source import EventSource, Reading, read_through

__all__ = ["DEFAULT_HEARTBEAT_TIMEOUT", "RedisEntry", "from_redis", "redis_entries"]

#: Seconds without any new entry (an event or a producer's heartbeat) after which a follower
#: gives the producer up for dead and ends the reply as incomplete.
DEFAULT_HEARTBEAT_TIMEOUT = 30.0
_SLICE = 0.1  # a sync follower's longest wait in one XREAD: how soon it sees a dispose
_COUNT = 1024  # entries asked for per XREAD


class RedisEntry(NamedTuple):
    """An event with the id of its stream entry (pass it, or its ``cursor``, as ``after``
    to resume there)."""

    id: str
    event: Event

    @property
    def cursor(self) -> Cursor:
        """Where a reader goes on after this entry (the entry id as the last event id)."""
        return Cursor(last_event_id=self.id)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, (bytes, bytearray)) else str(value)


class _Follower:
    """Where one subscription is in the stream, and until when it waits for the next entry."""

    def __init__(self, key: str, after: str, timeout: float) -> None:
        self.key, self.last, self.timeout = key, after, timeout
        self.deadline = time.monotonic() + timeout

    def wait_ms(self, longest: float | None) -> int:
        """How long the next XREAD may block; a ``StreamTimeoutError`` once nothing came
        for ``timeout`` seconds."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise StreamTimeoutError(
                f"nothing new in Redis stream {self.key!r} for {self.timeout:g} s after entry "
                f"{self.last} (the producer is gone)"
            )
        return max(1, int(1000 * (left if longest is None else min(left, longest))))

    def paused(self, since: float) -> None:
        """The reading waited for its consumer since ``since`` (``time.monotonic()``): that
        time is no silence of the producer's."""
        self.deadline += time.monotonic() - since

    def take(self, reply: Any) -> tuple[list[RedisEntry], Ended | None]:
        """The events of an XREAD reply (RESP2 list or RESP3 map), and the end if it came
        (a bad entry ends the reply with its ``WireFormatError``, after the events before it)."""
        streams = reply.values() if isinstance(reply, dict) else [item[1] for item in reply or ()]
        entries: list[RedisEntry] = []
        for batch in streams:
            for raw_id, fields in batch:
                entry_id = _text(raw_id)
                self.deadline = time.monotonic() + self.timeout
                try:
                    item = read_entry(entry_id, fields)
                except LlmRxError as error:
                    return entries, Ended(error)
                self.last = entry_id
                if isinstance(item, Ended):
                    return entries, item
                if item is not None:
                    entries.append(RedisEntry(entry_id, item))
        return entries, None


def _read_error(follower: _Follower, error: Exception) -> IncompleteStreamError:
    failure = IncompleteStreamError(
        f"Redis stream {follower.key!r} could not be read after entry {follower.last} "
        f"({type(error).__name__}: {error})"
    )
    failure.__cause__ = error
    return failure


def _ended(ended: Ended | None) -> bool:
    if ended is not None and ended.error is not None:
        raise ended.error
    return ended is not None


class _RedisSource(EventSource):
    """The events (or, ``with_ids``, the entries) of one reply in a Redis Stream."""

    def __init__(
        self, client: Any, key: str, after: str, timeout: float, with_ids: bool,
        count: int = _COUNT,
    ) -> None:
        super().__init__()
        self._client, self._key, self._after = client, key, after
        self._timeout, self._with_ids, self._count = timeout, with_ids, count

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        follower = _Follower(self._key, self._after, self._timeout)
        client, count = self._client, self._count

        def taken(reply: Any) -> bool:
            """Emit an XREAD reply's entries of the reply: whether the reply ended."""
            entries, ended = follower.take(reply)
            if entries:  # (the entries themselves go to the plain subscriber of with_ids)
                items: list[Any] = entries if self._with_ids else [e.event for e in entries]
                since = time.monotonic()
                reading.emit(items)  # (a consumer on another thread may hold it here)
                follower.paused(since)
            return _ended(ended)

        if inspect.iscoroutinefunction(client.execute_command):  # redis.asyncio's clients
            async def pump() -> None:
                space = consumer_space.get()  # (a slow consumer: no read until it took the
                while not reading.stopped():  # entries it was given; see ``to_aiter``)
                    if space is not None:
                        since = time.monotonic()
                        await space()
                        follower.paused(since)
                        if reading.stopped():
                            return
                    wait = follower.wait_ms(None)
                    try:
                        reply = await client.xread({follower.key: follower.last}, count, wait)
                    except Exception as error:
                        raise _read_error(follower, error) from error
                    if taken(reply):
                        return

            return read_async(reading, pump, scheduler=scheduler, caller="from_redis()")

        def follow() -> None:
            while not reading.stopped():
                wait = follower.wait_ms(_SLICE)
                try:
                    reply = client.xread({follower.key: follower.last}, count, wait)
                except Exception as error:
                    raise _read_error(follower, error) from error
                if taken(reply):
                    return

        def run(_: abc.SchedulerBase, __: Any = None) -> None:
            read_through(reading, follow)

        return (scheduler or CurrentThreadScheduler.singleton()).schedule(run)


@overload
def from_redis(
    client: Any, key: str, *, after: str | Cursor = "0", heartbeat_timeout: float = ...,
    with_ids: Literal[False] = False,
) -> Observable[Event]: ...


@overload
def from_redis(
    client: Any, key: str, *, after: str | Cursor = "0", heartbeat_timeout: float = ...,
    with_ids: Literal[True],
) -> Observable[RedisEntry]: ...


def from_redis(
    client: Any,
    key: str,
    *,
    after: str | Cursor = "0",
    heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
    with_ids: bool = False,
) -> Observable[Event] | Observable[RedisEntry]:
    """A cold observable of the events of the reply ``sinks.to_redis`` writes to ``key``,
    from the entry after ``after`` on: first what is written already, then each entry as it
    is written (``XREAD BLOCK``), until the reply's end entry.

    A reply that ended with an error ends here with the same error (so ``to_response()``
    gives the producer's ``Response``). Nothing new for ``heartbeat_timeout`` seconds (a
    producer that died) ends it with a ``StreamTimeoutError``, a read that fails (the server
    went away) with an ``IncompleteStreamError``, an entry ``to_redis`` did not write with a
    ``WireFormatError`` carrying it: each after the events before it. ``with_ids=True``
    gives `RedisEntry` items (the entry id beside each event), to resume from the
    last id seen: ``after`` takes the id, or an [`llm_rx.Cursor`][llm_rx.Cursor] (its
    ``last_event_id``; ``entry.cursor``), the one type every resumable source shares. A
    sync client is read on ``scheduler`` (by default on the subscribing
    thread, which it blocks); an async one by a task on the running loop.
    """
    if heartbeat_timeout <= 0:
        raise ValueError(f"heartbeat_timeout must be positive, not {heartbeat_timeout!r}")
    if isinstance(after, Cursor):
        after = after.last_event_id or "0"
    if not with_ids:
        return _RedisSource(client, key, after, heartbeat_timeout, False)
    return redis_entries(client, key, after, heartbeat_timeout)


def redis_entries(
    client: Any, key: str, after: str, heartbeat_timeout: float, count: int = _COUNT
) -> Observable[RedisEntry]:
    """``from_redis(..., with_ids=True)``, each XREAD asking for at most ``count`` entries."""
    source = _RedisSource(client, key, after, heartbeat_timeout, True, count)

    def subscribe(
        observer: abc.ObserverBase[RedisEntry], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        # (a plain observable: the fused steps of later operators take events, not entries)
        on_next: Callable[[Any], None] = observer.on_next
        return source.subscribe_steps(
            None, on_next, observer.on_error, observer.on_error, observer.on_completed, scheduler
        )

    return reactivex.create(subscribe)
