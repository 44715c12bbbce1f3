"""Incremental splitting of one JSON array into its top-level elements. Sans-I/O.

``JSONArrayDecoder.decode(chunk)`` returns the elements ``chunk`` completed, each as the
``bytes`` of its value (without the commas and whitespace around it); ``flush()`` at EOF
checks that the array ended. A chunk boundary may fall anywhere (inside a string, inside an
escape, between a value and its comma): the elements do not depend on it. An object, array or
string element is returned by the ``decode`` that delivers its last byte, without waiting for
the comma after it; a bare number or literal ends at the next delimiter.

Only the structure is read here (brackets outside strings, strings with their escapes), so a
bad element is the caller's JSON parser's to reject. Pretty-printed arrays (Gemini's: each
element ``{\n ... \n}``) take a fast path: the first ``}`` that starts a line is taken as the
element's end once the bytes up to it parse as JSON (a proper prefix of a JSON value never
does); otherwise the bytes are scanned one structural character at a time. Anything but
whitespace between elements other than one ``,`` (or the closing ``]``) is a
:class:`WireFormatError` carrying the first 200 bytes from the one that broke the array (it
is raised when they are in, or at EOF: the frame never depends on where a read ended); bytes
after the closing ``]`` are not elements (``trailing`` says some came). ``max_frame`` bounds
one element: a larger one raises ``FrameTooLargeError`` whether it is still arriving or came
whole in one chunk. Every error raised by ``decode`` carries the elements completed before it
in ``frames``.
"""

from __future__ import annotations

import re

import orjson

from ..errors import FrameTooLargeError, IncompleteStreamError, WireFormatError
from .sse import DEFAULT_MAX_FRAME

__all__ = ["JSONArrayDecoder"]

# Where the decoder is between elements.
_BEFORE = 0  # expecting the opening "["
_FIRST = 1  # after "[": an element or "]"
_NEXT = 2  # after ",": an element
_AFTER = 3  # after an element: "," or "]"
_INSIDE = 4  # inside an element
_CLOSED = 5  # after the closing "]"
_BROKEN = 6  # after bytes that break the array: held as the error's frame

# Bytes of what broke the array kept as the error's frame. The error is raised once they are
# all in (or at EOF), so the frame is the same however the body was cut into reads.
_EVIDENCE = 200

# How the scan inside an element reads the next byte.
_CODE = 0  # outside strings, inside an object or array
_STRING = 1  # inside a string
_ESCAPE = 2  # inside a string, just after a backslash
_SCALAR = 3  # inside a bare number or literal

_NON_SPACE = re.compile(rb"[^ \t\r\n]")
# A run of bytes that are neither brackets nor quotes, and of whole strings.
_SKIP = re.compile(rb'(?:[^"{}\[\]]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.S)
# The rest of a string up to its closing quote (or a last lone backslash, or the end).
_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)
_SCALAR_END = re.compile(rb'[\s,\[\]{}"]')


class JSONArrayDecoder:
    """Incremental JSON array splitter: `decode(bytes) -> list[bytes]` and `flush()`.

    Args:
        max_frame: The longest element, in bytes; a longer one is a `FrameTooLargeError`.
    """

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self.closed = False  # the closing "]" arrived
        self.trailing = False  # something other than whitespace came after it
        self._where = _BEFORE
        self._lex = _CODE
        self._depth = 0
        # The bytes of the unfinished element, in one growing buffer: an element arriving
        # in many small reads costs about its size, not an object per read.
        self._pending = bytearray()
        # Elements "{\n ... \n}" may end at a "}" starting a line (tried, and the element
        # parsed to check: when it does not parse, the element is scanned from then on).
        self._pretty = True
        self._fast = False  # the element arriving may take that path
        self._broken: tuple[str, bytearray] | None = None  # why the array broke, and the bytes

    @property
    def opened(self) -> bool:
        """Whether the opening ``[`` arrived."""
        return self._where != _BEFORE

    @property
    def pending(self) -> bytes:
        """The bytes of the element still arriving (``b""`` between elements)."""
        return bytes(self._pending)

    def decode(self, chunk: bytes) -> list[bytes]:
        """The elements `chunk` completed, each its JSON bytes.

        Args:
            chunk: The next bytes of the array, cut anywhere.
        """
        out: list[bytes] = []
        try:
            self._decode(chunk, out)
        except WireFormatError as error:
            error.frames = out
            raise
        return out

    def flush(self) -> list[bytes]:
        """EOF: nothing is still due (elements are returned as they end), but an array without
        its closing ``]`` is cut short: ``IncompleteStreamError``, with the unfinished
        element, if any, as the frame."""
        if self.closed:
            return []
        if self._broken is not None:
            raise self._broken_error()
        if self._where == _INSIDE:
            raise IncompleteStreamError("the stream ended inside an array element", self.pending)
        raise IncompleteStreamError("the stream ended before the array's closing ]")

    def _decode(self, chunk: bytes, out: list[bytes]) -> None:
        at = 0
        size = len(chunk)
        while at < size:
            where = self._where
            if where == _BROKEN:
                self._hold_broken(chunk[at:])
                return
            if where == _INSIDE:
                end = self._end(chunk, at)
                if end < 0:
                    self._hold(chunk[at:])
                    return
                self._element(chunk[at:end], out)
                at = end
                continue
            match = _NON_SPACE.search(chunk, at)
            if match is None:
                return
            at = match.start()
            byte = chunk[at]
            if where == _CLOSED:
                self.trailing = True
                return
            if where == _BEFORE:
                if byte != 0x5B:  # "["
                    self._break("the body is not a JSON array")
                    continue
                self._where = _FIRST
                at += 1
            elif where == _AFTER:
                if byte == 0x2C:  # ","
                    self._where = _NEXT
                elif byte == 0x5D:  # "]"
                    self._where = _CLOSED
                    self.closed = True
                else:
                    self._break("expected ',' or ']' after an array element")
                    continue
                at += 1
            elif byte == 0x5D and where == _FIRST:  # "[]"
                self._where = _CLOSED
                self.closed = True
                at += 1
            elif byte in b",]":
                self._break("expected an array element")
            else:  # an element starts here
                self._where = _INSIDE
                self._depth = 0
                if byte == 0x22:  # a string: scanned from after its opening quote
                    self._lex = _STRING
                    end = self._scan(chunk, at + 1)
                else:
                    self._lex = _CODE if byte in b"{[" else _SCALAR
                    self._fast = self._pretty and byte == 0x7B and chunk[at + 1 : at + 2] in (
                        b"\n", b"\r"
                    )
                    end = self._end(chunk, at)
                if end < 0:
                    self._hold(chunk[at:])
                    return
                self._element(chunk[at:end], out)
                at = end

    def _break(self, why: str) -> None:
        """The array broke here: hold the bytes from here on (see ``_EVIDENCE``)."""
        self._where = _BROKEN
        self._broken = (why, bytearray())

    def _hold_broken(self, data: bytes) -> None:
        assert self._broken is not None
        held = self._broken[1]
        held += data[: _EVIDENCE - len(held)]
        if len(held) >= _EVIDENCE:
            raise self._broken_error()

    def _broken_error(self) -> WireFormatError:
        assert self._broken is not None
        why, held = self._broken
        return WireFormatError(why, bytes(held))

    def _end(self, data: bytes, at: int) -> int:
        """Where in ``data`` the element (its rest, from ``at``) ends, or ``-1``."""
        if self._fast:
            if data[at : at + 1] == b"}" and self._pending.endswith(b"\n"):
                line = at - 1  # the "\n" ended the last chunk
            else:
                line = data.find(b"\n}", at)
            if line >= 0:
                end = line + 2
                try:
                    orjson.loads(self._pending + data[at:end] if self._pending
                                 else data[at:end])
                except orjson.JSONDecodeError:
                    self._fast = self._pretty = False  # not laid out as assumed: scan
                else:
                    self._lex = _CODE
                    return end
        return self._scan(data, at)

    def _scan(self, data: bytes, at: int) -> int:
        """Where in ``data`` the element ends (exclusive), or ``-1`` if it goes on."""
        size = len(data)
        depth = self._depth
        lex = self._lex
        while at < size:
            if lex == _CODE:
                at = _SKIP.match(data, at).end()  # type: ignore[union-attr]  # matches empty
                if at == size:
                    break
                byte = data[at]
                at += 1
                if byte == 0x22:
                    lex = _STRING
                elif byte == 0x7B or byte == 0x5B:  # "{" "["
                    depth += 1
                else:  # "}" "]"
                    depth -= 1
                    if depth == 0:
                        self._lex = _CODE
                        return at
            elif lex == _STRING:
                at = _STRING_BODY.match(data, at).end()  # type: ignore[union-attr]
                if at == size:
                    break
                if data[at] == 0x22:  # the closing quote
                    at += 1
                    lex = _CODE
                    if depth == 0:  # a string element
                        self._lex = _CODE
                        return at
                else:  # a backslash ending the chunk: the next byte is escaped
                    lex = _ESCAPE
                    at = size
            elif lex == _ESCAPE:
                lex = _STRING
                at += 1
            else:  # _SCALAR
                match = _SCALAR_END.search(data, at)
                if match is None:
                    break
                self._lex = _CODE
                return match.start()
        self._depth = depth
        self._lex = lex
        return -1

    def _element(self, tail: bytes, out: list[bytes]) -> None:
        if self._pending:
            self._pending += tail
            tail = bytes(self._pending)
            self._pending.clear()
        if len(tail) > self.max_frame:
            raise self._too_large(tail)
        self._where = _AFTER
        out.append(tail)

    def _hold(self, data: bytes) -> None:
        pending = self._pending
        pending += data
        if len(pending) > self.max_frame:
            head = bytes(pending[:200])  # (the evidence the error keeps)
            pending.clear()
            raise self._too_large(head)

    def _too_large(self, element: bytes) -> FrameTooLargeError:
        # (no more than the bytes over the limit: a held element has no more in)
        return FrameTooLargeError(
            f"JSON array element larger than the limit of {self.max_frame} bytes",
            element[: min(_EVIDENCE, self.max_frame + 1)],
        )
