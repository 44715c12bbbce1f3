"""``EventStreamDecoder``: AWS event-stream framing, CRCs, header types, chunk boundaries, limits.

Messages here are built by the test's own encoder (``struct`` and ``zlib``, not llm-rx), so a
framing bug cannot cancel itself out; the recorded Bedrock captures are walked by their length
prefixes alone and compared with what the decoder gives.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_rx.errors import FrameTooLargeError, LlmRxError, WireFormatError
from llm_rx.wire.eventstream import EventStreamDecoder, EventStreamMessage, encode_message

from ..helpers import split_at

CAPTURES = sorted((Path(__file__).parent.parent / "captures" / "bedrock").glob("*.eventstream"))


def header(name: str, kind: int, value: bytes) -> bytes:
    return bytes([len(name)]) + name.encode() + bytes([kind]) + value


def string(name: str, value: str) -> bytes:
    raw = value.encode()
    return header(name, 7, struct.pack(">H", len(raw)) + raw)


def message(headers: bytes, payload: bytes) -> bytes:
    """One message, CRCs computed here."""
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return head + struct.pack(">I", zlib.crc32(head))


def event(kind: str, payload: bytes) -> bytes:
    return message(
        string(":event-type", kind) + string(":content-type", "application/json")
        + string(":message-type", "event"),
        payload,
    )


BODY = (
    event("messageStart", b'{"role":"assistant"}')
    + event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"h\u00e9 \U0001f600"}}'
            .encode())
    + event("messageStop", b'{"stopReason":"end_turn"}')
)
PAYLOADS = [
    b'{"role":"assistant"}',
    '{"contentBlockIndex":0,"delta":{"text":"h\u00e9 \U0001f600"}}'.encode(),
    b'{"stopReason":"end_turn"}',
]


def decode(chunks: Iterable[bytes], max_frame: int | None = None) -> list[EventStreamMessage]:
    decoder = EventStreamDecoder() if max_frame is None else EventStreamDecoder(max_frame)
    out: list[EventStreamMessage] = []
    for chunk in chunks:
        out += decoder.decode(chunk)
    return out + decoder.flush()


def decode_until_error(
    chunks: Iterable[bytes], max_frame: int | None = None
) -> tuple[list[EventStreamMessage], LlmRxError | None]:
    """The messages got before an error (returned, or carried on it as ``frames``)."""
    decoder = EventStreamDecoder() if max_frame is None else EventStreamDecoder(max_frame)
    out: list[EventStreamMessage] = []
    try:
        for chunk in chunks:
            out += decoder.decode(chunk)
    except LlmRxError as error:
        return out + list(getattr(error, "frames", ())), error
    return out, None


def walk(data: bytes) -> list[tuple[bytes, bytes]]:
    """(headers block, payload) of each message, read from the length prefixes alone."""
    out = []
    pos = 0
    while pos < len(data):
        total, headers = struct.unpack_from(">II", data, pos)
        start = pos + 12 + headers
        out.append((data[pos + 12 : start], data[start : pos + total - 4]))
        pos += total
    return out


# -- messages ------------------------------------------------------------------------------


def test_eventstream_decodes_headers_and_payloads() -> None:
    messages = decode([BODY])
    assert [m.payload for m in messages] == PAYLOADS
    assert dict(messages[0].headers) == {
        ":event-type": "messageStart",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert messages[2].headers[":event-type"] == "messageStop"


def test_eventstream_every_header_value_type() -> None:
    stamp = datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    headers = (
        header("t", 0, b"") + header("f", 1, b"") + header("b", 2, b"\xff")
        + header("s", 3, struct.pack(">h", -2)) + header("i", 4, struct.pack(">i", 70000))
        + header("l", 5, struct.pack(">q", 2**40)) + header("y", 6, b"\x00\x02\x00\x01")
        + string("str", "caf\u00e9")
        + header("ts", 8, struct.pack(">q", int(stamp.timestamp() * 1000)))
        + header("u", 9, ident.bytes)
    )
    (only,) = decode([message(headers, b"")])
    assert dict(only.headers) == {
        "t": True, "f": False, "b": -1, "s": -2, "i": 70000, "l": 2**40,
        "y": b"\x00\x01", "str": "caf\u00e9", "ts": stamp, "u": ident,
    }
    assert only.payload == b""


def test_eventstream_headers_are_read_only() -> None:
    # The parsed headers of a repeated header block are shared between messages: immutable.
    first, second, _ = decode([BODY])
    assert first.headers[":content-type"] == second.headers[":content-type"]
    with pytest.raises(TypeError):
        first.headers[":event-type"] = "changed"  # type: ignore[index]


def test_eventstream_encode_message_is_the_inverse() -> None:
    built = encode_message({":event-type": "metadata", ":message-type": "event"}, b"{}")
    assert built == message(string(":event-type", "metadata") + string(":message-type", "event"),
                            b"{}")


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_eventstream_captures_match_length_walk(path: Path) -> None:
    data = path.read_bytes()
    expected = walk(data)
    messages = decode([data])
    assert [m.payload for m in messages] == [payload for _, payload in expected]
    for m in messages:
        assert m.headers[":message-type"] == "event"
        assert isinstance(m.headers[":event-type"], str)


# -- chunk boundaries ----------------------------------------------------------------------


def test_eventstream_split_at_every_offset() -> None:
    # Inside a length, a CRC, a header name, a UTF-8 character: never matters.
    for cut in range(len(BODY) + 1):
        assert [m.payload for m in decode(split_at(BODY, [cut]))] == PAYLOADS, cut


def test_eventstream_split_at_every_pair_of_offsets() -> None:
    first = len(BODY) // 3
    for a in range(first + 1):
        for b in range(a, len(BODY) + 1, 7):
            assert [m.payload for m in decode(split_at(BODY, [a, b]))] == PAYLOADS, (a, b)


def test_eventstream_one_byte_at_a_time() -> None:
    decoder = EventStreamDecoder()
    got: list[bytes] = []
    for i in range(len(BODY)):
        got += [m.payload for m in decoder.decode(BODY[i : i + 1])]
    assert got == PAYLOADS
    assert decoder.buffered == 0


def test_eventstream_message_returned_by_the_decode_that_ends_it() -> None:
    decoder = EventStreamDecoder()
    one = event("metadata", b"{}")
    assert decoder.decode(one[:-1]) == []
    assert [m.payload for m in decoder.decode(one[-1:])] == [b"{}"]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_eventstream_captures_any_chunking(path: Path, data: st.DataObject) -> None:
    body = path.read_bytes()
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=30))
    assert decode(split_at(body, cuts)) == decode([body])


def test_eventstream_cut_short_leaves_bytes_buffered() -> None:
    decoder = EventStreamDecoder()
    assert len(decoder.decode(BODY[:-5])) == 2
    assert decoder.flush() == []
    assert decoder.buffered > 0


# -- corruption and limits -----------------------------------------------------------------


def test_eventstream_corrupted_message_crc_is_wire_format_error_with_frame() -> None:
    bad = bytearray(BODY)
    second = len(event("messageStart", PAYLOADS[0]))
    bad[second + 60] ^= 0x01  # one bit of the second message's payload
    got, error = decode_until_error([bytes(bad)])
    assert isinstance(error, WireFormatError)
    assert not isinstance(error, FrameTooLargeError)
    assert "CRC" in error.message
    assert [m.payload for m in got] == PAYLOADS[:1]  # the message before it is kept
    assert error.raw is not None
    assert "contentBlockDelta" in error.raw  # the offending frame travels with the error


def test_eventstream_corrupted_message_crc_in_any_chunking() -> None:
    bad = bytearray(BODY)
    bad[-1] ^= 0x80  # the last message's own CRC
    for cut in range(0, len(bad) + 1, 5):
        got, error = decode_until_error(split_at(bytes(bad), [cut]))
        assert isinstance(error, WireFormatError), cut
        assert [m.payload for m in got] == PAYLOADS[:2], cut


def test_eventstream_corrupted_prelude_crc_raises_before_the_frame_arrives() -> None:
    bad = bytearray(BODY)
    bad[2] ^= 0x10  # the first message's total length: now far longer than the body
    decoder = EventStreamDecoder()
    with pytest.raises(WireFormatError, match="prelude CRC"):
        decoder.decode(bytes(bad[:12]))  # no need to wait for bytes that never come


def test_eventstream_not_an_event_stream_is_wire_format_error() -> None:
    with pytest.raises(WireFormatError):
        EventStreamDecoder().decode(b'{"message":"The security token included is invalid."}')


def test_eventstream_leftover_that_cannot_start_a_message_is_wire_format_error() -> None:
    decoder = EventStreamDecoder()
    assert decoder.decode(b"<html>") == []  # fewer bytes than a prelude: wait for more
    with pytest.raises(WireFormatError, match="not an AWS event stream"):
        decoder.flush()  # EOF: 0x3c68746d bytes announced, no message is that long


def test_eventstream_leftover_of_a_plausible_message_is_only_cut() -> None:
    decoder = EventStreamDecoder()
    assert decoder.decode(BODY[:6]) == []
    assert decoder.flush() == []
    assert decoder.buffered == 6


def test_eventstream_lengths_that_do_not_add_up() -> None:
    prelude = struct.pack(">II", 20, 10)  # 10 bytes of headers cannot fit in 20 - 16
    head = prelude + struct.pack(">I", zlib.crc32(prelude))
    with pytest.raises(WireFormatError, match="lengths"):
        EventStreamDecoder().decode(head + b"\x00" * 8)


def test_eventstream_unknown_header_type_is_wire_format_error() -> None:
    got, error = decode_until_error([BODY + message(header("x", 42, b""), b"")])
    assert isinstance(error, WireFormatError)
    assert "unknown value type 42" in error.message
    assert [m.payload for m in got] == PAYLOADS


def test_eventstream_header_cut_short_is_wire_format_error() -> None:
    _, error = decode_until_error([message(header("n", 4, b"\x00\x01"), b"")])
    assert isinstance(error, WireFormatError)
    assert "cut short" in error.message


def test_eventstream_message_over_max_frame_refused_before_it_is_buffered() -> None:
    big = event("contentBlockDelta", b'{"x":"' + b"a" * 500 + b'"}')
    decoder = EventStreamDecoder(max_frame=300)
    small = event("messageStart", PAYLOADS[0])
    with pytest.raises(FrameTooLargeError) as caught:
        decoder.decode(small + big[:12])  # only the prelude of the big one: enough to refuse
    assert [m.payload for m in caught.value.frames] == PAYLOADS[:1]


def test_eventstream_max_frame_counts_the_whole_message() -> None:
    one = event("metadata", b"{}")
    assert decode([one], max_frame=len(one)) != []
    _, error = decode_until_error([one], max_frame=len(one) - 1)
    assert isinstance(error, FrameTooLargeError)


@pytest.mark.parametrize("corrupt", ["prelude", "lengths", "too large", "message"])
def test_eventstream_error_frame_is_the_same_in_any_chunking(corrupt: str) -> None:
    # bug class: an error carrying "the bytes from the bad message on", as many as the read
    # happened to hold: the same body cut otherwise gave another frame
    bad = bytearray(BODY)
    second = len(event("messageStart", PAYLOADS[0]))
    if corrupt == "prelude":
        bad[second + 9] ^= 0x01  # the second message's prelude CRC
    elif corrupt == "message":
        bad[second + 60] ^= 0x01
    else:
        total = 8 if corrupt == "lengths" else 20_000_000  # (over the default limit)
        prelude = struct.pack(">II", total, 0)
        bad[second : second + 12] = prelude + struct.pack(">I", zlib.crc32(prelude))
    raws = set()
    for cut in range(0, len(bad) + 1, 7):
        got, error = decode_until_error(split_at(bytes(bad), [cut]))
        assert isinstance(error, WireFormatError), cut
        assert [m.payload for m in got] == PAYLOADS[:1], cut
        raws.add(error.raw)
    assert len(raws) == 1
    expected = bad[second : second + len(event("contentBlockDelta", PAYLOADS[1]))] if (
        corrupt == "message") else bad[second : second + 12]
    assert raws == {bytes(expected).decode("utf-8", "replace")}
