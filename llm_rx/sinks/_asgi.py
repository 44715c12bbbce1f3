"""``sse_response(events, to)``: a reply's events as a Starlette/FastAPI streaming response in
a target provider's format, for gateways (needs ``starlette``: the ``serve`` extra)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from ..encoders import HEADERS, MEDIA_TYPES
from ..events import Dropped, Event
from ..operators import encode

if TYPE_CHECKING:
    from starlette.responses import StreamingResponse

__all__ = ["sse_response"]

_END = object()


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
    """The encoded bytes as the async iterator a response sends; leaving it (the client
    went away, or the stream ended) disposes the subscription."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()

    def put(item: Any) -> None:  # (from the loop, or from a source's own thread)
        loop.call_soon_threadsafe(queue.put_nowait, item)

    subscription = encoded.subscribe(put, lambda error: put(_END), lambda: put(_END))
    try:
        while (item := await queue.get()) is not _END:
            yield item
    finally:
        subscription.dispose()
