"""The loops every source and ``reassemble`` run: bytes through a decoder to events.

`decode_all` (sync) and `decode_all_async` only take reads from their source and hand them to
one `BodyDecoding` (``sources/_body.py``), which decides what they mean, so the two loops
cannot drift apart."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextvars import ContextVar

from .. import speed
from ..errors import IncompleteStreamError, LlmRxError, StreamTimeoutError
from ..events import Event
from ..wire.base import Decoder, TextFold
from ..wire.providers import ProviderName
from ..wire.registry import SniffingDecoder, make_decoder
from ..wire.sdk_errors import sdk_error
from ..wire.sse import DEFAULT_MAX_FRAME
from ._body import BYTES_TYPES, BodyDecoding, as_bytes, decoded, flushed, wrong_chunk

__all__ = [
    "BYTES_TYPES",
    "BodyDecoding",
    "as_bytes",
    "check_chunks",
    "consumer_space",
    "decode_all",
    "decode_all_async",
    "decoded",
    "flushed",
    "new_decoder",
    "source_failed",
    "wrong_chunk",
]


#: Set by an async consumer while it subscribes (`llm_rx.to_aiter`): what an async reading
#: awaits before each read, so a consumer slower than the stream holds the reading back (its
#: buffer bounded) instead of letting events pile up. The reading task inherits it.
consumer_space: ContextVar[Callable[[], Awaitable[None]] | None] = ContextVar(
    "llm_rx_consumer_space", default=None
)


def new_decoder(provider: ProviderName | None, max_frame: int = DEFAULT_MAX_FRAME) -> Decoder:
    """The decoder for ``provider``, or one that tells the provider from the first bytes;
    with the speed shortcuts on here (`llm_rx.speed.active`), the ones that take them."""
    decoders = speed.decoders() if speed.active() else None
    if provider is None:
        return SniffingDecoder(max_frame, decoders=decoders)
    return make_decoder(provider, max_frame, decoders=decoders)


def source_failed(error: BaseException) -> LlmRxError:
    """A byte source (a socket, a file) failed mid-stream: that is a cut stream; one that
    timed out waiting for bytes (``TimeoutError``, httpx's ``ReadTimeout``) is a
    [`StreamTimeoutError`][llm_rx.StreamTimeoutError]. An official SDK's own error for an
    HTTP error status (google-genai's ``ClientError`` for a 429, ollama's ``ResponseError``,
    raised inside their iterators) is the [`ProviderError`][llm_rx.ProviderError] the same
    reply read from the wire gives (status, ``retryable``, ``retry_after``); one for an error
    frame, the in-band error. A typed error the byte source raised itself (a WebSocket
    closed with its close code, its idle timeout) stands as it is. Running out of memory is
    no cut stream: a ``MemoryError`` is raised again as it is."""
    if isinstance(error, MemoryError):
        raise error
    if isinstance(error, LlmRxError):
        return error
    told = sdk_error(error, now=time.time())
    if told is not None:
        if told is not error:
            told.__cause__ = error
        return told
    words = f"{type(error).__name__}: {error}".rstrip(": ")
    failure: IncompleteStreamError
    if _timed_out(error):
        failure = StreamTimeoutError(f"no bytes arrived in time ({words})")
    else:
        failure = IncompleteStreamError(f"the byte source failed: {words}")
    failure.__cause__ = error
    return failure


def _timed_out(error: BaseException) -> bool:
    """A timeout of any transport, told without importing it (httpx's, httpx2's, urllib3's
    ``ReadTimeout``/``ReadTimeoutError`` are no ``TimeoutError``)."""
    return isinstance(error, TimeoutError) or any(
        cls.__name__ in ("ReadTimeout", "ReadTimeoutError") for cls in type(error).__mro__
    )


def check_chunks(data: object, caller: str) -> None:
    """Refuse at the call what can never be a body's pieces: ``str``, a single non-byte
    value, a list whose first piece is no bytes (parsed dicts, text lines)."""
    if isinstance(data, str):
        raise TypeError(f"{caller} takes bytes or an iterable of bytes, not str")
    if isinstance(data, (list, tuple)) and data and not isinstance(data[0], BYTES_TYPES):
        raise TypeError(f"{caller}: {wrong_chunk(data[0])}")
    if not (isinstance(data, BYTES_TYPES) or hasattr(data, "__iter__")):
        raise TypeError(
            f"{caller} takes bytes or an iterable of bytes, not {type(data).__name__}"
            + _hint(data)
        )


def _hint(data: object) -> str:
    if hasattr(data, "__aiter__"):
        return " (an async iterable: use from_async_bytes())"
    if hasattr(data, "iter_bytes") or hasattr(data, "aiter_bytes"):
        return " (an HTTP response: use from_httpx())"
    return ""


def decode_all(
    decoder: Decoder,
    chunks: Iterable[bytes],
    emit: Callable[[list[Event]], None],
    stopped: Callable[[], bool] = bool,  # (``bool()`` is False: never stopped, a C call)
    fold: TextFold | None = None,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> None:
    """Feed every chunk, then EOF, emitting the events of each chunk in order (as one list);
    a decoding error is raised after the events decoded before it were emitted, and a failure
    of the byte source itself (a socket, a file) as an ``IncompleteStreamError`` whose cause
    it is. What ``emit`` raises is the consumer's and passes through untouched. Returns early
    once ``stopped()``; a generator is closed when it ends, fails or stops.

    What the reads mean is `BodyDecoding`'s (``sources/_body.py``), shared with
    `decode_all_async()`: this loop only takes the reads. A body that is a provider's
    non-stream reply is read as that reply (re-framed as the provider's stream,
    `llm_rx.wire.restream`).

    ``fold``: the events only go to a fold, which takes what the decoder gives it directly
    (see ``Decoder.fold_into``) once the reply started. ``max_frame`` bounds a non-stream
    body, kept whole to be read as its reply (the decoder bounds a stream's frames)."""
    body = BodyDecoding(decoder, emit, fold, max_frame)
    iterator = iter(chunks)
    try:
        while not stopped():
            try:
                chunk = next(iterator)
            except StopIteration:
                break
            except Exception as error:  # noqa: BLE001 - the byte source failed: a cut stream
                failure = source_failed(error)  # (or its typed error: its own cause kept)
                raise failure from failure.__cause__
            body.read(chunk)
        else:
            return
        body.end()
    except LlmRxError as error:
        body.failed(error)
        raise
    finally:
        if inspect.isgenerator(iterator):  # (stopped early: the source closes now, not at GC)
            iterator.close()


async def decode_all_async(
    decoder: Decoder,
    chunks: AsyncIterator[bytes],
    emit: Callable[[list[Event]], None],
    stopped: Callable[[], bool],
    idle_timeout: float | None = None,
    fold: TextFold | None = None,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> None:
    """`decode_all()` for an async byte iterator, each read bounded by ``idle_timeout``
    seconds when given (then a read that takes longer is a `StreamTimeoutError`); the same
    `BodyDecoding` decides what the reads mean, so both give the same events."""
    body = BodyDecoding(decoder, emit, fold, max_frame)
    space = consumer_space.get()
    try:
        while not stopped():
            if space is not None:
                await space()  # (a slow consumer: no read until its buffer has room)
                if stopped():
                    return
            try:
                if idle_timeout is None:
                    chunk = await chunks.__anext__()
                else:
                    async with asyncio.timeout(idle_timeout):
                        chunk = await chunks.__anext__()
            except StopAsyncIteration:
                break
            except (asyncio.CancelledError, LlmRxError):
                raise
            except Exception as error:  # noqa: BLE001 - the byte source failed: a cut stream
                failure = source_failed(error)  # (or its typed error: its own cause kept)
                raise failure from failure.__cause__
            body.read(chunk)
        else:
            return
        body.end()
    except LlmRxError as error:
        body.failed(error)
        raise
    finally:
        if inspect.isasyncgen(chunks):
            await chunks.aclose()
