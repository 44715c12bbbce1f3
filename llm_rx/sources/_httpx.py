"""``from_httpx``: events from a streamed ``httpx`` / ``httpx2`` response, sync or async.

Neither package is imported: a response is told by its attributes (``status_code``,
``headers``, ``iter_bytes`` / ``aiter_bytes``), and whether it is async by its byte stream.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable
from reactivex.scheduler import CurrentThreadScheduler

from ..events import Event
from ..wire.http import ERROR_BODY_LIMIT, http_error, provider_from_http
from ..wire.providers import ProviderName
from ..wire.resume import Cursor
from ..wire.sse import DEFAULT_MAX_FRAME
from ._async import read_async
from ._engine import decode_all, decode_all_async, new_decoder
from ._held import Held
from ._httpx_body import ahead, body_reads, head, refuse_read, whole
from ._nonstream import read_nonstream, wants_body
from ._opening import awaited, opening
from ._resume import Resuming, decode_resuming, decode_resuming_async
from ._source import EventSource, Reading, read_through

__all__ = ["from_httpx", "is_response"]


def is_response(value: object) -> bool:
    """Whether ``value`` looks like an httpx / httpx2 response."""
    return hasattr(value, "status_code") and hasattr(value, "headers") and (
        hasattr(value, "iter_bytes") or hasattr(value, "aiter_bytes")
    )


def _is_async(response: Any) -> bool:
    """An async client's response: its byte stream can only be read with ``async for``."""
    stream = getattr(response, "stream", None)
    if stream is None:
        return not hasattr(response, "iter_bytes")
    return hasattr(stream, "__aiter__") and not hasattr(stream, "__iter__")


def _path(response: Any) -> str | None:
    try:  # (a response built by hand has no request: then only its content type tells)
        return str(response.request.url.path)
    except (AttributeError, RuntimeError):
        return None


def _set_read_timeout(response: Any, seconds: float | None) -> None:
    """Make the transport's read timeout ``seconds`` for the rest of the body: httpx and
    httpx2 read ``extensions["timeout"]["read"]`` of the request when the body starts."""
    if seconds is None:
        return
    try:
        timeouts = response.request.extensions.get("timeout")
    except (AttributeError, RuntimeError):
        return
    if isinstance(timeouts, dict):
        timeouts["read"] = seconds


class _HttpxSource(EventSource):
    """Events from a streamed response (or a callable opening one per subscription); the
    response is closed when the reading ends, fails or is disposed."""

    def __init__(
        self, target: Any, provider: ProviderName | None, idle_timeout: float | None,
        max_frame: int, reconnect: Callable[[Cursor], Any] | None = None,
        resume: tuple[int, float] = (0, 0.0),
    ) -> None:
        super().__init__(provider, max_frame)
        self._target = target
        self._idle_timeout = idle_timeout
        self._reconnect = reconnect
        self._reconnects, self._delay = resume

    def _resuming(self, reading: Reading, provider: ProviderName | None) -> Resuming:
        return Resuming(lambda: new_decoder(provider, self._max_frame), reading.emit,
                        reading.fold, self._max_frame, self._reconnects, self._delay)

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        target = self._target
        if not is_response(target):  # a factory: async when a loop runs and it gives an awaitable
            if not _loop_available(scheduler):
                return self._read_sync(reading, scheduler, target)
            opened = opening(target)
            if inspect.isawaitable(opened):
                return self._read_async(reading, opened, scheduler)
            target = opened
        if _is_async(target):
            return self._read_async(reading, target, scheduler)
        return self._read_sync(reading, scheduler, lambda: target)

    def _read_sync(
        self, reading: Reading, scheduler: abc.SchedulerBase | None, opener: Callable[[], Any]
    ) -> abc.DisposableBase:
        held = Held()

        def run(_: abc.SchedulerBase, __: Any = None) -> None:
            read_through(reading, lambda: self._consume(reading, opener, held))

        schedule = (scheduler or CurrentThreadScheduler.singleton()).schedule(run)
        return CompositeDisposable(schedule, Disposable(held.wake))

    def _consume(self, reading: Reading, opener: Callable[[], Any], held: Held) -> None:
        response = opening(opener)
        if inspect.isawaitable(response):
            close_awaitable(response)
            raise TypeError("an async response factory needs a running event loop")
        _check(response)
        held.hold(response)
        chunks: Iterator[bytes] | None = None
        opened = [response]
        try:
            if reading.stopped():
                return
            refuse_read(response)
            provider = self._provider or _provider(response)
            _set_read_timeout(response, self._idle_timeout)  # (every body: error, whole, stream)
            chunks = iter(body_reads(response, "iter_raw", "iter_bytes"))
            if response.status_code >= 400:
                raise http_error(
                    response.status_code, head(chunks), response.headers, provider,
                    now=time.time(),
                )
            if wants_body(response.headers.get("content-type"), _path(response)):
                read_nonstream(whole(chunks, self._max_frame), provider, reading.emit)
                return
            if self._reconnect is not None:
                self._resume_sync(reading, chunks, provider, held, opened)
                return
            decode_all(
                new_decoder(provider, self._max_frame), chunks, reading.emit, reading.stopped,
                reading.fold, self._max_frame,
            )
        finally:
            held.release()
            if chunks is not None and hasattr(chunks, "close"):
                chunks.close()
            for each in opened:
                each.close()

    def _resume_sync(self, reading: Reading, chunks: Iterator[bytes], provider: Any,
                     held: Held, opened: list[Any]) -> None:
        """Read on after a drop: each continuation ``reconnect(cursor)`` opens."""
        reconnect = self._reconnect
        assert reconnect is not None

        def reopen(cursor: Cursor) -> Iterator[bytes]:
            opened[-1].close()
            response = opening(lambda: reconnect(cursor))
            _check(response)
            opened.append(response)
            held.hold(response)
            _set_read_timeout(response, self._idle_timeout)
            reads: Iterator[bytes] = iter(body_reads(response, "iter_raw", "iter_bytes"))
            if response.status_code >= 400:
                raise http_error(response.status_code, head(reads), response.headers,
                                 provider, now=time.time())
            return reads

        decode_resuming(self._resuming(reading, provider), chunks, reading.stopped, reopen,
                        held.disposed.wait)

    def _read_async(
        self, reading: Reading, target: Any, scheduler: abc.SchedulerBase | None
    ) -> abc.DisposableBase:
        opened: list[Any] = []

        async def pump() -> None:
            response = await awaited(target) if inspect.isawaitable(target) else target
            _check(response)
            opened.append(response)
            chunks: AsyncIterator[bytes] | None = None
            try:
                refuse_read(response)
                provider = self._provider or _provider(response)
                chunks = body_reads(response, "aiter_raw", "aiter_bytes").__aiter__()
                if response.status_code >= 400:
                    body = await ahead(chunks, self._idle_timeout, ERROR_BODY_LIMIT)
                    raise http_error(response.status_code, body, response.headers, provider,
                                     now=time.time())
                if wants_body(response.headers.get("content-type"), _path(response)):
                    body = await ahead(chunks, self._idle_timeout, self._max_frame, whole=True)
                    read_nonstream(body, provider, reading.emit)
                    return
                if self._reconnect is not None:
                    await decode_resuming_async(
                        self._resuming(reading, provider), chunks, reading.stopped,
                        lambda cursor: self._reopen(cursor, opened, provider), self._idle_timeout,
                    )
                    return
                await decode_all_async(
                    new_decoder(provider, self._max_frame), chunks, reading.emit,
                    reading.stopped, self._idle_timeout, reading.fold, self._max_frame,
                )
            finally:
                if chunks is not None and hasattr(chunks, "aclose"):
                    await chunks.aclose()
                for each in opened:
                    await each.aclose()

        def never_started() -> None:  # (cancelled before its first step: close it anyway)
            if inspect.isawaitable(target):
                close_awaitable(target)
            elif is_response(target):
                asyncio.get_running_loop().create_task(target.aclose())

        try:
            return read_async(
                reading, pump, never_started, scheduler, "from_httpx() on an async response"
            )
        except RuntimeError:  # (no loop to read on, or .run() inside the running loop)
            if inspect.isawaitable(target):
                close_awaitable(target)
            raise


    async def _reopen(self, cursor: Cursor, opened: list[Any],
                      provider: ProviderName | None) -> AsyncIterator[bytes]:
        """The continuation ``reconnect(cursor)`` opens (the last connection closed)."""
        reconnect = self._reconnect
        assert reconnect is not None
        await opened[-1].aclose()
        target = opening(lambda: reconnect(cursor))
        response = await awaited(target) if inspect.isawaitable(target) else target
        _check(response)
        opened.append(response)
        reads: AsyncIterator[bytes] = body_reads(response, "aiter_raw", "aiter_bytes").__aiter__()
        if response.status_code >= 400:
            body = await ahead(reads, self._idle_timeout, ERROR_BODY_LIMIT)
            raise http_error(response.status_code, body, response.headers, provider,
                             now=time.time())
        return reads


def _loop_available(scheduler: abc.SchedulerBase | None) -> bool:
    """Whether an async response could be read: a loop runs here, or the scheduler has one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        from reactivex.scheduler.eventloop import AsyncIOScheduler

        return isinstance(scheduler, AsyncIOScheduler)
    return True


def close_awaitable(value: Any) -> None:
    """Close a coroutine that will never be awaited (no 'never awaited' warning)."""
    close = getattr(value, "close", None)
    if close is not None:
        close()


def _check(response: object) -> None:
    if not is_response(response):
        raise TypeError(
            "from_httpx() takes an httpx or httpx2 Response opened for streaming "
            "(client.send(request, stream=True), or client.stream(...) entered), or a "
            f"callable returning one; got {type(response).__name__}"
        )


def _provider(response: Any) -> ProviderName | None:
    return provider_from_http(response.headers.get("content-type"), _path(response))


def from_httpx(
    response: Any,
    provider: ProviderName | None = None,
    *,
    idle_timeout: float | None = None,
    max_frame: int = DEFAULT_MAX_FRAME,
    reconnect: Callable[[Cursor], Any] | None = None,
    reconnects: int = 3,
    reconnect_delay: float = 0.5,
) -> Observable[Event]:
    """Events from a streamed ``httpx`` or ``httpx2`` response, sync or async.

    ``response`` is a response opened for streaming (``client.send(request, stream=True)``,
    ``client.stream(...)`` entered), or a callable opening a new one per subscription (so
    ``reactivex.defer`` + ``retry`` is not even needed: ``retry()`` re-subscribes). An async
    response is read by a task on the running loop; a sync one on the subscription's
    scheduler.

    The provider is told by the response's ``Content-Type``, then its request path, then
    the bytes. A status of 400 or more is a [`ProviderError`][llm_rx.ProviderError] with the
    provider's own words from the error body; a non-stream JSON body gives the events of the
    same ``Response``. With ``idle_timeout``, a wait of more than that many seconds for the
    next bytes is a [`StreamTimeoutError`][llm_rx.StreamTimeoutError], after everything that arrived
    (for a sync response through the transport's read timeout, as httpx applies it), for
    every body: a stream, a non-stream body, an error body. The end, an error or disposing
    closes the response; nothing is emitted after that.

    A non-stream body larger than ``max_frame`` (decoded: a compressed body is inflated here,
    64 KiB at a time) is a `FrameTooLargeError` once it grows past it, whatever its type.
    A streamed response is read once: a second subscription fails with the client's own
    ``StreamConsumed`` (a ``RuntimeError``), not with a cut-stream error. A response that
    was read already (``client.post()`` without ``stream=True``, httpx's ``MockTransport``,
    an error body read to log it) is read from the bytes it holds: the same events as a
    streamed read, on every subscription.

    Args:
        response: A streamed ``httpx.Response`` or ``httpx2.Response``, sync or async, or a
            callable that opens one (each subscription calls it: a retry re-sends); an HTTP
            error the callable raises (openai's ``RateLimitError``, an SDK's own,
            ``raise_for_status()``'s) is the `ProviderError` of that reply.
        provider: The provider id (or an alias); told from the response's content type and
            path, then its bytes, when ``None``.
        idle_timeout: Seconds without a byte after which the reply ends with a
            `StreamTimeoutError` (``None``: no limit).
        max_frame: The largest frame accepted, and the largest non-stream body, in bytes;
            a larger one is a `FrameTooLargeError`.
        reconnect: Given a [`Cursor`][llm_rx.Cursor] (the last SSE ``id:``, the last
            ``sequence_number``, the reply's id), opens the continuation of a stream whose
            connection dropped (EOF before the provider's end, a socket that failed or
            went idle): a response as ``response`` is (an awaitable of one for an async
            one) that sends the events after the cursor, such as a ``Last-Event-ID``
            request or OpenAI's ``GET /v1/responses/{id}?stream=true&starting_after=N``.
            The same decoder reads it (the frame cut in half dropped), so the reply is
            the one an unbroken connection gives. ``None``: a drop ends the reply, cut.
        reconnects: Continuations asked in a row without a whole event between them
            before the cut stands (its error says so in a note); a continuation refused
            with a retryable status (429, 503) is one of them, waited at least its
            ``Retry-After``.
        reconnect_delay: Seconds before the first continuation of a gap, doubling (with
            jitter, at most 30 s) for each next one in the same gap.

    Returns:
        A cold observable of the reply's events.
    """
    if not (is_response(response) or callable(response)):
        _check(response)
    if reconnects < 0 or reconnect_delay < 0:
        raise ValueError("reconnects and reconnect_delay must not be negative")
    return _HttpxSource(response, provider, idle_timeout, max_frame, reconnect,
                        (reconnects, reconnect_delay))
