"""``sse_response(events, to)``: a reply's events as a Starlette/FastAPI streaming response in
a target provider's format, for gateways (needs ``starlette``: the ``serve`` extra)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from ..encoders import HEADERS, MEDIA_TYPES, make_encoder
from ..errors import ProviderError
from ..events import Dropped, Event
from ..operators._adapter import Fold, folded
from ..operators._encode import EncodeFold
from ..sources._engine import consumer_space
from ._keepalive import DEFAULT_KEEPALIVE, kept_alive

if TYPE_CHECKING:
    from starlette.responses import StreamingResponse

__all__ = ["sse_response"]

_END = object()
_log = logging.getLogger("llm_rx.sinks")

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
    keepalive: float | None = DEFAULT_KEEPALIVE,
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
    sync source read in the subscribe call on the loop's thread) is given up on once more
    than ``OVERFLOW`` (4 MiB) waits: the read that went past it is kept, the upstream is no
    longer read, and the stream ends with the target's own error (a
    [`ProviderError`][llm_rx.ProviderError], status 503, written by the target's encoder:
    an ``error`` chunk for ``vercel-ui``, ``RUN_ERROR`` for ``ag-ui``, each provider's error
    frame), after what waits; the ``llm_rx.sinks`` logger says why (a warning). The client
    never gets a reply cut silently.

    An SSE target's response sends a keep-alive comment (``: keep-alive``, which every SSE
    reader skips) after ``keepalive`` seconds (15) without a byte, so that proxies which
    close idle connections leave a thinking model's reply alone; ``None``: none (an NDJSON
    target never gets one: it has no comments).

    Args:
        events: The reply's events (subscribed to when the response starts).
        to: The target: a key of ``llm_rx.encoders.ENCODERS`` (a provider's stream, or
            ``vercel-ui`` / ``ag-ui`` for a web page).
        dropped: A list to append a `Dropped` to for each thing the target cannot carry.
        status_code: The response's status.
        headers: More response headers.
        background: A Starlette ``BackgroundTask`` run after the response is sent.
        keepalive: Seconds without a byte before a keep-alive comment; ``None``: none.

    Returns:
        A Starlette ``StreamingResponse``.
    """
    from starlette.responses import StreamingResponse

    make_encoder(to)  # (an unknown target is refused here, not when the response starts)
    body = _body(events, to, dropped)
    if MEDIA_TYPES[to] == "text/event-stream":
        body = kept_alive(body, keepalive)
    return StreamingResponse(body,
                             status_code=status_code,
                             headers={**HEADERS.get(to, {}), **(headers or {})},
                             media_type=MEDIA_TYPES[to], background=background)


async def _body(
    events: Observable[Event], to: str, dropped: list[Dropped] | None
) -> AsyncIterator[bytes]:
    """The events encoded as ``to``, as the async iterator a response sends, through a
    bounded hand-off; leaving it (the client went away, or the stream ended) disposes the
    subscription."""
    handoff = _Handoff(asyncio.get_running_loop())
    encoded = events.pipe(folded(
        lambda _source, _scheduler: _Sending(EncodeFold(to, dropped), handoff, to)))
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


class _Sending(Fold[bytes]):
    """``encode(to)``'s fold, which gives up on a client too slow to read: when a read's
    bytes would leave more than ``OVERFLOW`` waiting for a producer that cannot wait, they
    are its last; the reply then fails with a `ProviderError`, which the encoder writes as
    the target's error frame (no target's format is known here), and the upstream is no
    longer read."""

    def __init__(self, frames: EncodeFold, handoff: _Handoff, to: str) -> None:
        self._frames = frames
        self._handoff = handoff
        self._to = to

    def step(self, events: list[Event]) -> tuple[list[bytes], Exception | None]:
        values, failure = self._frames.step(events)
        if failure is None and values:
            waiting = self._handoff.overflow(values)
            if waiting is not None:
                _log.warning("sse_response: the client reads too slowly: %s bytes of the %r "
                             "stream wait for it (more than %s): the stream ends there, with "
                             "the target's error", f"{waiting:,}", self._to, f"{OVERFLOW:,}")
                failure = ProviderError(
                    "the client reads too slowly: the server gave up on the reply "
                    f"({waiting:,} bytes waited for it)", status=503, retryable=True)
        return values, failure

    def end(self, error: Exception | None) -> tuple[list[bytes], Exception | None]:
        return self._frames.end(error)

    def cancel(self) -> None:
        self._frames.cancel()


class _Handoff:
    """The bounded hand-off between the events' reading and the response's sending.

    At most ``ROOM_READS`` reads wait in it. An async source's reading task waits for room
    (`room`, through ``llm_rx.sources._engine.consumer_space``, as ``to_aiter``'s buffer);
    a producer on another thread (a sync source read on a scheduler's thread) blocks in
    `put` until there is room; a producer on
    the loop's own thread that does not wait (a ``Subject``, a sync source read in the
    subscribe call) is given up on by `_Sending` once more than ``OVERFLOW`` bytes wait
    (`overflow`): the client gets the target's error after what waits, never an unbounded
    buffer.
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

    def overflow(self, values: list[bytes]) -> int | None:
        """How many bytes would wait with ``values`` (one read's), when that is more than
        ``OVERFLOW`` from a producer that cannot wait (on the loop's thread); else ``None``
        (a producer on another thread waits for room in `put`)."""
        if threading.get_ident() != self._thread:
            return None
        with self._lock:
            if not self._items or self._closed:
                return None
            waiting = self._size + sum(len(value) for value in values)
        return waiting if waiting > OVERFLOW else None

    def put(self, data: bytes) -> None:
        """Hand over a read's bytes; from another thread, wait for room first."""
        with self._lock:
            if threading.get_ident() != self._thread:
                self._lock.wait_for(lambda: self._closed or len(self._items) < ROOM_READS)
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
