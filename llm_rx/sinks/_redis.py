"""``to_redis()``: a tap that writes a reply's events to a Redis Stream as they pass.

Followers on other machines read it with `llm_rx.sources.from_redis()`; the layout is in
`llm_rx._redis_entries`. ``redis`` is never imported here: any client with redis-py's
``pipeline()`` (sync ``redis.Redis`` or ``redis.asyncio.Redis``, valkey's too) will do.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable
from typing import Any

from reactivex import Observable

from ..events import Event
from ._appends import Entries, EventEntries, WritingTap

__all__ = ["DEFAULT_HEARTBEAT", "DEFAULT_TTL", "to_redis"]

#: Seconds a reply's stream is kept after its last write (a day, as resumable streams keep).
DEFAULT_TTL = 24 * 3600
#: Seconds between the entries that tell followers the producer is alive while the reply is
#: silent (a model thinking): well under ``from_redis``'s default ``heartbeat_timeout``.
DEFAULT_HEARTBEAT = 5.0


#: The append, atomic in Redis: one batch of a producer's, written unless it was already
#: (a retried write: its sequence number is not past the last), or refused when a producer
#: with the same id and a higher epoch wrote since (fenced off), or out of sequence.
#: KEYS: the stream, its producers' hash. ARGV: producer id, epoch, sequence, ttl or "",
#: maxlen or "", the number of entries, then per entry its field count and its fields.
_APPEND = """
local epoch, seq = tonumber(ARGV[2]), tonumber(ARGV[3])
local known = redis.call('HMGET', KEYS[2], ARGV[1] .. ':epoch', ARGV[1] .. ':seq')
local e, last = tonumber(known[1]), tonumber(known[2])
if e ~= nil and epoch < e then return {'fenced', known[1]} end
if e == nil or epoch > e then last = -1 end
if seq <= last then return {'duplicate', tostring(last)} end
if seq ~= last + 1 then return {'gap', tostring(last + 1)} end
local i = 7
for _ = 1, tonumber(ARGV[6]) do
  local args = {KEYS[1]}
  if ARGV[5] ~= '' then
    args[#args + 1] = 'MAXLEN'; args[#args + 1] = '~'; args[#args + 1] = ARGV[5]
  end
  args[#args + 1] = '*'
  for j = 1, 2 * tonumber(ARGV[i]) do args[#args + 1] = ARGV[i + j] end
  redis.call('XADD', unpack(args))
  i = i + 1 + 2 * tonumber(ARGV[i])
end
redis.call('HSET', KEYS[2], ARGV[1] .. ':epoch', epoch, ARGV[1] .. ':seq', seq)
if ARGV[4] ~= '' then
  redis.call('EXPIRE', KEYS[1], ARGV[4]); redis.call('EXPIRE', KEYS[2], ARGV[4])
end
return {'ok', tostring(seq)}
"""


class RedisAppendError(Exception):
    """Redis refused a producer's batch: ``fenced`` (a newer epoch wrote) or ``gap``."""


class _Target(EventEntries):
    """Where the entries go: one script call (one round trip, atomic) per batch, as the
    idempotent producer ``producer_id`` at ``epoch``, its sequence number counted here. A
    client that retries a call whose answer was lost (redis-py does, on a dropped
    connection) gets ``duplicate`` for it: the batch is written once."""

    name = "Redis"

    def __init__(self, client: Any, key: str, maxlen: int | None, ttl: int | None,
                 producer_id: str, epoch: int) -> None:
        self.client, self.key, self.maxlen, self.ttl = client, key, maxlen, ttl
        self.producer_id, self.epoch, self.seq = producer_id, epoch, 0
        self.script = client.register_script(_APPEND)

    def send(self, entries: Entries) -> Any:
        args: list[Any] = [self.producer_id, self.epoch, self.seq,
                           "" if self.ttl is None else self.ttl,
                           "" if self.maxlen is None else self.maxlen, len(entries)]
        for fields in entries:
            args.append(len(fields))
            for name, value in fields.items():
                args += [name, value]
        answer = self.script(keys=[self.key, f"{self.key}:producers"], args=args)
        if inspect.isawaitable(answer):
            return self._judged_later(answer)
        self._judge(answer)
        return None

    async def _judged_later(self, answer: Any) -> None:
        self._judge(await answer)

    def _judge(self, answer: Any) -> None:
        status, value = (item.decode() if isinstance(item, bytes) else str(item)
                         for item in answer)
        if status == "fenced":
            raise RedisAppendError(f"producer {self.producer_id!r} (epoch {self.epoch}) fenced "
                                   f"off by a producer with epoch {value}")
        if status == "gap":
            raise RedisAppendError(f"producer {self.producer_id!r} sent batch {self.seq}, "
                                   f"Redis expected {value}")
        self.seq += 1  # (written now, or already: "duplicate")

    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.client.execute_command)


def to_redis(
    client: Any,
    key: str,
    *,
    maxlen: int | None = None,
    ttl: int | None = DEFAULT_TTL,
    heartbeat: float | None = DEFAULT_HEARTBEAT,
    producer_id: str | None = None,
    epoch: int = 0,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Append each event to the Redis Stream ``key`` as it passes (a tap: the events go on
    unchanged), then an end entry; followers read it with ``sources.from_redis``.

    ```text
    events:   -S-t-t-M-|            -S-t-#            -S-t-  (disposed)
    to_redis(client, key)
    events:   -S-t-t-M-|            -S-t-#            -S-t-
    stream:    S t t M end(null)     S t end(error)    S t end(cancelled)
    ```

    Each read of the source is one script call (one round trip, atomic), not one per event,
    made as the idempotent producer ``producer_id`` (random by default) at ``epoch``, with a
    sequence number per call: a call the client retries after its answer was lost (redis-py
    does on a dropped connection) is written once, and a producer restarted for the same
    reply with the same id and a higher ``epoch`` fences off the old one (its next write fails
    with a ``SinkWriteError``). The producers' state is the hash ``{key}:producers`` (expiring
    with the stream). With a sync
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
        producer_id: The idempotent producer's id; ``None``: a random one per subscription.
        epoch: The producer's epoch: higher than the old one's to fence it off.

    Returns:
        An operator for ``.pipe()``.
    """
    if heartbeat is not None and heartbeat <= 0:
        raise ValueError(f"heartbeat must be positive or None, not {heartbeat!r}")

    def operator(source: Observable[Event]) -> Observable[Event]:
        def target() -> _Target:  # (a fresh producer per subscription)
            return _Target(client, key, maxlen, ttl, producer_id or uuid.uuid4().hex, epoch)

        return WritingTap(source, target, heartbeat)

    return operator


