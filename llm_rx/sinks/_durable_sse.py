"""``durable_sse_response()``: serve a reply read from a Durable Streams server to a browser
as standard SSE, the layout of ``redis_sse_response``: each event's ``id:`` is the position
after it in the stream (``OFFSET:N``, the Nth item after the server's offset ``OFFSET``, as
``from_durable_stream(with_offsets=True)`` gives inside an answer), so an ``EventSource``
that reconnects (sending ``Last-Event-ID``) resumes exactly after the last event it got.

A server's answer may hold the whole reply (the reference server answers a read with all
that follows the offset), so an answer is read as it arrives, one item at a time
(`_Items`), and only as fast as the client takes the frames: a client that falls behind
stops the reading of the answer (its bytes wait in the server and the sockets), and the
response holds one item of it. A connection dropped inside an answer is read again from the
same offset, the items already sent skipped. What to ask and how to judge an answer is
``llm_rx.sources._durable._Follower``'s, as for ``from_durable_stream``.

``starlette`` and ``httpx`` are imported only when a response is made.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ..errors import FrameTooLargeError, IncompleteStreamError, LlmRxError, WireFormatError
from ..events import Event
from ..sources._durable import DEFAULT_IDLE_TIMEOUT, DEFAULT_RETRIES, _Follower, _transient
from ..sources._httpx_body import body_reads
from ..sources._redis_entries import Ended, read_item
from ..wire.sse import DEFAULT_MAX_FRAME
from ._keepalive import DEFAULT_KEEPALIVE, kept_alive
from ._redis_sse import end_frame, event_frame

__all__ = ["durable_sse_frames", "durable_sse_response"]

_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_BLANK = " \t\r\n"
# (a compressed answer is inflated in bounded pieces, `body_reads`: a small read of it can
# hold megabytes of a repetitive reply; brotli and zstd are not asked for, which need an extra)
_ASK = {"Accept-Encoding": "gzip, deflate"}


class _Items:
    """The items of a JSON array that arrives in pieces, each as soon as it is whole. Where
    the reading is: ``"open"`` (``[`` expected), ``"first"`` (an item or ``]``), ``"next"``
    (``,`` or ``]``), ``"item"`` (an item, after a ``,``), ``"closed"``."""

    def __init__(self, where: str, most: int = DEFAULT_MAX_FRAME) -> None:
        self._where = where
        self._most = most  # (the longest item waited for: a longer one is refused)
        self._text = ""
        self._state = "open"
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._json = json.JSONDecoder()

    def feed(self, data: bytes) -> list[Any]:
        """The items ``data`` completed (an item cut at its end waits for the next piece)."""
        text = self._text + self._utf8.decode(data)
        at, items = 0, []
        while True:
            while at < len(text) and text[at] in _BLANK:
                at += 1
            if at == len(text):
                break
            if self._state in ("first", "item") and not (self._state == "first"
                                                         and text[at] == "]"):
                try:
                    item, at = self._json.raw_decode(text, at)
                except json.JSONDecodeError:
                    break  # (cut at the piece's end, or bad: `finish` tells)
                items.append(item)
                self._state = "next"
                continue
            self._state = self._after(text, at)
            at += 1
        self._text = text[at:]
        if len(self._text) > self._most:  # (one item still unfinished past the bound)
            raise FrameTooLargeError(
                f"{self._where}: an item longer than the limit of {self._most} characters",
                self._text[:200])
        return items

    def _after(self, text: str, at: int) -> str:
        """The state after the sign at ``text[at]`` (``[``, ``,`` or ``]``)."""
        sign = text[at]
        if sign not in {"open": "[", "first": "]", "next": ",]"}.get(self._state, ""):
            raise WireFormatError(f"{self._where}: no JSON array of items",
                                  text[at:at + 2000])
        return "item" if sign == "," else "first" if sign == "[" else "closed"

    def finish(self) -> None:
        """The answer ended: anything but a closed array is a ``WireFormatError``."""
        rest = self._text + self._utf8.decode(b"", final=True)
        if self._state != "closed" or rest.strip(_BLANK):
            raise WireFormatError(f"{self._where}: no whole JSON array of items", rest[:2000])


async def _events(client: Any, follower: _Follower) -> AsyncGenerator[tuple[str, Event], None]:
    """Each event of the reply with its position, read one item at a time as the consumer
    takes them (the time it takes is no silence of the producer's); returns at the reply's
    end, raises the error that ended it."""
    while True:
        params, left = follower.request()
        try:
            async with client.stream("GET", follower.url, params=params, headers=_ASK,
                                     timeout=left + 5.0) as answer:
                if answer.status_code != 200:
                    wait = follower.judged(answer.status_code, await answer.aread())
                    if wait is None:  # (204: nothing new)
                        follower.advanced(answer.headers)
                    else:
                        await asyncio.sleep(wait)
                    continue
                follower.judged(200, b"")
                base, taken = follower.offset, 0
                where = f"Durable Stream {follower.url} at offset {base}"
                items = _Items(where)
                async for data in body_reads(answer, "aiter_raw", "aiter_bytes"):
                    for item in items.feed(data):
                        taken += 1
                        if taken <= follower.skip:
                            continue  # (sent before a dropped connection)
                        follower.skip = taken
                        follower.deadline = time.monotonic() + follower.timeout
                        read = read_item(f"item {taken - 1} after offset {base}", item)
                        if isinstance(read, Ended):
                            if read.error is not None:
                                raise read.error
                            return
                        if read is not None:
                            since = time.monotonic()
                            yield f"{base}:{taken}", read
                            follower.deadline += time.monotonic() - since
                items.finish()
                follower.skip = 0
                if follower.advanced(answer.headers):
                    raise IncompleteStreamError(
                        f"Durable Stream {follower.url} was closed at offset {follower.offset} "
                        "without the reply's end (the reply was cut)")
        except Exception as error:
            if not _transient(error):
                raise
            await asyncio.sleep(follower.failed(type(error).__name__, error))


async def durable_sse_frames(
    url: str,
    offset: str = "-1",
    *,
    client: Any = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
) -> AsyncIterator[bytes]:
    """The SSE frames of the reply at ``url`` after ``offset``, then an ``end`` or ``error``
    frame, read with ``client`` (an ``httpx.AsyncClient``; ``None``: one of its own, closed
    at the end) as the frames are taken; leaving early stops the reading."""
    owned = None
    if client is None:
        import httpx

        client = owned = httpx.AsyncClient()
    events = _events(client, _Follower(url, offset, True, idle_timeout, retries))
    try:
        try:
            async for position, event in events:
                yield event_frame(position, event)
        except LlmRxError as error:
            yield end_frame(error)
        else:
            yield end_frame(None)
    finally:
        await events.aclose()
        if owned is not None:
            await owned.aclose()


def durable_sse_response(
    url: str,
    request: Any = None,
    *,
    offset: str = "-1",
    client: Any = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
    keepalive: float | None = DEFAULT_KEEPALIVE,
) -> Any:
    """A Starlette ``StreamingResponse`` (``text/event-stream``) of the reply that
    ``sinks.to_durable_stream(events, url)`` appends (``to="events"``): from ``offset``
    (``"-1"``: the start), or after the request's ``Last-Event-ID`` header when ``request``
    has one; caught up, it follows the reply live (long-poll) until its end.

    The layout is ``redis_sse_response``'s: each event is ``id: <position>``, ``event:
    <type>``, ``data: <event JSON>``, where the position is the one after the event in the
    stream (``OFFSET:N``: the Nth item after the server's offset ``OFFSET``; any
    ``from_durable_stream`` takes it as ``offset``); the reply ends with an ``end`` frame, or
    ``error`` with the error's kind, message and raw frame (a cut reply, a producer silent
    for ``idle_timeout`` seconds, a stream that could not be read ``retries`` times in a
    row), on which the page should close its ``EventSource``.

    A client that falls behind slows the reading: the server's answer is read one item at a
    time as the client takes the frames, so a slow client holds one item in the server (and
    what the sockets' buffers take), however much of the reply the answer holds; it is
    never dropped, and never sent less than the reply. The time spent waiting for the client
    is no silence of the producer's. After ``keepalive`` seconds (15) without a frame a
    keep-alive comment (``: keep-alive``) is sent.

    Args:
        url: The stream's URL on a Durable Streams server.
        request: The Starlette request, whose ``Last-Event-ID`` header says where to resume.
        offset: Where to start when the request names none.
        client: An ``httpx.AsyncClient``; ``None``: a new one per response, closed at its end.
        idle_timeout: Seconds without a new item before the reply ends cut.
        retries: Failed requests in a row before the reply ends cut.
        keepalive: Seconds without a frame before a keep-alive comment; ``None``: none.

    Returns:
        A Starlette ``StreamingResponse``.
    """
    from starlette.responses import StreamingResponse

    if idle_timeout <= 0 or retries < 1:
        raise ValueError("idle_timeout must be positive and retries >= 1")
    headers = getattr(request, "headers", None) or {}
    resume = headers.get("last-event-id") or offset
    frames = durable_sse_frames(url, resume, client=client, idle_timeout=idle_timeout,
                                retries=retries)
    return StreamingResponse(kept_alive(frames, keepalive), media_type="text/event-stream",
                             headers=_HEADERS)
