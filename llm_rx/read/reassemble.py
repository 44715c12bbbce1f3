"""``reassemble()``: a recorded or received body straight to a ``Response`` (no Rx needed)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import partial

from ..errors import LlmRxError
from ..events import Event
from ..fold.blocks import appender
from ..fold.builder import ResponseBuilder, fold_error
from ..response import Response
from ..sources._engine import check_chunks, decode_all, new_decoder
from ..wire.base import Decoder
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME

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
    return reassemble_with(new_decoder(provider, max_frame), chunks)


def reassemble_with(decoder: Decoder, chunks: Iterable[bytes]) -> Response:
    """The ``Response`` that ``chunks`` reassemble to through ``decoder``."""
    builder = ResponseBuilder(history=False)
    feed_all = builder.feed_all

    def feed(events: list[Event]) -> None:
        try:
            feed_all(events)
        except (LlmRxError, MemoryError):
            raise
        except Exception as error:  # the boundary: events that do not fold
            raise fold_error(error) from error

    try:
        decode_all(decoder, chunks, feed, fold=partial(appender, builder))  # (and strings)
    except LlmRxError as error:  # (a failing byte source arrives as one too)
        if not builder.started:
            raise
        return builder.build(error)
    return builder.build()
