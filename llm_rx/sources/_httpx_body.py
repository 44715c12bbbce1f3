"""Reading an httpx / httpx2 response's body for `from_httpx`: which reads to take (as
they came, inflated here, or decoded by the client), a body read already, an error body's
head, a whole non-stream body."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

from .. import speed
from ..errors import LlmRxError
from ..wire.http import ERROR_BODY_LIMIT
from ._body import body_too_large
from ._engine import source_failed
from ._inflate import ainflated, inflated, inflater

__all__ = ["ahead", "body_reads", "head", "refuse_read", "whole"]


def _holds_body(response: Any) -> bool:
    """Whether the response holds its whole body, read already (``client.post()`` without
    ``stream=True``, a ``MockTransport`` reply, an error body someone read to log it): its
    ``iter_bytes`` / ``aiter_bytes`` then give those bytes (decoded), not the socket's."""
    try:
        return isinstance(response.content, (bytes, bytearray))
    except Exception:  # noqa: BLE001 - httpx's ResponseNotRead (a streamed body, not read)
        return False


def refuse_read(response: Any) -> None:
    """A response whose body was streamed already (a second subscription to one streamed
    response) fails with the response package's own ``StreamConsumed`` (a ``RuntimeError``),
    as reading its body again with httpx does: it is no cut stream. A response that holds
    its body is read from what it holds."""
    if getattr(response, "is_stream_consumed", False) is not True or _holds_body(response):
        return
    try:
        next(iter(response.iter_raw()))  # (httpx raises its StreamConsumed before any read)
    except RuntimeError as error:
        error.add_note(_READ_ONCE)
        raise
    raise RuntimeError(f"the response body was read already; {_READ_ONCE}")


_READ_ONCE = ("from_httpx(response) reads a response once: to read a reply again, pass a "
              "callable that opens a new response (each subscription calls it), or share() "
              "the events")


def body_reads(response: Any, raw: str, decoded: str) -> Any:
    """The body's reads: as they came (``iter_raw`` / ``aiter_raw``, one generator and a
    content decoder less per read) where that is what ``iter_bytes`` gives, a body with no
    ``Content-Encoding`` (or ``identity``); a gzip, deflate, br or zstd body (or several
    codings) inflated here in bounded pieces (so ``max_frame`` stops a compression bomb);
    else decoded by the client. The shortcut obeys ``fast_paths(False)``. A response that holds
    its body (read already) gives what it holds, decoded by the client when it read it."""
    encoding = (response.headers.get("content-encoding") or "identity").strip().lower()
    if not hasattr(response, raw) or _holds_body(response):
        return getattr(response, decoded)()
    inflate = inflater(encoding)
    if inflate is not None:
        reads = getattr(response, raw)()
        return inflated(reads, inflate) if raw == "iter_raw" else ainflated(reads, inflate)
    as_came = speed.active() and encoding == "identity"
    return getattr(response, raw if as_came else decoded)()


def head(chunks: Iterator[bytes]) -> bytes:
    """The start of an error body (enough for any provider's JSON error; a cut one says
    enough too)."""
    pieces: list[bytes] = []
    size = 0
    try:
        for piece in chunks:
            pieces.append(piece)
            size += len(piece)
            if size >= ERROR_BODY_LIMIT:
                break
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - the error body was cut: what arrived says enough
        pass
    return b"".join(pieces)[:ERROR_BODY_LIMIT]


def whole(chunks: Iterator[bytes], limit: int) -> bytes:
    """A whole non-stream body, refused (`FrameTooLargeError`) as soon as its decoded size
    passes ``limit``; a body cut short is a cut stream."""
    pieces: list[bytes] = []
    size = 0
    try:
        for piece in chunks:
            size += len(piece)
            if size > limit:
                raise body_too_large(limit, b"".join(pieces[:1]) or piece)
            pieces.append(piece)
    except LlmRxError:  # (too large; a coding that cannot be read)
        raise
    except Exception as error:  # the byte source failed
        raise source_failed(error) from error
    return b"".join(pieces)


async def ahead(
    chunks: AsyncIterator[bytes], idle_timeout: float | None, limit: int, *, whole: bool = False
) -> bytes:
    """The start of an error body (what arrived of a cut one, up to ``limit`` bytes), or
    with ``whole`` the whole non-stream body (refused once its decoded size passes ``limit``;
    cut short, a cut stream), each read bounded by ``idle_timeout``."""
    pieces: list[bytes] = []
    size = 0
    try:
        while whole or size < limit:
            async with asyncio.timeout(idle_timeout):
                try:
                    piece = await chunks.__anext__()
                except StopAsyncIteration:
                    break
            size += len(piece)
            if whole and size > limit:
                raise body_too_large(limit, b"".join(pieces[:1]) or piece)
            pieces.append(piece)
    except (asyncio.CancelledError, MemoryError):
        raise
    except Exception as error:  # the byte source failed (an error body: what came says enough)
        if whole and isinstance(error, LlmRxError):  # (too large; a coding it cannot read)
            raise
        if whole:
            raise source_failed(error) from error
    body = b"".join(pieces)
    return body if whole else body[:limit]
