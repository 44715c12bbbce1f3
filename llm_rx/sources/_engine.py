"""The one loop every source and ``reassemble`` runs: bytes through a decoder to events."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import IncompleteStreamError, LlmRxError
from ..events import Event
from ..wire.base import PASS_THROUGH, Decoder, shape_error
from ..wire.providers import ProviderName
from ..wire.registry import SniffingDecoder, make_decoder
from ..wire.sse import DEFAULT_MAX_FRAME

__all__ = ["decode_all", "decoded", "flushed", "new_decoder", "source_failed"]


def new_decoder(provider: ProviderName | None, max_frame: int = DEFAULT_MAX_FRAME) -> Decoder:
    """The decoder for ``provider``, or one that tells the provider from the first bytes."""
    if provider is None:
        return SniffingDecoder(max_frame)
    return make_decoder(provider, max_frame)


def source_failed(error: BaseException) -> LlmRxError:
    """A byte source (a socket, a file) failed mid-stream: that is a cut stream."""
    failure = IncompleteStreamError(f"the byte source failed: {type(error).__name__}: {error}")
    failure.__cause__ = error
    return failure


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
    """``decoder.flush()`` behind the same boundary as :func:`decoded`."""
    try:
        return decoder.flush()
    except PASS_THROUGH:
        raise
    except Exception as error:  # the boundary
        raise _unforeseen(decoder, error, None) from error


def _unforeseen(decoder: Decoder, error: Exception, chunk: bytes | None) -> LlmRxError:
    decoder.finished = True
    return shape_error(error, chunk)


def decode_all(
    decoder: Decoder,
    chunks: Iterable[bytes],
    emit: Callable[[list[Event]], None],
    stopped: Callable[[], bool] = lambda: False,
) -> None:
    """Feed every chunk, then EOF, emitting the events of each chunk in order (as one list);
    a decoding error is raised after the events decoded before it were emitted, and a failure
    of the byte source itself (a socket, a file) as an ``IncompleteStreamError`` whose cause
    it is. What ``emit`` raises is the consumer's and passes through untouched. Returns early
    once ``stopped()``."""
    try:
        iterator = iter(chunks)
        while not stopped():
            try:
                chunk = next(iterator)
            except StopIteration:
                break
            except Exception as error:  # the byte source failed: a cut stream
                raise source_failed(error) from error
            events = decoded(decoder, chunk if chunk.__class__ is bytes else bytes(chunk))
            if events:
                emit(events)
        else:
            return
        emit(flushed(decoder))
    except LlmRxError as error:
        emit(getattr(error, "events", []))
        raise
