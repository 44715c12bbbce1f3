"""A compressed body (``Content-Encoding``: ``gzip``, ``deflate``, ``br``, ``zstd``, or a list
of them) inflated in bounded pieces.

An HTTP client's own decoder inflates each read at once: one read of a compression bomb
(64 KiB of gzip) becomes 64 MiB before any limit can look at it, and one read of brotli or
zstd far more. Inflating the raw reads here, at most `PIECE` bytes at a time, lets
``max_frame`` stop a bomb one piece past it. It decodes what httpx's decoders decode, the same
way: a single gzip member; a ``deflate`` body with a zlib header, else raw deflate; a brotli
stream; one or more zstd frames; several codings in the order the header lists them (the
last applied is undone first). A coding it does not know passes through, as in httpx.

Each step is bounded for every coding:

- ``gzip``, ``deflate``: ``zlib``'s ``max_length``, at most `PIECE` out per call.
- ``br``: ``brotli`` (or ``brotlicffi``) 1.2 or later, whose ``output_buffer_limit`` stops a
  call's output once it reaches `PIECE`, the rest drained by calls with no input; an older
  one cannot be bounded, and a ``br`` body is refused (a `WireFormatError` naming the fix).
- ``zstd``: ``zstandard``'s streaming decoder has no output limit, so it is given at most
  `ZSTD_STEP` bytes of input a call: a zstd block (at least 4 bytes) decodes to at most
  128 KiB, so a call gives at most about 4 MiB, cut into pieces of `PIECE`. A frame may ask
  for a window of at most `ZSTD_WINDOW` (8 MiB, the limit RFC 9659 sets for HTTP).

``brotli`` and ``zstandard`` are imported when a body needs them (the ``compression`` extra).
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

from .._extras import install_hint
from ..errors import WireFormatError

__all__ = ["PIECE", "ZSTD_STEP", "ZSTD_WINDOW", "Inflater", "ainflated", "inflated", "inflater"]

#: The most bytes one inflated piece holds.
PIECE = 64 * 1024
#: The most bytes of zstd input decoded in one call (see the module's notes).
ZSTD_STEP = 128
#: The largest zstd window a body may ask for.
ZSTD_WINDOW = 8 * 1024 * 1024

_EXTRA = install_hint("compression")


class _Coding(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]:
        """The inflated pieces of ``data`` (each at most `PIECE` bytes)."""

    def end(self) -> bytes:
        """What is left at the end of the body."""


class _Zlib:
    """``gzip`` or ``deflate`` (zlib header, else raw deflate, as httpx reads it)."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding != "deflate"
        self._first = True
        self._inflate = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
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
        return self._inflate.flush()  # (bounded by what the last read held back)


class _Brotli:
    """``br``, through ``brotli`` or ``brotlicffi`` (1.2 or later: bounded output)."""

    def __init__(self) -> None:
        module = _module("br", "brotli", "brotlicffi")
        self._inflate: Any = module.Decompressor()
        if not hasattr(self._inflate, "can_accept_more_data"):
            version = getattr(module, "__version__", "?")
            raise WireFormatError(
                f"the body is br-encoded, and {module.__name__} {version} cannot decode it "
                f"in bounded pieces (1.2 or later can: {_EXTRA})"
            )

    def feed(self, data: bytes) -> Iterator[bytes]:
        # (a call stops its output at the limit and holds the rest: drained by calls with no
        # input, until one gives nothing; ``can_accept_more_data`` speaks of input only)
        inflate = self._inflate
        piece: bytes = inflate.process(data, output_buffer_limit=PIECE)
        while piece:
            yield from _cut(piece)  # (the limit stops the buffer's growth: a step past it)
            piece = inflate.process(b"", output_buffer_limit=PIECE)
        if not inflate.can_accept_more_data():  # (input held, and no output: no progress)
            raise WireFormatError("the br body could not be decoded (its decoder is stuck)")

    def end(self) -> bytes:
        return b""  # (every call gives all it can: nothing is held back)


class _Zstd:
    """``zstd``, through ``zstandard``: one frame after another, as httpx reads them."""

    def __init__(self) -> None:
        module = _module("zstd", "zstandard")
        self._context: Any = module.ZstdDecompressor(max_window_size=ZSTD_WINDOW)
        self._frame: Any = self._context.decompressobj(write_size=PIECE)

    def feed(self, data: bytes) -> Iterator[bytes]:
        held: list[bytes] = []  # (the steps' output, gathered into pieces of about PIECE)
        size = 0
        for start in range(0, len(data), ZSTD_STEP):
            if out := self._step(data[start : start + ZSTD_STEP]):
                held.append(out)
                size += len(out)
                if size >= PIECE:
                    yield from _cut(b"".join(held))
                    held, size = [], 0
        if held:
            yield b"".join(held)

    def _step(self, data: bytes) -> bytes:
        out: bytes = self._frame.decompress(data)
        while self._frame.eof:  # (a frame ended: the next one starts with what is left)
            rest: bytes = self._frame.unused_data
            self._frame = self._context.decompressobj(write_size=PIECE)
            if not rest:
                break
            out += self._frame.decompress(rest)
        return out

    def end(self) -> bytes:
        return b""


def _cut(out: bytes) -> Iterator[bytes]:
    """``out`` in pieces of at most `PIECE` bytes (none when it is empty)."""
    if len(out) <= PIECE:
        if out:
            yield out
        return
    for start in range(0, len(out), PIECE):
        yield out[start : start + PIECE]


def _module(coding: str, *names: str) -> Any:
    """The first of ``names`` that imports; a `WireFormatError` naming the extra if none does."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise WireFormatError(
        f"the body is {coding}-encoded, and decoding it needs {' or '.join(names)} ({_EXTRA})"
    )


_CODINGS = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate", "br": "br", "zstd": "zstd"}


def _coding(name: str) -> _Coding:
    if name == "br":
        return _Brotli()
    if name == "zstd":
        return _Zstd()
    return _Zlib(name)


class Inflater:
    """Inflates the reads of one body, compressed with ``codings`` (in the order they were
    applied), into pieces of at most `PIECE` bytes. The decoders are made at the first read,
    so a coding that cannot be read fails as a read does (an error body's status stays
    known)."""

    def __init__(self, codings: list[str]) -> None:
        self.codings = codings
        self._stages: list[_Coding] | None = None

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The inflated pieces of the read ``data``."""
        stages = self._stages
        if stages is None:
            stages = self._stages = [_coding(name) for name in reversed(self.codings)]
        if len(stages) == 1:  # (one coding, as nearly always: its pieces as they are)
            return stages[0].feed(data)
        return self._through(0, data)

    def end(self) -> Iterator[bytes]:
        """What is left at the end of the body: each stage's, through the stages after it."""
        for index, stage in enumerate(self._stages or ()):
            if tail := stage.end():
                yield from self._after(index, tail)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        """``data`` through the stages from ``index`` on."""
        stages = self._stages
        assert stages is not None
        for piece in stages[index].feed(data):
            yield from self._after(index, piece)

    def _after(self, index: int, piece: bytes) -> Iterator[bytes]:
        """A piece stage ``index`` gave, through the stages after it."""
        if self._stages is not None and index + 1 < len(self._stages):
            yield from self._through(index + 1, piece)
        else:
            yield piece


def inflater(encoding: str) -> Inflater | None:
    """An `Inflater` for a ``Content-Encoding`` header's value (``gzip``, ``deflate``, ``br``,
    ``zstd``, or a comma-separated list of them), or ``None`` when it names none of these
    (``identity``, or codings httpx does not decode either)."""
    names = [_CODINGS.get(part.strip().lower(), "") for part in encoding.split(",")]
    codings = [name for name in names if name]
    return Inflater(codings) if codings else None


def inflated(reads: Iterator[bytes], inflate: Inflater) -> Iterator[bytes]:
    """The inflated pieces of a body's raw reads."""
    try:
        for data in reads:
            yield from inflate.feed(data)
        yield from inflate.end()
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
        for piece in inflate.end():
            yield piece
    finally:
        close = getattr(reads, "aclose", None)
        if close is not None:
            await close()
