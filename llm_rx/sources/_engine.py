"""The one loop every source and ``reassemble`` runs: bytes through a decoder to events."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextvars import ContextVar

import orjson

from ..errors import IncompleteStreamError, LlmRxError, NonStreamBodyError, StreamTimeoutError
from ..events import Event
from ..wire import fast
from ..wire.base import PASS_THROUGH, Decoder, shape_error
from ..wire.fast.batches import TextFold
from ..wire.providers import ProviderName, provider_id
from ..wire.registry import DECODERS, SniffingDecoder, make_decoder
from ..wire.restream import restream
from ..wire.sniffing import SNIFF_LIMIT
from ..wire.sse import DEFAULT_MAX_FRAME

__all__ = [
    "BYTES_TYPES",
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

BYTES_TYPES = (bytes, bytearray, memoryview)


#: Set by an async consumer while it subscribes (`llm_rx.to_aiter`): what an async reading
#: awaits before each read, so a consumer slower than the stream holds the reading back (its
#: buffer bounded) instead of letting events pile up. The reading task inherits it.
consumer_space: ContextVar[Callable[[], Awaitable[None]] | None] = ContextVar(
    "llm_rx_consumer_space", default=None
)


def new_decoder(provider: ProviderName | None, max_frame: int = DEFAULT_MAX_FRAME) -> Decoder:
    """The decoder for ``provider``, or one that tells the provider from the first bytes."""
    if provider is None:
        return SniffingDecoder(max_frame)
    return make_decoder(provider, max_frame)


def source_failed(error: BaseException) -> LlmRxError:
    """A byte source (a socket, a file) failed mid-stream: that is a cut stream; one that
    timed out waiting for bytes (``TimeoutError``, httpx's ``ReadTimeout``) is a
    [`StreamTimeoutError`][llm_rx.StreamTimeoutError]. Running out of memory is no cut
    stream: a ``MemoryError`` is raised again as it is."""
    if isinstance(error, MemoryError):
        raise error
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


def as_bytes(chunk: object) -> bytes:
    """A read as ``bytes``; anything but bytes is refused with what was expected."""
    if isinstance(chunk, BYTES_TYPES):
        return bytes(chunk)
    raise TypeError(wrong_chunk(chunk))


def wrong_chunk(chunk: object) -> str:
    """What a byte source should give instead of ``chunk``."""
    hint = {
        "str": "encode the text, or pass the body as bytes",
        "dict": "a parsed chunk is no body: pass the raw bytes, or an SDK's stream to from_sdk()",
    }.get(type(chunk).__name__, "pass the body's bytes")
    return f"a byte source must give bytes, not {type(chunk).__name__} ({hint})"


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


def decoded(decoder: Decoder, chunk: bytes) -> list[Event]:
    """``decoder.decode(chunk)`` behind the error boundary: whatever it raises is an
    ``LlmRxError`` (a decoder's own check gives the exact frame; a failure no check foresaw
    gives a ``WireFormatError`` carrying the chunk), and the decoder is finished."""
    try:
        return decoder.decode(chunk)
    except PASS_THROUGH:
        raise
    except Exception as error:  # the boundary
        raise _unforeseen(decoder, error, chunk) from error


def flushed(decoder: Decoder) -> list[Event]:
    """``decoder.flush()`` behind the same boundary as `decoded()`."""
    try:
        return decoder.flush()
    except PASS_THROUGH:
        raise
    except Exception as error:  # the boundary
        raise _unforeseen(decoder, error, None) from error


def _unforeseen(decoder: Decoder, error: Exception, chunk: bytes | None) -> LlmRxError:
    decoder.finished = True
    return shape_error(error, chunk)


# A read larger than this is decoded in reads of ``_READ`` bytes: a whole body then costs what
# it costs in a connection's reads (one list of events per read keeps the batches short).
_READ = 64 * 1024
_READ_LIMIT = 2 * _READ

# A non-stream body is told within the head the sniffer holds (at most this much is kept to
# read it again as the reply it is).
_HEAD_KEPT = 16 * SNIFF_LIMIT


def decode_all(
    decoder: Decoder,
    chunks: Iterable[bytes],
    emit: Callable[[list[Event]], None],
    stopped: Callable[[], bool] = lambda: False,
    fold: TextFold | None = None,
) -> None:
    """Feed every chunk, then EOF, emitting the events of each chunk in order (as one list);
    a decoding error is raised after the events decoded before it were emitted, and a failure
    of the byte source itself (a socket, a file) as an ``IncompleteStreamError`` whose cause
    it is. What ``emit`` raises is the consumer's and passes through untouched. Returns early
    once ``stopped()``; a generator is closed when it ends, fails or stops.

    A body that is a provider's non-stream reply (the decoder raises ``NonStreamBodyError``
    before any event) is read as that reply: re-framed as the provider's stream
    (`llm_rx.wire.restream`) and decoded as such.

    ``fold``: the events only go to a fold, which takes what the decoder gives it directly
    (see ``Decoder.fold_into``) once the reply started."""
    head: list[bytes] | None = []  # the chunks read before the reply started
    kept = 0
    iterator = iter(chunks)
    # Each read goes to the decoder's ``decode``; once the reply started, to the decoder a
    # wrapper hands reads to (its check of the first frames is over), behind the same
    # boundary as ``decoded()``, inlined: a live stream's reads are a frame each.
    reader = decoder
    decode = decoder.decode
    whole = fast.enabled  # (a whole body decoded as reads of ``_READ`` bytes)
    try:
        while not stopped():
            try:
                chunk = next(iterator)
            except StopIteration:
                break
            except Exception as error:  # the byte source failed: a cut stream
                raise source_failed(error) from error
            if chunk.__class__ is not bytes:
                chunk = as_bytes(chunk)
            if head is not None:
                kept += len(chunk)
                if decoder.started or kept > _HEAD_KEPT:
                    head = None
                    if whole:
                        reader = decoder.settled()
                        decode = reader.decode
                        if fold is not None:
                            reader.fold_into(fold)
                else:
                    head.append(chunk)
            if len(chunk) > _READ_LIMIT and whole:
                for start in range(0, len(chunk), _READ):  # (a whole body: its reads)
                    events = decoded(reader, chunk[start : start + _READ])
                    if events:
                        emit(events)
                continue
            try:
                events = decode(chunk)
            except PASS_THROUGH:
                raise
            except Exception as error:  # the boundary (see ``decoded()``)
                raise _unforeseen(reader, error, chunk) from error
            if events:
                emit(events)
        else:
            return
        emit(flushed(decoder))
    except NonStreamBodyError as error:
        if head is None or getattr(error, "events", None):
            raise
        body = _restreamed(head, iterator, error)
        decode_all(_reader(error.provider), (body,), emit, stopped, fold)
    except LlmRxError as error:
        emit(getattr(error, "events", []))
        raise
    finally:
        if inspect.isgenerator(iterator):  # (stopped early: the source closes now, not at GC)
            iterator.close()


def _reader(provider: str) -> Decoder:
    """The bare decoder of ``provider`` (no check of the head: the bytes are its stream)."""
    return DECODERS[provider_id(provider)](DEFAULT_MAX_FRAME)


def _restreamed(head: list[bytes], rest: Iterator[bytes], error: NonStreamBodyError) -> bytes:
    """The whole non-stream body (what was read and the rest) as its provider's stream."""
    try:
        body = b"".join([*head, *map(as_bytes, rest)])
    except Exception as failure:  # the byte source failed: a cut body
        raise source_failed(failure) from failure
    try:
        parsed = orjson.loads(body)
        if not isinstance(parsed, dict):
            raise TypeError("not a JSON object")
        return restream(parsed, error.provider)
    except orjson.JSONDecodeError:
        raise IncompleteStreamError("the body ended inside its JSON", body[:200]) from None
    except Exception as failure:  # the boundary: a body of another shape
        raise shape_error(failure, body[:200]) from failure


async def decode_all_async(
    decoder: Decoder,
    chunks: AsyncIterator[bytes],
    emit: Callable[[list[Event]], None],
    stopped: Callable[[], bool],
    idle_timeout: float | None = None,
    fold: TextFold | None = None,
) -> None:
    """`decode_all()` for an async byte iterator, each read bounded by ``idle_timeout``
    seconds when given (then a read that takes longer is a `StreamTimeoutError`)."""
    reader = decoder  # (as in ``decode_all``: once the reply started, the decoder wrapped)
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
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the byte source failed: a cut stream
                raise source_failed(error) from error
            if reader is decoder and decoder.started and fast.enabled:
                reader = decoder.settled()
                if fold is not None:
                    reader.fold_into(fold)
            events = decoded(reader, chunk if chunk.__class__ is bytes else as_bytes(chunk))
            if events:
                emit(events)
        else:
            return
        emit(flushed(decoder))
    except LlmRxError as error:
        emit(getattr(error, "events", []))
        raise
    finally:
        if inspect.isasyncgen(chunks):
            await chunks.aclose()
