"""A compressed body (``Content-Encoding: gzip`` or ``deflate``) inflated in bounded pieces.

An HTTP client's own decoder inflates each read at once: one read of a compression bomb
(64 KiB of gzip) becomes 64 MiB before any limit can look at it. Inflating the raw reads
here, at most `PIECE` bytes at a time, lets ``max_frame`` stop a bomb after that much
more. It decodes what httpx's decoders decode, the same way (a single gzip member; a
``deflate`` body with a zlib header, else raw deflate).
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

__all__ = ["PIECE", "Inflater", "ainflated", "inflated", "inflater"]

#: The most bytes one inflated piece holds.
PIECE = 64 * 1024


class Inflater:
    """Inflates reads of one compressed body into pieces of at most `PIECE` bytes."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding != "deflate"
        self._first = True
        self._inflate = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The inflated pieces of the read ``data``."""
        first, self._first = self._first, False
        try:
            yield from self._pieces(data)
        except zlib.error:
            if not first or self._gzip:
                raise
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)  # (deflate without a header)
            yield from self._pieces(data)

    def _pieces(self, data: bytes) -> Iterator[bytes]:
        inflate = self._inflate
        while data and not inflate.eof:
            piece = inflate.decompress(data, PIECE)
            data = inflate.unconsumed_tail
            if piece:
                yield piece

    def end(self) -> bytes:
        """What is left at the end of the body (bounded by what the last read held back)."""
        return self._inflate.flush()


def inflater(encoding: str) -> Inflater | None:
    """An `Inflater` for a ``Content-Encoding`` (lowercased), or ``None`` when it is not
    gzip or deflate."""
    if encoding in ("gzip", "x-gzip", "deflate"):
        return Inflater("deflate" if encoding == "deflate" else "gzip")
    return None


def inflated(reads: Iterator[bytes], inflate: Inflater) -> Iterator[bytes]:
    """The inflated pieces of a body's raw reads."""
    try:
        for data in reads:
            yield from inflate.feed(data)
        if tail := inflate.end():
            yield tail
    finally:
        close = getattr(reads, "close", None)
        if close is not None:
            close()


async def ainflated(reads: AsyncIterator[bytes], inflate: Inflater) -> AsyncIterator[bytes]:
    """The inflated pieces of a body's raw reads, read asynchronously."""
    try:
        async for data in reads:
            for piece in inflate.feed(data):
                yield piece
        if tail := inflate.end():
            yield tail
    finally:
        close = getattr(reads, "aclose", None)
        if close is not None:
            await close()
