"""``to_redis()``: a tap that writes a reply's events to a Redis Stream as they pass.

Followers on other machines read it with `llm_rx.sources.from_redis()`; the layout is in
`llm_rx._redis_entries`. ``redis`` is never imported here: any client with redis-py's
``pipeline()`` (sync ``redis.Redis`` or ``redis.asyncio.Redis``, valkey's too) will do.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from reactivex import Observable

from ..events import Event
from ._appends import Entries, WritingTap

__all__ = ["DEFAULT_HEARTBEAT", "DEFAULT_TTL", "to_redis"]

#: Seconds a reply's stream is kept after its last write (a day, as resumable streams keep).
DEFAULT_TTL = 24 * 3600
#: Seconds between the entries that tell followers the producer is alive while the reply is
#: silent (a model thinking): well under ``from_redis``'s default ``heartbeat_timeout``.
DEFAULT_HEARTBEAT = 5.0


class _Target:
    """Where the entries go: one non-transactional pipeline (one round trip) per batch."""

    name = "Redis"

    def __init__(self, client: Any, key: str, maxlen: int | None, ttl: int | None) -> None:
        self.client, self.key, self.maxlen, self.ttl = client, key, maxlen, ttl

    def send(self, entries: Entries) -> Any:
        return self.pipeline(entries).execute()

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
        return WritingTap(source, _Target(client, key, maxlen, ttl), heartbeat)

    return operator


