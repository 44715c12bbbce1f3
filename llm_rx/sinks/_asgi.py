"""``sse_response(events, to)``: a reply's events as a Starlette/FastAPI streaming response in
a target provider's format, for gateways (needs ``starlette``: the ``serve`` extra)."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from ..encoders import HEADERS, MEDIA_TYPES
from ..events import Dropped, Event
from ..operators import encode
from ..sources._engine import consumer_space

if TYPE_CHECKING:
    from starlette.responses import StreamingResponse

__all__ = ["sse_response"]

_END = object()

#: How many reads' bytes wait for a slow client at most (a source waits for room).
ROOM_READS = 8
#: How many bytes may wait from a producer that cannot be made to wait, before it is cut.
OVERFLOW = 4 * 1024 * 1024


def sse_response(
    events: Observable[Event],
    to: str,
    *,
    dropped: list[Dropped] | None = None,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    background: Any = None,
) -> StreamingResponse:
    """A ``StreamingResponse`` that sends ``events`` as ``to``'s stream, with its media type
    (``llm_rx.encoders.MEDIA_TYPES``) and the headers its clients need
    (``llm_rx.encoders.HEADERS``: ``cache-control: no-cache`` and ``x-accel-buffering: no``
    for every SSE target, ``x-vercel-ai-ui-message-stream: v1`` for ``vercel-ui``;
    ``headers`` given here win), each read's bytes as
    they are encoded. The events are subscribed to when the response starts sending; when the
    client goes away the subscription is disposed, which stops reading the upstream (a
    ``from_httpx`` source closes its response). A cut or failed upstream ends the body
    without the target's terminal frame (or with its error frame): the client sees a cut
    reply, never a finished one. What the target cannot carry goes to ``dropped``;
    ``background`` (a Starlette ``BackgroundTask``) runs after the response is sent.

    The upstream is read only as fast as the client reads: at most ``ROOM_READS`` (8) reads
    wait for it. An async source waits for room before its next read, a source read on
    another thread blocks until there is room; a producer that cannot wait (a ``Subject``, a
    sync source read in the subscribe call on the loop's thread) is cut once ``OVERFLOW``
    (4 MiB) waits, and the client gets a cut reply.

    Args:
        events: The reply's events (subscribed to when the response starts).
        to: The target: a key of ``llm_rx.encoders.ENCODERS`` (a provider's stream, or
            ``vercel-ui`` / ``ag-ui`` for a web page).
        dropped: A list to append a `Dropped` to for each thing the target cannot carry.
        status_code: The response's status.
        headers: More response headers.
        background: A Starlette ``BackgroundTask`` run after the response is sent.

    Returns:
        A Starlette ``StreamingResponse``.
    """
    from starlette.responses import StreamingResponse

    return StreamingResponse(_body(events.pipe(encode(to, dropped=dropped))),
                             status_code=status_code,
                             headers={**HEADERS.get(to, {}), **(headers or {})},
                             media_type=MEDIA_TYPES[to], background=background)


async def _body(encoded: Observable[bytes]) -> AsyncIterator[bytes]:
    """The encoded bytes as the async iterator a response sends, through a bounded hand-off;
    leaving it (the client went away, or the stream ended) disposes the subscription."""
    handoff = _Handoff(asyncio.get_running_loop())
    token = consumer_space.set(handoff.room)  # (an async source's reading waits for room)
    try:
        subscription = encoded.subscribe(handoff.put, lambda error: handoff.end(),
                                         handoff.end)
    finally:
        consumer_space.reset(token)
    try:
        while (item := await handoff.get()) is not _END:
            yield item
    finally:
        handoff.close()
        subscription.dispose()


class _Handoff:
    """The bounded hand-off between the events' reading and the response's sending.

    At most ``ROOM_READS`` reads wait in it. An async source's reading task waits for room
    (`room`, through ``llm_rx.sources._engine.consumer_space``, as ``to_aiter``'s buffer);
    a producer on another thread (a sync source read on a scheduler's thread) blocks in
    `put` until there is room; a producer on
    the loop's own thread that does not wait (a ``Subject``, a sync source read in the
    subscribe call) is cut once ``OVERFLOW`` bytes wait: the client gets a cut reply, never
    an unbounded buffer.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.get_ident()
        self._lock = threading.Condition()
        self._items: deque[Any] = deque()
        self._size = 0
        self._closed = False
        self._arrived = asyncio.Event()
        self._taken = asyncio.Event()

    def put(self, data: bytes) -> None:
        """Hand over a read's bytes; from another thread, wait for room first."""
        with self._lock:
            if threading.get_ident() != self._thread:
                self._lock.wait_for(lambda: self._closed or len(self._items) < ROOM_READS)
            elif self._items and self._size + len(data) > OVERFLOW:  # (one that cannot wait)
                self._items.append(_END)
                self._closed = True
            if self._closed:
                return
            self._items.append(data)
            self._size += len(data)
        self._wake()

    def end(self) -> None:
        """The events ended (completed or failed): the response ends after what waits."""
        with self._lock:
            if self._closed:
                return
            self._items.append(_END)
        self._wake()

    def close(self) -> None:
        """The response is done: release whoever waits for room; later reads are dropped."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self._taken.set()

    async def get(self) -> Any:
        """The next read's bytes (or ``_END``), waiting for one."""
        while True:
            with self._lock:
                if self._items:
                    item = self._items.popleft()
                    if item is not _END:
                        self._size -= len(item)
                    self._lock.notify_all()
                    self._taken.set()
                    return item
                self._arrived.clear()
            await self._arrived.wait()

    async def room(self) -> None:
        """Returns once fewer than ``ROOM_READS`` reads wait (or the response is done)."""
        while not self._closed and len(self._items) >= ROOM_READS:
            self._taken.clear()
            await self._taken.wait()

    def _wake(self) -> None:
        if threading.get_ident() == self._thread:
            self._arrived.set()
        else:
            self._loop.call_soon_threadsafe(self._arrived.set)
