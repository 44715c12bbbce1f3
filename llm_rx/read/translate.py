"""``translate()``: a recorded or received body as another provider's stream (no Rx needed)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from ..encoders import make_encoder
from ..errors import LlmRxError
from ..events import Dropped, Event
from ..fold.builder import fold_error
from ..sources._engine import decode_all, new_decoder
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME

__all__ = ["translate"]


def translate(
    data: bytes | bytearray | memoryview | Iterable[bytes] | os.PathLike[str],
    to: str,
    provider: ProviderName | None = None,
    *,
    on_dropped: Callable[[Dropped], None] | None = None,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> bytes:
    """The bytes of ``to``'s stream for the reply ``data`` is (a stream of ``provider``,
    sniffed when not given): the same engine as ``events.pipe(encode(to))``.

    A source cut short gives what arrived and no terminal frame (or, for a provider's
    in-band error, the target's error frame): never a stream that reads as finished. What
    the target cannot carry is left out and passed to ``on_dropped``, one
    [`Dropped`][llm_rx.Dropped] each. A body that is no stream at all raises
    [`WireFormatError`][llm_rx.WireFormatError], as ``reassemble()`` does.

    Args:
        data: The body: bytes, an iterable of byte pieces, or a `pathlib.Path`.
        to: The target: a key of ``llm_rx.encoders.ENCODERS``.
        provider: The provider id (or an alias); told from the first frame when ``None``.
        on_dropped: Called with each `Dropped`: what the target cannot carry.
        max_frame: The largest frame accepted, in bytes; a larger one is a `FrameTooLargeError`.

    Returns:
        The target's stream, whole.
    """
    if isinstance(data, str):
        raise TypeError("translate() does not take a str: pass pathlib.Path(...) or bytes")
    dropped: list[Dropped] = []
    encoder = make_encoder(to, dropped)
    out: list[bytes] = []

    def encode(events: list[Event]) -> None:
        try:
            out.append(encoder.encode(events))
        except (LlmRxError, MemoryError):
            raise
        except Exception as error:  # the boundary: events that do not encode
            raise fold_error(error) from error

    if isinstance(data, os.PathLike):
        with open(data, "rb") as handle:
            chunks: Iterable[bytes] = [handle.read()]
    elif isinstance(data, (bytes, bytearray, memoryview)):
        chunks = (bytes(data),)
    else:
        chunks = data
    failure: LlmRxError | None = None
    try:
        decode_all(new_decoder(provider, max_frame), chunks, encode, max_frame=max_frame)
    except LlmRxError as error:
        if not encoder.started:
            raise
        failure = error
    out.append(encoder.finish(failure))
    if on_dropped is not None:
        for item in dropped:
            on_dropped(item)
    return b"".join(out)
