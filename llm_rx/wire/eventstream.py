"""Incremental ``application/vnd.amazon.eventstream`` framing (AWS event stream). Sans-I/O.

``EventStreamDecoder.decode(chunk)`` returns the messages ``chunk`` completed; ``flush()`` at
EOF returns nothing (a binary frame cut short cannot be completed) and leaves ``buffered``
telling how many bytes of an unfinished frame were dropped (unless they cannot start a message
at all: then it raises). Chunk boundaries may fall anywhere.

One message on the wire::

    total length   uint32, big-endian: the whole message, these 4 bytes and the CRCs included
    headers length uint32, big-endian
    prelude CRC    CRC32 of the 8 bytes above
    headers        name length (uint8), name (UTF-8), value type (uint8), value
    payload        total - headers - 16 bytes
    message CRC    CRC32 of everything before it

Every check is made before any byte of the frame is trusted: a bad prelude CRC as soon as its
12 bytes are in (a corrupt length would otherwise make the decoder wait for bytes that never
come), the lengths against each other and against ``max_frame`` (a message longer than it is
refused before it is buffered), then the message CRC. Each failure raises
:class:`WireFormatError` (:class:`FrameTooLargeError` for the limit) carrying the frame: the
whole message when its lengths can be trusted (a bad message CRC, bad headers), else its 12
bytes of prelude (a bad prelude CRC, impossible lengths, a message over the limit), so the
frame is the same however the bytes were cut into reads. The messages the same ``decode``
call completed before it are in the error's ``frames``.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import NamedTuple

from ..errors import FrameTooLargeError, WireFormatError
from .sse import DEFAULT_MAX_FRAME

__all__ = [
    "EventStreamDecoder",
    "EventStreamMessage",
    "HeaderValue",
    "encode_message",
    "message_encoder",
    "parse_headers",
]

#: A decoded header value (types 0-9 of the format; a timestamp is an aware UTC datetime).
HeaderValue = bool | int | bytes | str | datetime | uuid.UUID

_PRELUDE = 12  # total length, headers length, prelude CRC
_OVERHEAD = 16  # prelude and message CRC
_prelude = struct.Struct(">III")
_uint16 = struct.Struct(">H")
# Fixed-size integer value types: type -> (struct, size).
_INTEGERS = {
    2: struct.Struct(">b"),
    3: struct.Struct(">h"),
    4: struct.Struct(">i"),
    5: struct.Struct(">q"),
}
_int64 = _INTEGERS[5]
_uint32 = struct.Struct(">I")
_prelude_pack = struct.Struct(">II").pack
_RAW_LIMIT = 64 * 1024  # bytes of a rejected frame kept as evidence
_new = tuple.__new__  # builds a message without NamedTuple's argument parsing (hot path)
_CACHE_LIMIT = 64  # distinct header blocks remembered (a stream repeats a handful)


class EventStreamMessage(NamedTuple):
    """One message: its headers (``:event-type``, ``:message-type``, ...) and payload bytes."""

    headers: Mapping[str, HeaderValue]
    payload: bytes


def _corrupt(message: str, frame: bytes, done: list[EventStreamMessage]) -> WireFormatError:
    error = WireFormatError(message, frame)
    error.frames = done
    return error


def parse_headers(data: bytes) -> dict[str, HeaderValue]:
    """The headers of one message; a malformed block raises ``ValueError``."""
    headers: dict[str, HeaderValue] = {}
    pos = 0
    end = len(data)
    while pos < end:
        size = data[pos]
        name = data[pos + 1 : pos + 1 + size].decode("utf-8")
        pos += 1 + size
        if pos >= end:
            raise ValueError(f"header {name!r} has no value type")
        kind = data[pos]
        pos += 1
        value: HeaderValue
        if kind == 7 or kind == 6:
            if pos + 2 > end:
                raise ValueError(f"header {name!r} is cut short")
            (length,) = _uint16.unpack_from(data, pos)
            raw = data[pos + 2 : pos + 2 + length]
            pos += 2 + length
            value = raw.decode("utf-8") if kind == 7 else raw
        elif kind == 0 or kind == 1:
            value = kind == 0
        elif kind in _INTEGERS:
            number = _INTEGERS[kind]
            if pos + number.size > end:
                raise ValueError(f"header {name!r} is cut short")
            (value,) = number.unpack_from(data, pos)
            pos += number.size
        elif kind == 8:
            if pos + 8 > end:
                raise ValueError(f"header {name!r} is cut short")
            (millis,) = _int64.unpack_from(data, pos)
            value = datetime.fromtimestamp(millis / 1000, UTC)
            pos += 8
        elif kind == 9:
            if pos + 16 > end:
                raise ValueError(f"header {name!r} is cut short")
            value = uuid.UUID(bytes=data[pos : pos + 16])
            pos += 16
        else:
            raise ValueError(f"header {name!r} has unknown value type {kind}")
        if pos > end:
            raise ValueError(f"header {name!r} is cut short")
        headers[name] = value
    return headers


class EventStreamDecoder:
    """Incremental AWS event-stream framer: `decode(bytes) -> list[EventStreamMessage]`.

    Bytes of an unfinished message wait in a buffer that is only joined once the message is
    complete, so a message arriving in many small chunks costs linear time.

    Args:
        max_frame: The longest whole message (its announced total length), in bytes.
    """

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buffer = bytearray()
        self._need = _PRELUDE  # bytes the buffer must hold before the next look
        self._headers: dict[bytes, Mapping[str, HeaderValue]] = {}

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished message held for the next chunk."""
        return len(self._buffer)

    def decode(self, chunk: bytes) -> list[EventStreamMessage]:
        """The messages `chunk` completed, their CRCs checked.

        Args:
            chunk: The next bytes of the body, cut anywhere.
        """
        buffer = self._buffer
        if buffer:
            buffer += chunk
            if len(buffer) < self._need:
                return []
            data = bytes(buffer)
            buffer.clear()
        else:
            data = chunk
        out: list[EventStreamMessage] = []
        size = len(data)
        pos = 0
        need = _PRELUDE
        crc32 = zlib.crc32
        while size - pos >= _PRELUDE:
            total, headers_size, prelude_crc = _prelude.unpack_from(data, pos)
            if crc32(data[pos : pos + 8]) != prelude_crc:
                raise _corrupt("event-stream prelude CRC mismatch", data[pos : pos + _PRELUDE],
                               out)
            if total < _OVERHEAD or headers_size > total - _OVERHEAD:
                raise _corrupt(
                    f"event-stream lengths do not add up (total {total}, headers "
                    f"{headers_size})", data[pos : pos + _PRELUDE], out,
                )
            if total > self.max_frame:
                error = FrameTooLargeError(
                    f"event-stream message of {total} bytes is longer than the limit of "
                    f"{self.max_frame} bytes", data[pos : pos + _PRELUDE],
                )
                error.frames = out
                raise error
            end = pos + total
            if end > size:
                need = total
                break
            (message_crc,) = _uint32.unpack_from(data, end - 4)
            if crc32(data[pos : end - 4]) != message_crc:
                raise _corrupt("event-stream message CRC mismatch", data[pos:end], out)
            start = pos + _PRELUDE
            payload = start + headers_size
            block = data[start:payload]
            headers = self._headers.get(block)
            if headers is None:
                try:
                    headers = MappingProxyType(parse_headers(block))
                except (ValueError, IndexError) as reason:
                    raise _corrupt(f"event-stream headers are malformed: {reason}",
                                   data[pos:end], out) from None
                if len(self._headers) < _CACHE_LIMIT:
                    self._headers[block] = headers
            out.append(_new(EventStreamMessage, (headers, data[payload : end - 4])))
            pos = end
        if pos < size:
            buffer += data[pos:] if pos else data
            self._need = need
        return out

    def flush(self) -> list[EventStreamMessage]:
        """EOF: no message can be completed; ``buffered`` still tells what was left.

        Bytes left that cannot be the start of a message (their announced length is
        impossible) are no event stream at all: ``WireFormatError``, not a cut message.
        """
        rest = self._buffer
        if len(rest) >= 4:
            (total,) = _uint32.unpack_from(rest, 0)
            if total < _OVERHEAD or total > self.max_frame:
                raise _corrupt(
                    f"the bytes are not an AWS event stream (a message of {total} bytes)",
                    bytes(rest[:_RAW_LIMIT]), [],
                )
        return []


def encode_message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One message with string headers: the inverse of ``decode`` (with its CRCs)."""
    return message_encoder(headers)(payload)


def message_encoder(headers: Mapping[str, str]) -> Callable[[bytes], bytes]:
    """What writes messages of these headers around any payload (the header block encoded
    once: an encoder writing one message per delta)."""
    block = b"".join(
        bytes([len(name.encode())]) + name.encode() + b"\x07"
        + _uint16.pack(len(value.encode())) + value.encode()
        for name, value in headers.items()
    )
    size = len(block)
    pack, crc = _prelude_pack, zlib.crc32

    def encode(payload: bytes) -> bytes:
        prelude = pack(_OVERHEAD + size + len(payload), size)
        head = prelude + _uint32.pack(crc(prelude)) + block + payload
        return head + _uint32.pack(crc(head))

    return encode
