"""``redis_sse_response()``: serve a reply followed from Redis to a browser as standard SSE,
each event's ``id:`` its stream entry id, so an ``EventSource`` that reconnects (sending
``Last-Event-ID``) resumes exactly after the last event it got.

``starlette`` and ``redis`` are imported only when a response is made.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson

from ..events import event_to_dict
from ..sources._redis import DEFAULT_HEARTBEAT_TIMEOUT, RedisEntry, from_redis
from ..sources._redis_entries import typed

__all__ = ["redis_sse_response", "sse_frames"]

_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _frame(entry: RedisEntry) -> bytes:
    data = event_to_dict(entry.event)
    return b"id: %s\nevent: %s\ndata: %s\n\n" % (
        entry.id.encode(), str(data["type"]).encode(), orjson.dumps(data)
    )


def _end(error: BaseException | None) -> bytes:
    """The last frame: ``end`` for a reply that finished, ``error`` (kind, message, raw)
    for one that did not; neither has an ``id:``, so a reconnect resumes after the last event."""
    if error is None:
        return b"event: end\ndata: {}\n\n"
    failure = typed(error)
    body = {"kind": failure.kind, "message": failure.message, "raw": failure.raw}
    return b"event: error\ndata: %s\n\n" % orjson.dumps(body)


async def sse_frames(
    client: Any,
    key: str,
    after: str = "0",
    heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
) -> AsyncIterator[bytes]:
    """The SSE frames of the reply at ``key`` after entry ``after`` (an async client's), then
    an ``end`` or ``error`` frame."""
    queue: asyncio.Queue[tuple[RedisEntry | None, BaseException | None]] = asyncio.Queue()
    source = from_redis(client, key, after=after, heartbeat_timeout=heartbeat_timeout,
                        with_ids=True)
    subscription = source.subscribe(
        lambda entry: queue.put_nowait((entry, None)),
        lambda error: queue.put_nowait((None, error)),
        lambda: queue.put_nowait((None, None)),
    )
    try:
        while True:
            entry, error = await queue.get()
            if entry is None:
                yield _end(error)
                return
            yield _frame(entry)
    finally:
        subscription.dispose()


def redis_sse_response(
    client: Any,
    key: str,
    request: Any = None,
    *,
    after: str = "0",
    heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
) -> Any:
    """A Starlette ``StreamingResponse`` (``text/event-stream``) of the reply at ``key``,
    read with the async ``client``: from the start, or after the request's ``Last-Event-ID``
    header when ``request`` has one (else after ``after``).

    Each event is ``id: <entry id>``, ``event: <type>``, ``data: <event JSON>``; the reply
    ends with an ``end`` frame (or ``error`` with the error's kind, message and raw frame),
    on which the page should close its ``EventSource`` (a browser reconnects otherwise).

    Args:
        client: A ``redis.asyncio`` client.
        key: The Redis Stream's key.
        request: The Starlette request, whose ``Last-Event-ID`` header says where to resume.
        after: The entry id to read after when the request names none (``0``: from the start).
        heartbeat_timeout: Seconds of silence after which the producer is taken for dead.

    Returns:
        A Starlette ``StreamingResponse``.
    """
    from starlette.responses import StreamingResponse

    headers = getattr(request, "headers", None) or {}
    resume = headers.get("last-event-id") or after
    return StreamingResponse(
        sse_frames(client, key, resume, heartbeat_timeout),
        media_type="text/event-stream",
        headers=_HEADERS,
    )
