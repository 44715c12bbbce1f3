"""``reassemble()``: a recorded or received body straight to a ``Response`` (no Rx needed)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from .builder import ResponseBuilder
from .errors import LlmRxError
from .response import Response
from .sources._bytes import iter_file
from .sources._engine import decode_all, new_decoder, source_failed
from .wire.sse import DEFAULT_MAX_FRAME

__all__ = ["reassemble"]


def reassemble(
    data: bytes | bytearray | memoryview | Iterable[bytes] | os.PathLike[str],
    provider: str | None = None,
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Response:
    """The ``Response`` a streamed body reassembles to: the same engine as ``to_response()``.

    ``data`` is the body as ``bytes``, an iterable of byte pieces, or a path (``os.PathLike``);
    a ``str`` is refused, as it could be either. A stream that failed after it started gives
    a ``Response`` marked incomplete; a body that is no stream of the provider raises
    :class:`~llm_rx.errors.WireFormatError`.
    """
    chunks: Iterable[bytes]
    if isinstance(data, str):
        raise TypeError("reassemble() takes bytes, an iterable of bytes or a path, not str")
    if isinstance(data, (bytes, bytearray, memoryview)):
        chunks = (bytes(data),)
    elif isinstance(data, os.PathLike):
        chunks = iter_file(data)
    else:
        chunks = data
    builder = ResponseBuilder(history=False)
    decoder = new_decoder(provider, max_frame)
    try:
        decode_all(decoder, chunks, builder.feed_all)
    except LlmRxError as error:
        if not builder.started:
            raise
        return builder.build(error)
    except OSError as error:
        if not builder.started:
            raise
        return builder.build(source_failed(error))
    return builder.build()
