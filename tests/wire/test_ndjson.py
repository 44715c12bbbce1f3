"""``NDJSONDecoder``: lines split across chunks or packed in one, ``\\r\\n``, blanks, EOF, limit.

Ollama streams NDJSON; parsers that assumed one line per HTTP chunk broke on both lines split
across chunks and several lines in one chunk (rig#1758, continue#751, cody#3481; PITFALLS 19).
Tests that pin a chunk-boundary case name the bug class they guard.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_rx.errors import FrameTooLargeError, LlmRxError, WireFormatError
from llm_rx.wire.ndjson import NDJSONDecoder

from ..helpers import split_at

CAPTURES = sorted((Path(__file__).parent.parent / "captures").rglob("*.sse"))

OLLAMA = (
    b'{"model":"llama3.2","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant",'
    b'"content":"Hel"},"done":false}\n'
    b'{"model":"llama3.2","created_at":"2025-01-01T00:00:01Z","message":{"role":"assistant",'
    b'"content":"lo \xc3\xa9\xf0\x9f\x98\x80"},"done":false}\n'
    b'{"model":"llama3.2","created_at":"2025-01-01T00:00:02Z","message":{"role":"assistant",'
    b'"content":""},"done":true,"done_reason":"stop","eval_count":3}\n'
)
OLLAMA_LINES = OLLAMA.splitlines()


def decode(chunks: Iterable[bytes], max_frame: int | None = None) -> list[bytes]:
    """Every line the chunks give, EOF included."""
    decoder = NDJSONDecoder() if max_frame is None else NDJSONDecoder(max_frame)
    lines: list[bytes] = []
    for chunk in chunks:
        lines += decoder.decode(chunk)
    return lines + decoder.flush()


def decode_until_error(
    chunks: Iterable[bytes], max_frame: int
) -> tuple[list[bytes], type[LlmRxError] | None]:
    """The lines got before an error (returned, or carried on the error as ``frames``, as
    ``FrameTooLargeError`` documents), and the error's type."""
    decoder = NDJSONDecoder(max_frame)
    lines: list[bytes] = []
    try:
        for chunk in chunks:
            lines += decoder.decode(chunk)
        lines += decoder.flush()
    except LlmRxError as error:
        return lines + list(getattr(error, "frames", ())), type(error)
    return lines, None


def one_by_one(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


# -- chunking --------------------------------------------------------------------------------


def test_ndjson_line_split_across_chunks() -> None:
    # bug class: each chunk parsed as JSON on its own (rig#1758)
    decoder = NDJSONDecoder()
    assert decoder.decode(b'{"a":') == []
    assert decoder.decode(b' 1, "b"') == []
    assert decoder.decode(b': [2]}\n{"c"') == [b'{"a": 1, "b": [2]}']
    assert decoder.decode(b": 3}\n") == [b'{"c": 3}']
    assert decoder.flush() == []


def test_ndjson_line_returned_by_the_decode_that_ends_it() -> None:
    # bug class: a finished line held back until the next chunk or EOF
    decoder = NDJSONDecoder()
    assert decoder.decode(b'{"a":1}') == []
    assert decoder.decode(b"\n") == [b'{"a":1}']


def test_ndjson_many_lines_in_one_chunk() -> None:
    # bug class: only the first line of a chunk read (continue#751)
    assert NDJSONDecoder().decode(OLLAMA) == OLLAMA_LINES
    assert decode([OLLAMA * 3]) == OLLAMA_LINES * 3


def test_ndjson_ollama_stream_one_byte_at_a_time() -> None:
    assert decode(one_by_one(OLLAMA)) == OLLAMA_LINES


def test_ndjson_ollama_stream_every_single_cut() -> None:
    for cut in range(len(OLLAMA) + 1):
        assert decode(split_at(OLLAMA, [cut])) == OLLAMA_LINES, cut


def test_ndjson_utf8_character_split_across_chunks_intact() -> None:
    # bug class: each chunk decoded as text on its own, a split character becoming U+FFFD
    line = '{"t":"é 世界 😀"}'.encode()
    for cut in range(len(line) + 2):
        lines = decode(split_at(line + b"\n", [cut]))
        assert lines == [line], cut
        assert json.loads(lines[0]) == {"t": "é 世界 😀"}


def test_ndjson_empty_chunks_ignored() -> None:
    assert decode([b"", b'{"a":1}', b"", b"\n", b"", b'{"b":2}', b""]) == [b'{"a":1}', b'{"b":2}']


# -- line ends and blank lines ---------------------------------------------------------------


def test_ndjson_crlf_line_ends_stripped() -> None:
    assert decode([b'{"a":1}\r\n{"b":2}\r\n']) == [b'{"a":1}', b'{"b":2}']


def test_ndjson_crlf_split_between_cr_and_lf() -> None:
    # bug class: the "\r" of a "\r\n" split from its "\n" kept on the line
    assert decode([b'{"a":1}\r', b'\n{"b":2}\r', b"\n"]) == [b'{"a":1}', b'{"b":2}']


def test_ndjson_blank_lines_skipped() -> None:
    body = b'\n\n{"a":1}\n\n\r\n  \n\t\n{"b":2}\n\n'
    assert decode([body]) == [b'{"a":1}', b'{"b":2}']
    assert decode(one_by_one(body)) == [b'{"a":1}', b'{"b":2}']


def test_ndjson_blank_lines_only_give_nothing() -> None:
    assert decode([b"\n\r\n \n"]) == []


def test_ndjson_line_inner_whitespace_kept() -> None:
    assert decode([b'  {"a": "x  y"}  \r\n']) == [b'{"a": "x  y"}']


# -- EOF -------------------------------------------------------------------------------------


def test_ndjson_flush_returns_the_last_line_without_newline() -> None:
    decoder = NDJSONDecoder()
    assert decoder.decode(b'{"a":1}\n{"b":2}') == [b'{"a":1}']
    assert decoder.flush() == [b'{"b":2}']


def test_ndjson_flush_last_line_split_and_without_newline() -> None:
    assert decode([b'{"b"', b":", b"2}"]) == [b'{"b":2}']
    assert decode([b'{"b":2}\r']) == [b'{"b":2}']


def test_ndjson_flush_after_a_final_newline_gives_nothing() -> None:
    decoder = NDJSONDecoder()
    assert decoder.decode(b'{"a":1}\n') == [b'{"a":1}']
    assert decoder.flush() == []


def test_ndjson_flush_whitespace_only_tail_gives_nothing() -> None:
    assert decode([b'{"a":1}\n  \r']) == [b'{"a":1}']


def test_ndjson_flush_on_a_new_decoder_gives_nothing() -> None:
    assert NDJSONDecoder().flush() == []


def test_ndjson_truncated_last_line_returned_as_is() -> None:
    # the framer does not judge JSON: a cut line is handed on, for the decoder to call it a cut
    assert decode([b'{"a":1}\n{"b":']) == [b'{"a":1}', b'{"b":']


# -- max_frame -------------------------------------------------------------------------------


def test_ndjson_max_frame_pending_line_past_the_limit_raises() -> None:
    decoder = NDJSONDecoder(max_frame=64)
    assert decoder.decode(b'{"a":"' + b"x" * 50) == []
    with pytest.raises(FrameTooLargeError) as caught:
        decoder.decode(b"x" * 20)
    assert isinstance(caught.value, WireFormatError)
    assert caught.value.raw is not None
    assert caught.value.raw.startswith('{"a":"xxxx')


def test_ndjson_max_frame_raw_is_the_head_of_the_line() -> None:
    decoder = NDJSONDecoder(max_frame=1000)
    for chunk in [b'{"big":"'] + [b"y" * 100] * 9:  # 908 bytes pending
        assert decoder.decode(chunk) == []
    with pytest.raises(FrameTooLargeError) as caught:
        decoder.decode(b"y" * 100)
    raw = caught.value.raw
    assert raw is not None
    assert raw.startswith('{"big":"yyyy')
    assert len(raw) < 1000


def test_ndjson_max_frame_lines_completed_under_the_limit_returned() -> None:
    decoder = NDJSONDecoder(max_frame=64)
    assert decoder.decode(b'{"small":1}\n') == [b'{"small":1}']
    assert decoder.decode(b"z" * 60) == []
    with pytest.raises(FrameTooLargeError):
        decoder.decode(b"z" * 10)


def test_ndjson_max_frame_bounds_each_line_not_the_stream() -> None:
    # bug class: the pending size not reset when a line ends, so a long stream of short lines fails
    body = (b'{"k":"' + b"v" * 40 + b'"}\n') * 50
    expected = [b'{"k":"' + b"v" * 40 + b'"}'] * 50
    assert decode([body], max_frame=64) == expected
    assert decode(one_by_one(body), max_frame=64) == expected
    assert decode(split_at(body, range(0, len(body), 7)), max_frame=64) == expected


def test_ndjson_max_frame_checks_the_rest_after_a_newline() -> None:
    # bug class: the unfinished tail after a chunk's last newline is stored without the size
    # check, so a line past the limit is accepted when its head shares a chunk with a newline
    body = b'{"a":1}\n' + b"x" * 100
    expected = ([b'{"a":1}'], FrameTooLargeError)
    assert decode_until_error(one_by_one(body), max_frame=64) == expected
    assert decode_until_error([body, b"\n"], max_frame=64) == expected


@pytest.mark.parametrize("cuts", [[], [30], [60], list(range(1, 120))], ids=str)
def test_ndjson_max_frame_outcome_does_not_depend_on_chunking(cuts: list[int]) -> None:
    # bug class: a line past the limit refused when it arrives in pieces but accepted when it
    # (or its end) arrives in one chunk with its newline
    body = b'{"ok":1}\n{"big":"' + b"x" * 100 + b'"}\n'
    reference = decode_until_error(one_by_one(body), max_frame=64)
    assert reference == ([b'{"ok":1}'], FrameTooLargeError)
    assert decode_until_error(split_at(body, cuts), max_frame=64) == reference


# -- properties: chunk boundaries never matter -----------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.characters(codec="utf-8"), max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


def _cuts(size: int, max_step: int = 16) -> st.SearchStrategy[list[int]]:
    """Cut offsets: a random list, or every ``step`` bytes."""
    offsets = st.lists(st.integers(0, size), max_size=40)
    steady = st.integers(1, max_step).map(lambda step: list(range(0, size, step)))
    return st.one_of(offsets, steady)


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(_JSON, max_size=12),
    ends=st.lists(st.sampled_from([b"\n", b"\r\n", b"\n\n", b"\r\n \n"]), min_size=1),
    final_newline=st.booleans(),
    data=st.data(),
)
def test_ndjson_property_generated_lines_same_lines_however_split(
    values: list[object], ends: list[bytes], final_newline: bool, data: st.DataObject
) -> None:
    lines = [json.dumps(value, ensure_ascii=False).encode() for value in values]
    body = b"".join(line + ends[i % len(ends)] for i, line in enumerate(lines))
    if not final_newline:
        body = body.rstrip(b"\r\n ")
    assert decode([body]) == lines
    assert decode(one_by_one(body)) == lines
    assert decode(split_at(body, data.draw(_cuts(len(body)), label="cuts"))) == lines


@functools.cache
def _capture_lines(path: Path) -> list[bytes]:
    # the SSE captures read as NDJSON: real bytes, long lines, multi-byte UTF-8
    return [line.strip() for line in path.read_bytes().split(b"\n") if line.strip()]


@settings(max_examples=60, deadline=None)
@given(path=st.sampled_from(CAPTURES), crlf=st.booleans(), data=st.data())
def test_ndjson_property_captures_same_lines_however_split(
    path: Path, crlf: bool, data: st.DataObject
) -> None:
    body = path.read_bytes()
    if crlf:
        body = body.replace(b"\n", b"\r\n")
    cuts = data.draw(_cuts(len(body), max_step=4096), label="cuts")
    assert decode(split_at(body, cuts)) == _capture_lines(path)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_ndjson_capture_one_byte_at_a_time_same_lines(path: Path) -> None:
    head = path.read_bytes()[:32_768]  # bytes one by one are slow on the long captures
    assert decode(one_by_one(head)) == decode([head])
