"""What ``llm-rx record`` makes of a body sent with ``Content-Encoding``.

The proxy passes every body on as it came, compressed bytes with the header that says so
(a client, or an upstream, that gets compressed bytes without their ``Content-Encoding``
reads garbage). What it reads for itself — a request's model, a reply to write as a capture —
is the decoded body, decoded read by read as it arrives and never past a budget of decoded
bytes (a small compressed body can decode to gigabytes). ``gzip`` (``x-gzip``), ``deflate``
(zlib-wrapped or raw, as servers send it) and ``identity`` are decoded, in any sequence; a
body in another coding (``br``, ``zstd``) is passed on and not read.
"""

from __future__ import annotations

import zlib

__all__ = ["Undecodable", "Unpacker", "decoded"]

_WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}


class Undecodable(ValueError):
    """The body is in a coding the recorder does not decode, is broken, or decodes to more
    than the budget."""


class _Stage:
    """One coding undone, a read at a time."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._unpack = zlib.decompressobj(_WBITS[coding])
        self._started = False

    def feed(self, data: bytes, limit: int) -> bytes:
        try:
            out = self._unpack.decompress(data, limit + 1)
        except zlib.error:
            if self.coding != "deflate" or self._started:
                raise Undecodable(f"a broken {self.coding} body") from None
            self._unpack = zlib.decompressobj(-15)  # (raw deflate, with no zlib header)
            return self.feed(data, limit)
        self._started = True
        if self._unpack.unconsumed_tail or len(out) > limit:
            raise Undecodable(f"the body decodes to more than {limit} bytes")
        return out

    def flush(self) -> bytes:
        return self._unpack.flush() if self._started else b""


class Unpacker:
    """Decodes a body whose ``Content-Encoding`` header is ``header`` (``None``: none), a
    read at a time, up to ``limit`` decoded bytes in all; ``Undecodable`` past it, on a
    coding it does not know, or on broken bytes."""

    def __init__(self, header: str | None, limit: int) -> None:
        codings = [c.strip().lower() for c in (header or "").split(",") if c.strip()]
        unknown = sorted({c for c in codings if c not in _WBITS and c != "identity"})
        if unknown:
            raise Undecodable(f"a body in {', '.join(unknown)}")
        # (codings are listed in the order they were applied: undone last first)
        self._stages = [_Stage(c) for c in reversed(codings) if c != "identity"]
        self._left = limit

    def feed(self, data: bytes) -> bytes:
        for stage in self._stages:
            data = stage.feed(data, self._left)
        return self._take(data)

    def flush(self) -> bytes:
        data = b""
        for stage in self._stages:
            data = (stage.feed(data, self._left) if data else b"") + stage.flush()
        return self._take(data)

    def _take(self, data: bytes) -> bytes:
        if len(data) > self._left:
            raise Undecodable("the body decodes to more than its budget")
        self._left -= len(data)
        return data


def decoded(body: bytes, header: str | None, limit: int) -> bytes:
    """``body`` decoded (``Undecodable``: see :class:`Unpacker`)."""
    unpacker = Unpacker(header, limit)
    return unpacker.feed(body) + unpacker.flush()
