"""The one loop every source and ``reassemble`` runs: bytes through a decoder to events."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import IncompleteStreamError, LlmRxError
from ..events import Event
from ..wire.base import Decoder
from ..wire.registry import SniffingDecoder, make_decoder
from ..wire.sse import DEFAULT_MAX_FRAME

__all__ = ["decode_all", "new_decoder", "source_failed"]


def new_decoder(provider: str | None, max_frame: int = DEFAULT_MAX_FRAME) -> Decoder:
    """The decoder for ``provider``, or one that tells the provider from the first bytes."""
    if provider is None:
        return SniffingDecoder(max_frame)
    return make_decoder(provider, max_frame)


def source_failed(error: BaseException) -> LlmRxError:
    """A byte source (a socket, a file) failed mid-stream: that is a cut stream."""
    failure = IncompleteStreamError(f"the byte source failed: {type(error).__name__}: {error}")
    failure.__cause__ = error
    return failure


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
            events = decoder.decode(chunk if chunk.__class__ is bytes else bytes(chunk))
            if events:
                emit(events)
        else:
            return
        emit(decoder.flush())
    except LlmRxError as error:
        emit(getattr(error, "events", []))
        raise
