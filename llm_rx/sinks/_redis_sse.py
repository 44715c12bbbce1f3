"""``redis_sse_response()``: serve a reply followed from Redis to a browser as standard SSE,
each event's ``id:`` its stream entry id, so an ``EventSource`` that reconnects (sending
``Last-Event-ID``) resumes exactly after the last event it got.

The reply is read as the client reads it: at most `BATCH` entries a read (``XREAD`` with
``COUNT``), the next read only once the response has taken the last of them (a client that
stops reading stops the reading), so a slow client holds a bounded number of entries.

``starlette`` and ``redis`` are imported only when a response is made.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import orjson

from ..events import Event, event_to_dict
from ..sources._engine import consumer_space
from ..sources._redis import DEFAULT_HEARTBEAT_TIMEOUT, RedisEntry, redis_entries
from ..sources._redis_entries import typed
from ._keepalive import DEFAULT_KEEPALIVE, kept_alive

__all__ = ["BATCH", "end_frame", "event_frame", "redis_sse_response", "sse_frames"]

#: The most entries one read asks for (``XREAD`` ``COUNT``): what a slow client holds at most.
BATCH = 128

_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _frame(entry: RedisEntry) -> bytes:
    return event_frame(entry.id, entry.event)


def event_frame(position: str, event: Event) -> bytes:
    """An event's SSE frame: ``id:`` its ``position`` in its stream, ``event:`` its type,
    ``data:`` its JSON (``event_to_dict``)."""
    data = event_to_dict(event)
    return b"id: %s\nevent: %s\ndata: %s\n\n" % (
        position.encode(), str(data["type"]).encode(), orjson.dumps(data)
    )


def end_frame(error: BaseException | None) -> bytes:
    """The last frame: ``end`` for a reply that finished, ``error`` (kind, message, raw)
    for one that did not; neither has an ``id:``, so a reconnect resumes after the last event."""
    if error is None:
        return b"event: end\ndata: {}\n\n"
    failure = typed(error)
    body = {"kind": failure.kind, "message": failure.message, "raw": failure.raw}
    return b"event: error\ndata: %s\n\n" % orjson.dumps(body)


class _Handoff:
    """The entries one read gave that the response has not sent yet. The reading awaits
    `room` before each read (``llm_rx.sources._engine.consumer_space``): none waits, so at
    most one read's `BATCH` entries are held for a client, however slowly it reads."""

    def __init__(self) -> None:
        self._items: deque[RedisEntry] = deque()
        self._arrived = asyncio.Event()
        self._taken = asyncio.Event()
        self.ended = False
        self.error: BaseException | None = None

    def put(self, entry: RedisEntry) -> None:
        self._items.append(entry)
        self._arrived.set()

    def end(self, error: BaseException | None) -> None:
        self.ended, self.error = True, error
        self._arrived.set()

    async def room(self) -> None:
        while self._items:
            self._taken.clear()
            await self._taken.wait()

    async def get(self) -> RedisEntry | None:
        """The next entry; ``None`` at the end (then `error` says how it ended)."""
        while not self._items:
            if self.ended:
                return None
            self._arrived.clear()
            await self._arrived.wait()
        entry = self._items.popleft()
        if not self._items:
            self._taken.set()
        return entry


async def sse_frames(
    client: Any,
    key: str,
    after: str = "0",
    heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
) -> AsyncIterator[bytes]:
    """The SSE frames of the reply at ``key`` after entry ``after`` (an async client's), then
    an ``end`` or ``error`` frame. The entries are read `BATCH` at a time, each read once
    the frames of the last were taken; leaving early stops the reading."""
    if heartbeat_timeout <= 0:
        raise ValueError(f"heartbeat_timeout must be positive, not {heartbeat_timeout!r}")
    handoff = _Handoff()
    token = consumer_space.set(handoff.room)  # (the reading task waits for room)
    try:
        subscription = redis_entries(client, key, after, heartbeat_timeout, BATCH).subscribe(
            handoff.put, handoff.end, lambda: handoff.end(None)
        )
    finally:
        consumer_space.reset(token)
    try:
        while (entry := await handoff.get()) is not None:
            yield _frame(entry)
        yield end_frame(handoff.error)
    finally:  # (the client went away, or the reply ended: the reading stops)
        subscription.dispose()


def redis_sse_response(
    client: Any,
    key: str,
    request: Any = None,
    *,
    after: str = "0",
    heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
    keepalive: float | None = DEFAULT_KEEPALIVE,
) -> Any:
    """A Starlette ``StreamingResponse`` (``text/event-stream``) of the reply at ``key``,
    read with the async ``client``: from the start, or after the request's ``Last-Event-ID``
    header when ``request`` has one (else after ``after``).

    Each event is ``id: <entry id>``, ``event: <type>``, ``data: <event JSON>``; the reply
    ends with an ``end`` frame (or ``error`` with the error's kind, message and raw frame),
    on which the page should close its ``EventSource`` (a browser reconnects otherwise).

    Redis is read as the client reads: at most `BATCH` (128) entries a read, the next read
    once the response took the last of them, so a slow client holds one read's entries in
    the server; the time spent waiting for the client is no silence of the producer's. After
    ``keepalive`` seconds (15) without a frame a keep-alive comment (``: keep-alive``) is
    sent, so that proxies which close idle connections leave a thinking model's reply alone.

    Args:
        client: A ``redis.asyncio`` client.
        key: The Redis Stream's key.
        request: The Starlette request, whose ``Last-Event-ID`` header says where to resume.
        after: The entry id to read after when the request names none (``0``: from the start).
        heartbeat_timeout: Seconds of silence after which the producer is taken for dead.
        keepalive: Seconds without a frame before a keep-alive comment; ``None``: none.

    Returns:
        A Starlette ``StreamingResponse``.
    """
    from starlette.responses import StreamingResponse

    headers = getattr(request, "headers", None) or {}
    resume = headers.get("last-event-id") or after
    return StreamingResponse(
        kept_alive(sse_frames(client, key, resume, heartbeat_timeout), keepalive),
        media_type="text/event-stream",
        headers=_HEADERS,
    )
