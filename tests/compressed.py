"""Compressed bodies for the readers' tests: every ``Content-Encoding`` llm-rx inflates itself,
made with the real libraries (``brotli`` and ``zstandard`` are the ``compression`` extra; where
one is missing the tests that need it are skipped locally, and fail under CI, which installs
the ``dev`` extra)."""

from __future__ import annotations

import functools
import importlib
import os
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

MiB = 1024 * 1024

#: Every coding a body may arrive in (``identity``: none).
ENCODINGS = ["identity", "gzip", "deflate", "br", "zstd"]
_LIBRARY = {"br": "brotli", "zstd": "zstandard"}


def library(encoding: str) -> Any:
    """The module that compresses ``encoding`` (``None`` for the zlib codings); missing: a
    skip here, a failure under CI."""
    name = _LIBRARY.get(encoding)
    if name is None:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"{name} missing: .ci/run installs the dev extra")
        pytest.skip(f"{name} (the compression extra) not installed")


class _Compressor:
    """One body's incremental compressor for ``encoding``."""

    def __init__(self, encoding: str, level: int = 6) -> None:
        module = library(encoding)
        self._compress: Any
        if encoding == "br":
            self._compress = module.Compressor(quality=min(level, 11))
            self.feed, self.end = self._compress.process, self._compress.finish
        elif encoding == "zstd":
            self._compress = module.ZstdCompressor(level=level).compressobj()
            self.feed, self.end = self._compress.compress, self._compress.flush
        else:
            wbits = {"gzip": 31, "deflate": 15, "raw-deflate": -15}[encoding]
            self._compress = zlib.compressobj(level, zlib.DEFLATED, wbits)
            self.feed, self.end = self._compress.compress, self._compress.flush


def compress(data: bytes, encoding: str) -> bytes:
    """``data`` in ``encoding`` (``raw-deflate``: deflate without its zlib header; a list,
    ``"gzip, br"``: each applied in turn)."""
    for name in (part.strip() for part in encoding.split(",")):
        if name != "identity":
            compressor = _Compressor(name)
            data = compressor.feed(data) + compressor.end()
    return data


def _pieces(prefix: bytes, size: int) -> Iterator[bytes]:
    yield prefix
    run = b"a" * MiB
    for _ in range(size // MiB):
        yield run


@functools.cache
def bomb(encoding: str, prefix: bytes, size: int) -> bytes:
    """``prefix`` then ``size`` bytes of ``a`` (a JSON string, an SSE frame that never ends),
    compressed as well as ``encoding`` does it fast: a small body that inflates to far more
    than any limit."""
    compressor = _Compressor(encoding, level=1)
    return b"".join([*map(compressor.feed, _pieces(prefix, size)), compressor.end()])
