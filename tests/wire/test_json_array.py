"""``JSONArrayDecoder``: one JSON array split into its elements as they arrive.

Gemini's ``streamGenerateContent`` without ``alt=sse`` sends one pretty-printed JSON array,
element by element (``[{\\n ... \\n}\\n,\\r\\n{ ...``). Chunk boundaries fall anywhere: inside a
string, inside an escape, between a ``\\n`` and the ``}`` after it. Each case pins one of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_rx.errors import FrameTooLargeError, IncompleteStreamError, LlmRxError, WireFormatError
from llm_rx.wire.json_array import JSONArrayDecoder

from ..helpers import split_at

GEMINI = sorted((Path(__file__).parent.parent / "captures" / "gemini").glob("json-array-*.json"))
TRICKY = (
    b'[ "a\\"]", {"k": "}\\\\", "l": ["]", "\\"{"]}, [1, [2, {}]], 3.5e2 , true,null,'
    b'"\\\\\\"x", {"\\u005d": "\\n}"} ]'
)


def decode(chunks: Iterable[bytes], max_frame: int | None = None) -> list[bytes]:
    """Every element the chunks give, EOF included."""
    decoder = JSONArrayDecoder() if max_frame is None else JSONArrayDecoder(max_frame)
    out: list[bytes] = []
    for chunk in chunks:
        out += decoder.decode(chunk)
    return out + decoder.flush()


def decode_until_error(
    chunks: Iterable[bytes], max_frame: int | None = None
) -> tuple[list[bytes], type[LlmRxError] | None, str | None]:
    """The elements got before an error (returned, or carried on it as ``frames``), the
    error's type and frame."""
    decoder = JSONArrayDecoder() if max_frame is None else JSONArrayDecoder(max_frame)
    out: list[bytes] = []
    try:
        for chunk in chunks:
            out += decoder.decode(chunk)
        out += decoder.flush()
    except LlmRxError as error:
        return out + list(getattr(error, "frames", ())), type(error), error.raw
    return out, None, None


def one_by_one(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


# -- elements --------------------------------------------------------------------------------


def test_json_array_element_returned_by_the_decode_that_ends_it() -> None:
    # bug class: a finished element held back until the comma (or EOF) arrives
    decoder = JSONArrayDecoder()
    assert decoder.decode(b'[{"a": 1') == []
    assert decoder.decode(b"}") == [b'{"a": 1}']
    assert decoder.decode(b'\n,\r\n{"b": [2]}') == [b'{"b": [2]}']
    assert decoder.decode(b"\n]") == []
    assert decoder.closed
    assert decoder.flush() == []


def test_json_array_element_split_across_chunks() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.decode(b'[{"text": "He') == []
    assert decoder.pending == b'{"text": "He'
    assert decoder.decode(b'llo"') == []
    assert decoder.decode(b'}, {"text"') == [b'{"text": "Hello"}']
    assert decoder.decode(b': "!"}]') == [b'{"text": "!"}']
    assert decoder.pending == b""


def test_json_array_many_elements_in_one_chunk() -> None:
    body = json.dumps([{"n": n, "t": "x" * n} for n in range(50)]).encode()
    elements = decode([body])
    assert [json.loads(element) for element in elements] == json.loads(body)


def test_json_array_brackets_and_quotes_inside_strings_are_text() -> None:
    elements = decode([TRICKY])
    assert [json.loads(element) for element in elements] == json.loads(TRICKY)
    assert elements[1] == b'{"k": "}\\\\", "l": ["]", "\\"{"]}'


def test_json_array_every_split_of_tricky_body_same_elements() -> None:
    # an escape cut from its backslash, a quote after an even run of backslashes, "\\n}"
    # inside a string, a scalar cut mid-number: every two-cut split gives the same elements
    whole = decode([TRICKY])
    for first in range(len(TRICKY)):
        for second in range(first, len(TRICKY)):
            assert decode(split_at(TRICKY, [first, second])) == whole


def test_json_array_backslash_ending_a_chunk_escapes_the_next_quote() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.decode(b'["a\\') == []
    assert decoder.decode(b'"b"') == [b'"a\\"b"']  # the quote after the split is escaped


def test_json_array_scalars_strings_and_nested_arrays() -> None:
    assert decode([b'[1, -2.5e3, "s", true, false, null, [[]], {}]']) == [
        b"1", b"-2.5e3", b'"s"', b"true", b"false", b"null", b"[[]]", b"{}"
    ]
    assert decode(one_by_one(b"[12,34]")) == [b"12", b"34"]


def test_json_array_empty_array() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.decode(b" [ \r\n ] ") == []
    assert decoder.closed
    assert decoder.flush() == []


def test_json_array_gemini_separators_crlf() -> None:
    body = b'[{\n  "a": 1\n}\n,\r\n{\n  "b": 2\n}\n]'
    assert decode([body]) == [b'{\n  "a": 1\n}', b'{\n  "b": 2\n}']
    assert decode(one_by_one(body)) == decode([body])


# -- the pretty-printed fast path ------------------------------------------------------------


def test_json_array_pretty_newline_and_brace_split_across_chunks() -> None:
    # the "\n" ends one chunk and the element's "}" starts the next: the end is found there,
    # not at the next element's "\n}"
    body = b'[{\n  "a": 1\n}\n,\r\n{\n  "b": 2\n}\n]'
    cut = body.index(b"\n}") + 1
    decoder = JSONArrayDecoder()
    assert decoder.decode(body[:cut]) == []
    assert decoder.decode(body[cut:]) == [b'{\n  "a": 1\n}', b'{\n  "b": 2\n}']


def test_json_array_line_start_brace_that_is_not_the_end() -> None:
    # indent=0 puts inner closers at line starts too: the bytes up to the first one do not
    # parse, so the element is scanned instead, and still ends at its own "}"
    value = [{"a": {"b": [1, {"c": "}\n}"}]}, "d": 2}, {"x": 1}]
    body = json.dumps(value, indent=0).encode()
    elements = decode([body])
    assert [json.loads(element) for element in elements] == value
    for cut in range(len(body)):
        assert decode(split_at(body, [cut])) == elements


@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.name)
def test_json_array_gemini_captures_split_like_json(path: Path) -> None:
    body = path.read_bytes()
    elements = decode([body])
    assert [json.loads(element) for element in elements] == json.loads(body)
    assert decode(one_by_one(body)) == elements


@settings(max_examples=60, deadline=None)
@given(path=st.sampled_from(GEMINI), cuts=st.lists(st.integers(0, 20_000), max_size=30))
def test_json_array_gemini_captures_any_chunking_same_elements(
    path: Path, cuts: list[int]
) -> None:
    body = path.read_bytes()
    assert decode(split_at(body, [cut % (len(body) + 1) for cut in cuts])) == decode([body])


# -- the end ---------------------------------------------------------------------------------


def test_json_array_eof_before_closing_bracket_is_incomplete() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.decode(b'[{"a": 1}\n,') == [b'{"a": 1}']
    with pytest.raises(IncompleteStreamError, match="closing") as caught:
        decoder.flush()
    assert caught.value.raw is None


def test_json_array_eof_inside_element_is_incomplete_with_its_bytes() -> None:
    decoder = JSONArrayDecoder()
    decoder.decode(b'[{"a": 1}, {"b": "cut')
    with pytest.raises(IncompleteStreamError, match="inside") as caught:
        decoder.flush()
    assert caught.value.raw == '{"b": "cut'


def test_json_array_eof_before_anything_is_incomplete() -> None:
    decoder = JSONArrayDecoder()
    assert not decoder.opened
    with pytest.raises(IncompleteStreamError):
        decoder.flush()


def test_json_array_bytes_after_closing_bracket_are_not_elements() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.decode(b'[1] \n') == [b"1"]
    assert not decoder.trailing
    assert decoder.decode(b'[2]') == []
    assert decoder.trailing
    assert decoder.flush() == []


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        (b'{"a": 1}', []),  # not an array
        (b'[{"a": 1} {"b": 2}]', [b'{"a": 1}']),  # missing comma
        (b'[{"a": 1},, {"b": 2}]', [b'{"a": 1}']),  # empty element
        (b'[, 1]', []),  # leading comma
        (b'[1, ]', [b"1"]),  # trailing comma
    ],
    ids=["object", "missing-comma", "double-comma", "leading-comma", "trailing-comma"],
)
def test_json_array_malformed_structure_is_wire_format_error(
    body: bytes, kept: list[bytes]
) -> None:
    # bug class (the frame): the bytes from the bad one to the end of the read, so another
    # cut of the same body gave another frame
    elements, error, raw = decode_until_error([body])
    assert error is WireFormatError
    assert elements == kept  # the elements before it are carried, not lost
    assert raw is not None
    assert body.decode().endswith(raw)  # from the byte that broke the array on
    assert decode_until_error(one_by_one(body)) == (kept, WireFormatError, raw)


# -- the size bound --------------------------------------------------------------------------


def test_json_array_max_frame_bounds_an_element_still_arriving() -> None:
    decoder = JSONArrayDecoder(max_frame=20)
    assert decoder.decode(b'[{"a": 1}, {"b": "') == [b'{"a": 1}']
    with pytest.raises(FrameTooLargeError):
        decoder.decode(b"x" * 30)


def test_json_array_max_frame_bounds_an_element_arriving_whole() -> None:
    body = b'[{"a": 1}, {"b": "' + b"x" * 30 + b'"}, 3]'
    elements, error, raw = decode_until_error([body], max_frame=20)
    assert (elements, error) == ([b'{"a": 1}'], FrameTooLargeError)
    assert raw is not None
    assert raw.startswith('{"b": "x')


def test_json_array_max_frame_is_inclusive() -> None:
    element = b'{"b": "' + b"x" * 13 + b'"}'
    assert len(element) == 22
    assert decode([b"[" + element + b"]"], max_frame=22) == [element]
    assert decode_until_error([b"[" + element + b"]"], max_frame=21)[1] is FrameTooLargeError


@settings(max_examples=80, deadline=None)
@given(limit=st.integers(1, 40), cuts=st.lists(st.integers(0, 80), max_size=8))
def test_json_array_max_frame_outcome_does_not_depend_on_chunking(
    limit: int, cuts: list[int]
) -> None:
    body = b'[{"a": 1}, "' + b"y" * 25 + b'", [1, 2, 3], {"c": "' + b"z" * 10 + b'"}]'
    # (the frame too: no more of the element than a held one has)
    assert decode_until_error(split_at(body, cuts), limit) == decode_until_error([body], limit)


@settings(max_examples=60, deadline=None)
@given(
    junk=st.sampled_from([b";", b"x", b"}", b" {\"b\": 2}", b"<html>" + b"-" * 300]),
    cuts=st.lists(st.integers(0, 400), max_size=6),
)
def test_json_array_broken_array_frame_does_not_depend_on_chunking(
    junk: bytes, cuts: list[int]
) -> None:
    # bug class: a broken array's error carried what the read held from the bad byte on
    body = b'[{"a": 1}\n' + junk + b'\n, {"c": 3}]' + b" " * 250
    whole = decode_until_error([body])
    assert whole[1] is WireFormatError
    assert whole[2] is not None
    assert whole[2].startswith(junk.lstrip()[:200].decode())
    assert len(whole[2]) <= 200
    assert decode_until_error(split_at(body, cuts)) == whole
