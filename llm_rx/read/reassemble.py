"""``reassemble()``: a recorded or received body straight to a ``Response`` (no Rx needed)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import LlmRxError
from ..events import Event
from ..fold.blocks import appender
from ..fold.builder import ResponseBuilder, fold_error
from ..response import Response
from ..sources._engine import check_chunks, decode_all, new_decoder
from ..wire.base import Decoder
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME

# Events gathered from the reads before they are folded (a bound: a few hundred at a time).
_GATHERED = 256

__all__ = ["reassemble", "reassemble_with"]


def reassemble(
    data: bytes | bytearray | memoryview | Iterable[bytes] | os.PathLike[str],
    provider: ProviderName | None = None,
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Response:
    """The ``Response`` a streamed body reassembles to: the same engine as ``to_response()``.

    ``data`` is the body as ``bytes``, an iterable of byte pieces, or a path (``os.PathLike``);
    a ``str`` is refused, as it could be either. A stream that failed after it started gives
    a ``Response`` marked incomplete; a body that is no stream of the provider raises
    [`WireFormatError`][llm_rx.WireFormatError]. A provider's non-stream body (one JSON object)
    gives the reply it is, as [`from_native()`][llm_rx.from_native] does.

    Args:
        data: The body: bytes, an iterable of byte pieces, or a `pathlib.Path`.
        provider: The provider id (or an alias); told from the first frame when ``None``.
        max_frame: The largest frame accepted, in bytes; a larger one is a `FrameTooLargeError`.

    Returns:
        The reply; one cut short is marked incomplete, with what arrived.
    """
    if isinstance(data, str):
        raise TypeError(
            "reassemble() does not take a str (a path or the body? it cannot tell): pass "
            "pathlib.Path(...) for a file, or the body as bytes (text.encode())"
        )
    if isinstance(data, os.PathLike):
        with open(data, "rb") as handle:  # (a missing file raises here, as open() does)
            return _reassemble(iter(lambda: handle.read(64 * 1024), b""), provider, max_frame)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return _reassemble((bytes(data),), provider, max_frame)
    check_chunks(data, "reassemble()")
    return _reassemble(data, provider, max_frame)


def _reassemble(chunks: Iterable[bytes], provider: ProviderName | None, max_frame: int) -> Response:
    return reassemble_with(new_decoder(provider, max_frame), chunks, max_frame)


def reassemble_with(
    decoder: Decoder, chunks: Iterable[bytes], max_frame: int = DEFAULT_MAX_FRAME
) -> Response:
    """The ``Response`` that ``chunks`` reassemble to through ``decoder``.

    Nothing is emitted per read here, so the reads' events are folded a few hundred at a
    time (one call per read to gather them); the strings a decoder gives the fold directly
    (``Decoder.fold_into``) come after the events gathered before them are folded."""
    builder = ResponseBuilder(history=False)
    pending: list[Event] = []

    def fed() -> None:
        if pending:
            try:
                builder.feed_all(pending)
            except (LlmRxError, MemoryError):
                raise
            except Exception as error:  # the boundary: events that do not fold
                raise fold_error(error) from error
            finally:
                pending.clear()

    def emit(events: list[Event]) -> None:
        pending.extend(events)
        if len(pending) >= _GATHERED:
            fed()

    def fold(event_type: Any, index: int, before: list[Event] | None = None
             ) -> Callable[[str], object] | None:
        if before:  # (the events of the same read before the strings)
            pending.extend(before)
            before.clear()
        fed()
        return appender(builder, event_type, index)

    try:
        decode_all(decoder, chunks, emit, fold=fold, max_frame=max_frame)
        fed()
    except LlmRxError as error:  # (a failing byte source arrives as one too)
        ended = error
        try:
            fed()
        except LlmRxError as folded:  # (the events before the error started another
            ended = folded  # response: this one ended there)
        if not builder.started:
            raise  # (nothing folded: nothing started another response)
        return builder.build(ended)
    return builder.build()
