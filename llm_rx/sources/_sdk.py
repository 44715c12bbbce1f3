"""``from_sdk``: the stream objects the official SDKs return, as sources.

Where the SDK keeps the raw bytes (openai, anthropic: the HTTP response; boto3: the event
stream body) they are read exactly; where it gives only parsed chunks (google-genai, ollama)
each chunk is written back in its wire form and read by the same decoder. No SDK is imported.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import reactivex
from reactivex import Observable, abc
from reactivex import operators as ops

from ..events import Event
from ..wire.providers import ProviderName
from ..wire.resume import Cursor
from ..wire.sdk import already_read, boto_event_stream, chunk_framer, wrapped_http_response
from ..wire.sse import DEFAULT_MAX_FRAME
from ._async import _AsyncSource, loop_for, running_loop
from ._bytes import _BytesSource
from ._httpx import close_awaitable, from_httpx
from ._opening import awaited, opening

__all__ = ["from_sdk"]

#: How much of botocore's raw event-stream body is read at once.
_BOTO_READ = 64 * 1024


def from_sdk(
    sdk_stream: Any,
    provider: ProviderName | None = None,
    *,
    idle_timeout: float | None = None,
    max_frame: int = DEFAULT_MAX_FRAME,
    reconnect: Callable[[Cursor], Any] | None = None,
) -> Observable[Event]:
    """Events from what an official SDK's streaming call returned.

    Takes openai ``Stream`` / ``AsyncStream`` (``chat.completions.create(stream=True)``,
    ``responses.create(stream=True)``) and the ``with_streaming_response`` context's value;
    anthropic ``Stream`` and ``MessageStream`` (``messages.stream()``, entered); a
    google-genai ``generate_content_stream`` iterator (sync or async); an ollama
    ``chat(stream=True)`` / ``generate(stream=True)`` iterator; boto3's ``converse_stream``
    reply. The raw bytes are read where the SDK keeps them (exact), else each parsed chunk
    is put back in its wire form. A stream already partly read is refused (``ValueError``),
    as its first frames are gone; reading it here closes it at the end or on dispose. A
    non-stream reply (``ChatCompletion``, ``Message``, ...) is a ``TypeError`` at the call
    (read it with `llm_rx.from_native`).

    Or the call itself, as a callable (``lambda: client.chat.completions.create(...,
    stream=True)``, an async client's too): each subscription makes it and reads the stream
    it gives (a retry re-sends), so an HTTP error the SDK raises at the call (openai's and
    anthropic's ``RateLimitError``, boto3's ``ClientError``) reaches the observable too.

    An HTTP error the SDK raises, at the call or while it is read (google-genai's
    ``ClientError`` for a 429, ollama's ``ResponseError``), is the
    [`ProviderError`][llm_rx.ProviderError] the same reply gives read from the wire:
    ``status``, ``retryable``, ``retry_after`` (the response's ``Retry-After``); an error
    chunk it raises on mid-stream is the in-band error.

    ``idle_timeout`` bounds each wait for the next bytes, as `from_httpx` does, where llm-rx
    reads them: an openai or anthropic stream (sync or async, through its HTTP response)
    and any async stream. A sync google-genai, ollama or boto3 stream is read by the SDK's
    own blocking iterator, which nothing outside can interrupt: with ``idle_timeout`` it is
    a ``ValueError`` at the call (set the SDK client's own timeout instead).

    Args:
        sdk_stream: What an official SDK's streaming call returned (see above), or a
            callable making that call (each subscription calls it; an async client's call
            is awaited on the running loop, or the loop of an ``AsyncIOScheduler``).
        provider: The provider id (or an alias); told from the SDK object when ``None``.
        idle_timeout: Seconds without a byte (a chunk) after which the reply ends with a
            `StreamTimeoutError` (``None``: no limit).
        max_frame: The largest frame accepted, in bytes; a larger one is a `FrameTooLargeError`.
        reconnect: Given a [`Cursor`][llm_rx.Cursor], makes the streaming call that goes on
            after a dropped connection (``client.responses.retrieve(cursor.reply_id,
            stream=True, starting_after=cursor.sequence_number)``, an async client's
            too), read by the same decoder as `from_httpx`'s ``reconnect`` reads it: for
            the SDKs whose streams keep their HTTP response (openai, anthropic).

    Returns:
        A cold observable of the reply's events.
    """
    if isinstance(sdk_stream, (bytes, bytearray, memoryview, str)):
        raise TypeError("from_sdk() takes an SDK's stream object; for a body use from_bytes()")
    if callable(sdk_stream) and not any(
            hasattr(sdk_stream, name) for name in ("__iter__", "__aiter__", "__next__")):
        return _calling(sdk_stream, provider, idle_timeout, max_frame, reconnect)
    if hasattr(sdk_stream, "__enter__") and type(sdk_stream).__name__.endswith("Manager"):
        raise TypeError(
            "from_sdk() takes the stream a stream manager gives: "
            "`with client.messages.stream(...) as stream: from_sdk(stream)`"
        )
    if hasattr(sdk_stream, "model_dump") and not hasattr(sdk_stream, "__next__"):
        raise TypeError(
            f"from_sdk() takes what a streaming call returns (stream=True, "
            f"generate_content_stream(), converse_stream()); a {type(sdk_stream).__name__} is "
            "a whole non-stream reply: give its JSON body to llm_rx.from_native()"
        )
    response = wrapped_http_response(sdk_stream)
    if response is not None:
        _refuse_read(response)
        return from_httpx(response, provider, idle_timeout=idle_timeout, max_frame=max_frame,
                          reconnect=None if reconnect is None else _responses_of(reconnect))
    if reconnect is not None:
        raise ValueError("from_sdk(reconnect=) reads the continuation's HTTP response: an "
                         "openai or anthropic stream (this SDK's stream keeps none)")
    boto = boto_event_stream(sdk_stream)
    if boto is not None:
        stream, told = boto
        _refuse_read(stream)
        _no_idle_timeout(idle_timeout, "boto3 (botocore.config.Config(read_timeout=...))")
        return _BytesSource(
            lambda: _closing(stream._raw_stream.stream(_BOTO_READ), stream.close),
            provider or told, max_frame,
        )
    _refuse_read(sdk_stream)
    if hasattr(sdk_stream, "__aiter__"):
        return _AsyncSource(_aframes(sdk_stream), provider, max_frame,
                            "from_sdk() on an async stream", idle_timeout)
    if hasattr(sdk_stream, "__iter__") and not isinstance(sdk_stream, dict):
        _no_idle_timeout(idle_timeout, "google-genai (HttpOptions(timeout=...)) or ollama "
                         "(Client(timeout=...))")
        return _BytesSource(lambda: _frames(sdk_stream), provider, max_frame)
    raise TypeError(
        "from_sdk() takes a stream from the openai, anthropic, google-genai, ollama or boto3 "
        f"SDK; got {type(sdk_stream).__name__}"
    )


def _calling(
    call: Callable[[], Any], provider: ProviderName | None, idle_timeout: float | None,
    max_frame: int, reconnect: Callable[[Cursor], Any] | None,
) -> Observable[Event]:
    """``from_sdk(call)``: each subscription makes the streaming call (``call()``, or the
    awaitable it returns awaited on the loop) and reads the stream it gives; an HTTP error
    the call raises is the `ProviderError` of that reply."""

    def read(stream: Any) -> Observable[Event]:
        return from_sdk(stream, provider, idle_timeout=idle_timeout, max_frame=max_frame,
                        reconnect=reconnect)

    def subscribe_to(scheduler: abc.SchedulerBase) -> Observable[Event]:
        made = opening(call)
        if not inspect.isawaitable(made):
            return read(made)
        try:
            loop = loop_for(scheduler, "from_sdk() with an async call")
        except RuntimeError:
            close_awaitable(made)
            raise
        pending = awaited(made)
        if running_loop() is loop:
            return reactivex.from_future(loop.create_task(pending)).pipe(ops.flat_map(read))
        later = asyncio.run_coroutine_threadsafe(pending, loop)  # (the scheduler's loop)
        return reactivex.from_future(later).pipe(ops.flat_map(read))

    return reactivex.defer(subscribe_to)


def _responses_of(reconnect: Callable[[Cursor], Any]) -> Callable[[Cursor], Any]:
    """``reconnect``, giving the HTTP response of the SDK stream it makes (an awaitable of
    it for an async client's call)."""

    def http(stream: Any) -> Any:
        response = wrapped_http_response(stream)
        if response is None:
            raise TypeError("from_sdk(reconnect=): the continuation is no openai or "
                            f"anthropic stream ({type(stream).__name__})")
        return response

    def continuation(cursor: Cursor) -> Any:
        made = reconnect(cursor)
        if not inspect.isawaitable(made):
            return http(made)

        async def opened() -> Any:
            return http(await made)

        return opened()

    return continuation


def _no_idle_timeout(idle_timeout: float | None, sdk: str) -> None:
    if idle_timeout is not None:
        raise ValueError(
            "from_sdk(idle_timeout=) applies where llm-rx reads the bytes (openai, anthropic, "
            f"any async stream); this sync stream is read by the SDK's own blocking iterator: "
            f"set the timeout of {sdk}"
        )


def _refuse_read(stream: object) -> None:
    if already_read(stream):
        raise ValueError(
            "this SDK stream was read from already (its first frames are gone): pass it to "
            "from_sdk() before iterating it"
        )


def _closing(chunks: Iterator[bytes], close: Callable[[], None]) -> Iterator[bytes]:
    try:
        yield from chunks
    finally:
        close()


class _Framer:
    """Writes parsed chunks back as wire bytes, in the form the first chunk's SDK tells."""

    def __init__(self) -> None:
        self._frame: Callable[[Any], bytes] | None = None

    def __call__(self, chunk: object) -> bytes:
        if self._frame is None:
            found = chunk_framer(chunk)
            if found is None:
                raise TypeError(
                    "from_sdk() reads chunks of the google-genai or ollama SDK (others expose "
                    f"their bytes); got a {type(chunk).__name__} chunk"
                )
            self._frame = found[1]
        return self._frame(chunk)


def _frames(chunks: Any) -> Iterator[bytes]:
    frame = _Framer()
    try:
        for chunk in chunks:
            yield frame(chunk)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


async def _aframes(chunks: Any) -> AsyncIterator[bytes]:
    frame = _Framer()
    try:
        async for chunk in chunks:
            yield frame(chunk)
    finally:
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()
