"""``SSEDecoder``: the WHATWG event-stream rules, chunk boundaries anywhere, EOF, the size limit.

Spec: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
llm-rx deviates on purpose in two places, both documented in ``llm_rx/wire/sse.py``: at EOF
``flush()`` dispatches a last event whose blank line is missing, and an event whose data is
empty is not dispatched. Tests that pin a chunk-boundary case name the bug class they guard.
"""

from __future__ import annotations

import functools
import gc
import re
import tracemalloc
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_rx.errors import FrameTooLargeError, LlmRxError, WireFormatError
from llm_rx.wire.sse import SSEDecoder, SSEEvent

from ..helpers import split_at

BOM = b"\xef\xbb\xbf"
CAPTURE_DIR = Path(__file__).parent.parent / "captures"
CAPTURES = sorted(CAPTURE_DIR.rglob("*.sse"))


def decode(chunks: Iterable[bytes], max_frame: int | None = None) -> list[SSEEvent]:
    """Every event the chunks give, EOF included."""
    decoder = SSEDecoder() if max_frame is None else SSEDecoder(max_frame)
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += decoder.decode(chunk)
    return events + decoder.flush()


def decode_until_error(
    chunks: Iterable[bytes], max_frame: int
) -> tuple[list[SSEEvent], type[LlmRxError] | None]:
    """The events got before an error (returned, or carried on the error as ``frames``, as
    ``FrameTooLargeError`` documents), and the error's type."""
    decoder = SSEDecoder(max_frame)
    events: list[SSEEvent] = []
    try:
        for chunk in chunks:
            events += decoder.decode(chunk)
        events += decoder.flush()
    except LlmRxError as error:
        return events + list(getattr(error, "frames", ())), type(error)
    return events, None


def one_by_one(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


def msg(data: bytes, event: str = "message", id: str | None = None) -> SSEEvent:
    return SSEEvent(event, data, id)


# -- line ends ----------------------------------------------------------------------------


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_sse_line_ends_each_kind(end: bytes) -> None:
    body = end.join([b"event: e", b"data: a", b"data: b", b"", b"data: c", b"", b""])
    assert decode([body]) == [msg(b"a\nb", "e"), msg(b"c")]
    assert decode(one_by_one(body)) == [msg(b"a\nb", "e"), msg(b"c")]


def test_sse_line_ends_mixed_in_one_stream() -> None:
    body = b"data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\rdata: e\n\n"
    assert decode([body]) == [msg(b"a\nb\nc"), msg(b"d"), msg(b"e")]


def test_sse_crlf_split_between_cr_and_lf_is_one_line_end() -> None:
    # bug class: "\r" at a chunk end and "\n" at the next chunk's start read as two line ends,
    # i.e. as a blank line, dispatching "a" alone
    assert decode([b"data: a\r", b"\ndata: b\r\n\r\n"]) == [msg(b"a\nb")]


def test_sse_crlf_split_blank_line_between_cr_and_lf() -> None:
    # bug class: the blank line's "\r\n" split in two chunks
    assert decode([b"data: a\r\n\r", b"\ndata: b\r\n\r\n"]) == [msg(b"a"), msg(b"b")]


def test_sse_lone_cr_at_chunk_end_followed_by_non_lf() -> None:
    # bug class: a held trailing "\r" dropped, or joined to the next line, when no "\n" follows
    assert decode([b"data: a\r", b"data: b\r\r"]) == [msg(b"a\nb")]
    assert decode([b"data: a\r", b"\rdata: b\r\r"]) == [msg(b"a"), msg(b"b")]


def test_sse_lone_cr_at_chunk_end_then_empty_chunk() -> None:
    # bug class: the pending "\r" state lost across an empty chunk
    assert decode([b"data: a\r", b"", b"\ndata: b\n\n"]) == [msg(b"a\nb")]
    assert decode([b"data: a\r", b"", b"\n\n"]) == [msg(b"a")]


def test_sse_lone_cr_at_the_very_end_of_the_stream() -> None:
    # bug class: the held "\r" of the last chunk never processed at EOF
    assert decode([b"data: a\r"]) == [msg(b"a")]
    assert decode([b"data: a\r\r"]) == [msg(b"a")]


def test_sse_cr_cr_lf_is_two_line_ends() -> None:
    # "\r" then "\r\n": a blank line; split at each offset around it
    body = b"data: a\r\r\ndata: b\n\n"
    for cut in range(len(body) + 1):
        assert decode(split_at(body, [cut])) == [msg(b"a"), msg(b"b")], cut


# -- dispatch as soon as the blank line arrives ---------------------------------------------


@pytest.mark.parametrize(
    "chunks",
    [
        [b"data: a\n", b"\n"],
        [b"data: a\n\n"],
        [b"data: a\r\n", b"\r\n"],
        [b"data: a\r\n\r\n"],
        [b"data: a\r", b"\n\r\n"],
        [b"data: a", b"\n", b"\n"],
    ],
)
def test_sse_event_returned_by_the_decode_that_completes_it(chunks: list[bytes]) -> None:
    # bug class: an event held back until a later chunk (or EOF) although its blank line came
    decoder = SSEDecoder()
    for chunk in chunks[:-1]:
        assert decoder.decode(chunk) == []
    assert decoder.decode(chunks[-1]) == [msg(b"a")]
    assert decoder.flush() == []


@pytest.mark.parametrize(
    "chunks", [[b"data: a\r\r"], [b"data: a\r", b"\r"]], ids=["one-chunk", "split"]
)
def test_sse_event_ended_by_cr_cr_returned_without_waiting_for_the_next_chunk(
    chunks: list[bytes],
) -> None:
    # bug class: a blank line ended by a lone "\r" at a chunk end is held until more bytes come
    # (only to learn whether a "\n" follows), so a CR-delimited stream's event waits for the next
    # chunk or EOF; the second "\r" already ends the blank line whatever follows it
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += decoder.decode(chunk)
    assert events == [msg(b"a")]


def test_sse_event_not_dispatched_before_its_blank_line() -> None:
    decoder = SSEDecoder()
    assert decoder.decode(b"data: a\n") == []
    assert decoder.decode(b"data: b\n") == []
    assert decoder.decode(b"\n") == [msg(b"a\nb")]


# -- comments --------------------------------------------------------------------------------


def test_sse_comment_keepalive_ignored() -> None:
    assert decode([b": keep-alive\n\ndata: a\n\n:\n\n"]) == [msg(b"a")]


def test_sse_comment_openrouter_processing_ignored() -> None:
    body = b": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: {}\n\ndata: [DONE]\n\n"
    assert decode([body]) == [msg(b"{}"), msg(b"[DONE]")]
    assert decode(one_by_one(body)) == [msg(b"{}"), msg(b"[DONE]")]


def test_sse_comment_inside_an_event_keeps_the_event() -> None:
    assert decode([b"data: a\n: ping\ndata: b\n\n"]) == [msg(b"a\nb")]


def test_sse_comment_only_stream_gives_nothing() -> None:
    assert decode([b": a\n\n: b\n\n"]) == []
    assert decode([b": no blank line at EOF"]) == []


def test_sse_comment_with_data_like_text_ignored() -> None:
    assert decode([b":data: x\n\n"]) == []


# -- fields ----------------------------------------------------------------------------------


def test_sse_event_field_names_the_event() -> None:
    assert decode([b"event: ping\ndata: {}\n\n"]) == [msg(b"{}", "ping")]


def test_sse_event_field_after_data_still_applies() -> None:
    assert decode([b"data: x\nevent: e\n\n"]) == [msg(b"x", "e")]


def test_sse_event_name_reset_after_dispatch() -> None:
    assert decode([b"event: e\ndata: a\n\ndata: b\n\n"]) == [msg(b"a", "e"), msg(b"b")]


def test_sse_event_name_of_an_undispatched_event_not_carried_over() -> None:
    assert decode([b"event: e\n\ndata: b\n\n"]) == [msg(b"b")]


def test_sse_event_name_empty_is_message() -> None:
    assert decode([b"event:\ndata: x\n\n"]) == [msg(b"x")]
    assert decode([b"event\ndata: x\n\n"]) == [msg(b"x")]


def test_sse_event_name_last_one_wins() -> None:
    assert decode([b"event: a\nevent: b\ndata: x\n\n"]) == [msg(b"x", "b")]


@pytest.mark.parametrize("line", [b"data:x", b"data: x"], ids=["no-space", "one-space"])
def test_sse_field_space_after_colon_optional(line: bytes) -> None:
    assert decode([line + b"\n\n"]) == [msg(b"x")]


def test_sse_field_only_one_space_removed() -> None:
    assert decode([b"data:  x\n\n"]) == [msg(b" x")]
    assert decode([b"event:  e\ndata: x\n\n"]) == [msg(b"x", " e")]
    assert decode([b"id:  7\ndata: x\n\n"]) == [msg(b"x", id=" 7")]


def test_sse_field_tab_after_colon_kept() -> None:
    assert decode([b"data:\tx\n\n"]) == [msg(b"\tx")]


def test_sse_field_value_keeps_later_colons_and_trailing_spaces() -> None:
    assert decode([b"data: a: b :\n\n"]) == [msg(b"a: b :")]
    assert decode([b"data: x  \n\n"]) == [msg(b"x  ")]


def test_sse_field_without_colon_has_an_empty_value() -> None:
    # spec example: "data" twice is one event whose data is a single "\n"
    assert decode([b"data\ndata\n\n"]) == [msg(b"\n")]
    assert decode([b"data: a\ndata\n\n"]) == [msg(b"a\n")]


def test_sse_field_line_starting_with_space_ignored() -> None:
    # " data: x" is the field " data", unknown, so ignored
    assert decode([b" data: x\n\n"]) == []
    assert decode([b" data: x\ndata: y\n\n"]) == [msg(b"y")]


def test_sse_field_leading_space_line_in_a_capture_ignored() -> None:
    body = (CAPTURE_DIR / "openrouter/kimi-k2-leading-space-line.sse").read_bytes()
    assert body.startswith(b" data: ")
    events = decode([body])
    assert len(events) == body.count(b"\ndata:")
    assert all(not body.startswith(b" data: " + event.data) for event in events)


def test_sse_field_names_case_sensitive() -> None:
    assert decode([b"Data: x\n\nDATA: y\n\n"]) == []


def test_sse_field_unknown_ignored() -> None:
    assert decode([b"foo: bar\ndata: x\nbaz\n\n"]) == [msg(b"x")]


def test_sse_data_multiline_joined_with_lf() -> None:
    assert decode([b"data: a\ndata: b\ndata: c\n\n"]) == [msg(b"a\nb\nc")]


def test_sse_data_empty_line_between_data_lines_kept() -> None:
    assert decode([b"data: a\ndata:\ndata: b\n\n"]) == [msg(b"a\n\nb")]


@pytest.mark.parametrize("body", [b"data:\n\n", b"data: \n\n", b"data\n\n"])
def test_sse_data_empty_value_alone_not_dispatched(body: bytes) -> None:
    # deliberate deviation: WHATWG fires an event with data "" here (its own example
    # "data\n\n"); llm-rx dispatches only events that carry data (sse.py docstring)
    assert decode([body]) == []


@pytest.mark.parametrize("body", [b"event: ping\n\n", b"id: 1\n\n", b"retry: 5\n\n"])
def test_sse_event_without_data_not_dispatched(body: bytes) -> None:
    assert decode([body]) == []


def test_sse_data_kept_as_raw_bytes() -> None:
    assert decode([b"data: \xff\x00\xfe\n\n"]) == [msg(b"\xff\x00\xfe")]


# -- id and retry ----------------------------------------------------------------------------


def test_sse_id_none_before_any_id() -> None:
    assert decode([b"data: a\n\n"]) == [msg(b"a", id=None)]


def test_sse_id_sets_last_event_id_and_persists() -> None:
    events = decode([b"id: 1\ndata: a\n\ndata: b\n\n"])
    assert events == [msg(b"a", id="1"), msg(b"b", id="1")]


def test_sse_id_after_data_applies_to_the_same_event() -> None:
    assert decode([b"data: a\nid: 2\n\n"]) == [msg(b"a", id="2")]


def test_sse_id_in_an_event_without_data_still_updates() -> None:
    decoder = SSEDecoder()
    assert decoder.decode(b"id: 3\n\n") == []
    assert decoder.last_event_id == "3"
    assert decoder.decode(b"data: a\n\n") == [msg(b"a", id="3")]


def test_sse_id_empty_resets_to_empty_string() -> None:
    events = decode([b"id: 1\ndata: a\n\nid\ndata: b\n\nid:\ndata: c\n\n"])
    assert events == [msg(b"a", id="1"), msg(b"b", id=""), msg(b"c", id="")]


def test_sse_id_containing_nul_ignored() -> None:
    decoder = SSEDecoder()
    events = decoder.decode(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert events == [msg(b"a", id="1"), msg(b"b", id="1")]
    assert decoder.last_event_id == "1"


def test_sse_retry_digits_set_the_reconnection_time() -> None:
    decoder = SSEDecoder()
    assert decoder.retry is None
    assert decoder.decode(b"retry: 3000\n\n") == []
    assert decoder.retry == 3000
    assert decoder.decode(b"retry:0\ndata: a\n\n") == [msg(b"a")]
    assert decoder.retry == 0


@pytest.mark.parametrize(
    "value",
    [b"3s", b"-1", b"1.5", b"+5", b"", b" 100", b"1 ", b"\xef\xbc\x93", b"\xd9\xa3", b"1e3"],
    ids=repr,
)
def test_sse_retry_not_only_ascii_digits_ignored(value: bytes) -> None:
    decoder = SSEDecoder()
    decoder.decode(b"retry: 10\n\n")
    assert decoder.decode(b"retry: " + value + b"\ndata: a\n\n") == [msg(b"a")]
    assert decoder.retry == 10


# -- byte order mark -------------------------------------------------------------------------


def test_sse_bom_stripped() -> None:
    # not stripped, the first field would be "\ufeffdata" and the event lost
    assert decode([BOM + b"data: a\n\n"]) == [msg(b"a")]


@pytest.mark.parametrize("cut", [1, 2, 3, 4])
def test_sse_bom_split_across_chunks_stripped(cut: int) -> None:
    # bug class: a BOM whose bytes come in two chunks is not recognised (or its head is lost)
    body = BOM + b"data: a\n\n"
    assert decode(split_at(body, [cut])) == [msg(b"a")]
    assert decode(one_by_one(body)) == [msg(b"a")]


def test_sse_bom_split_then_empty_chunks_stripped() -> None:
    assert decode([b"", b"\xef", b"", b"\xbb", b"", b"\xbf", b"", b"data: a\n\n"]) == [msg(b"a")]


def test_sse_bom_only_one_stripped() -> None:
    # the second BOM is part of the first field's name, "\ufeffdata": unknown
    assert decode([BOM + BOM + b"data: a\n\ndata: b\n\n"]) == [msg(b"b")]


def test_sse_bom_not_at_the_start_kept() -> None:
    assert decode([b"data: a\n\n" + BOM + b"data: b\n\n"]) == [msg(b"a")]
    assert decode([b"data: " + BOM + b"x\n\n"]) == [msg(BOM + b"x")]
    # a BOM arriving in the second chunk is past the start too
    assert decode([b"data: a\n\n", BOM + b"data: b\n\n"]) == [msg(b"a")]


def test_sse_bom_prefix_that_is_not_a_bom_kept() -> None:
    # bug class: bytes held while deciding whether a BOM starts the stream are dropped
    assert decode([b"\xef", b"\xbb", b"\n", b"data: a\n\n"]) == [msg(b"a")]
    assert decode([b"\xef\xbb", b"data: a\n\n"]) == []  # the field is "\xef\xbbdata"


def test_sse_bom_at_eof_and_bom_only_stream() -> None:
    assert decode([b"\xef\xbb", b"\xbfdata: a"]) == [msg(b"a")]
    assert decode([BOM]) == []
    assert decode([b"\xef\xbb"]) == []


# -- UTF-8 -----------------------------------------------------------------------------------


def test_sse_utf8_character_split_across_chunks_intact() -> None:
    # bug class: each chunk decoded on its own, a split character becoming U+FFFD
    text = "héllo 世界 😀".encode()
    body = b"event: caf\xc3\xa9\ndata: " + text + b"\n\n"
    for cut in range(len(body) + 1):
        assert decode(split_at(body, [cut])) == [msg(text, "café")], cut
    assert decode(one_by_one(body)) == [msg(text, "café")]
    assert decode(one_by_one(body))[0].data.decode() == "héllo 世界 😀"


# -- blank lines -----------------------------------------------------------------------------


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_sse_several_blank_lines_between_events(end: bytes) -> None:
    body = end * 3 + b"data: a" + end * 5 + b"data: b" + end * 2 + end * 4
    assert decode([body]) == [msg(b"a"), msg(b"b")]
    assert decode(one_by_one(body)) == [msg(b"a"), msg(b"b")]


def test_sse_blank_lines_only_give_nothing() -> None:
    assert decode([b"\n\n\r\n\r\r\n"]) == []


# -- EOF -------------------------------------------------------------------------------------


def test_sse_flush_dispatches_an_event_missing_its_blank_line() -> None:
    # deliberate deviation: a browser drops it; servers often omit the final blank line
    decoder = SSEDecoder()
    assert decoder.decode(b"data: a\n\ndata: b\n") == [msg(b"a")]
    assert decoder.flush() == [msg(b"b")]


def test_sse_flush_dispatches_an_event_missing_its_final_newline() -> None:
    decoder = SSEDecoder()
    assert decoder.decode(b"event: e\ndata: a\ndata: b") == []
    assert decoder.flush() == [msg(b"a\nb", "e")]


@pytest.mark.parametrize("tail", [b"\r", b"\r\n", b"\r\n\r"])
def test_sse_flush_event_ended_by_crs(tail: bytes) -> None:
    assert decode([b"data: a" + tail]) == [msg(b"a")]


def test_sse_flush_after_a_complete_stream_gives_nothing() -> None:
    decoder = SSEDecoder()
    assert decoder.decode(b"data: a\n\n") == [msg(b"a")]
    assert decoder.flush() == []


def test_sse_flush_incomplete_field_name_gives_nothing() -> None:
    assert decode([b"data: a\n\nda"]) == [msg(b"a")]
    assert decode([b"data: a\n\n: keep-alive"]) == [msg(b"a")]
    assert decode([b"data: a\n\nevent: x"]) == [msg(b"a")]


def test_sse_flush_on_a_new_decoder_gives_nothing() -> None:
    assert SSEDecoder().flush() == []


def test_sse_empty_chunks_ignored() -> None:
    assert decode([b"", b"data: a", b"", b"\n", b"", b"\n", b""]) == [msg(b"a")]


# -- max_frame -------------------------------------------------------------------------------


def test_sse_max_frame_pending_event_past_the_limit_raises() -> None:
    decoder = SSEDecoder(max_frame=64)
    assert decoder.decode(b"data: " + b"x" * 40) == []
    with pytest.raises(FrameTooLargeError) as caught:
        decoder.decode(b"x" * 40)
    assert isinstance(caught.value, WireFormatError)
    assert caught.value.raw is not None
    assert caught.value.raw.startswith("data: xxxx")


def test_sse_max_frame_raw_is_the_head_of_the_frame() -> None:
    decoder = SSEDecoder(max_frame=1000)
    for chunk in [b"event: big\n", b"data: "] + [b"y" * 100] * 9:  # 917 bytes pending
        assert decoder.decode(chunk) == []
    with pytest.raises(FrameTooLargeError) as caught:
        decoder.decode(b"y" * 100)
    raw = caught.value.raw
    assert raw is not None
    assert raw.startswith("event: big\ndata: yyyy")
    assert len(raw) < 1000


def test_sse_max_frame_events_completed_under_the_limit_returned() -> None:
    decoder = SSEDecoder(max_frame=64)
    assert decoder.decode(b"data: small\n\ndata: ") == [msg(b"small")]
    assert decoder.decode(b"z" * 40) == []  # 46 bytes pending: the finished event is not counted
    with pytest.raises(FrameTooLargeError):
        decoder.decode(b"z" * 20)


def test_sse_max_frame_bounds_each_event_not_the_stream() -> None:
    # bug class: the pending size not reset at dispatch, so a long stream of small events fails
    event = b": ping\n\nevent: e\ndata: " + b"x" * 30 + b"\n\n"
    body = event * 50
    expected = [msg(b"x" * 30, "e")] * 50
    assert decode([body], max_frame=64) == expected
    assert decode(one_by_one(body), max_frame=64) == expected
    assert decode(split_at(body, range(0, len(body), 7)), max_frame=64) == expected


def test_sse_max_frame_keeps_events_completed_in_the_same_chunk() -> None:
    # bug class: the error raised for the oversized tail loses the events the same chunk
    # completed before it (errors.py: events decoded before an error are never lost)
    body = b"data: a\n\ndata: " + b"x" * 100
    assert decode_until_error(one_by_one(body), max_frame=64) == ([msg(b"a")], FrameTooLargeError)
    assert decode_until_error([body], max_frame=64) == ([msg(b"a")], FrameTooLargeError)


@pytest.mark.parametrize("cuts", [[], [40], [70], list(range(1, 120))], ids=str)
def test_sse_max_frame_outcome_does_not_depend_on_chunking(cuts: list[int]) -> None:
    # bug class: an event past the limit refused when it arrives in pieces but accepted when
    # it (or its end) arrives in one chunk with its blank line
    body = b"data: ok\n\ndata: " + b"x" * 100 + b"\n\n"
    reference = decode_until_error(one_by_one(body), max_frame=64)
    assert reference == ([msg(b"ok")], FrameTooLargeError)
    assert decode_until_error(split_at(body, cuts), max_frame=64) == reference


# -- properties: chunk boundaries never matter -----------------------------------------------

_LINE_END = re.compile(rb"\r\n|\r|\n")


def spec_events(body: bytes, *, eof: bool = True) -> list[SSEEvent]:
    """The WHATWG interpretation of a whole body, written out line by line, with llm-rx's two
    deviations (empty data not dispatched; EOF dispatches the pending event). With ``eof``
    false, only the events a blank line already dispatched."""
    if body.startswith(BOM):
        body = body[len(BOM) :]
    lines = _LINE_END.split(body)
    if eof:
        lines.append(b"")
    else:
        lines.pop()  # an unterminated line may still grow
    events: list[SSEEvent] = []
    name, data, last_id = b"", b"", None
    for line in lines:
        if not line:
            if data[:-1]:
                events.append(
                    SSEEvent(name.decode("utf-8", "replace") or "message", data[:-1], last_id)
                )
            name, data = b"", b""
        elif not line.startswith(b":"):
            field, _, value = line.partition(b":")
            value = value.removeprefix(b" ")
            if field == b"data":
                data += value + b"\n"
            elif field == b"event":
                name = value
            elif field == b"id" and b"\0" not in value:
                last_id = value.decode("utf-8", "replace")
    return events


_TEXT = st.one_of(
    st.text(alphabet=" :ab\x00é😀\ufeff", max_size=6),
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12),
)
_LINE = st.one_of(
    st.builds(lambda v: "data:" + v, _TEXT),
    st.builds(lambda v: "data: " + v, _TEXT),
    st.sampled_from(["data", "data:", "data: ", "", "", ":", ": keep-alive", " data: x"]),
    st.builds(lambda v: "event: " + v, _TEXT),
    st.builds(lambda v: "id: " + v, _TEXT),
    st.builds(lambda v: "retry: " + v, st.sampled_from(["10", "x", "", "7 "])),
    _TEXT,
)
_STREAM = st.builds(
    lambda bom, lines, ends, last: (
        (BOM if bom else b"")
        + b"".join(line.encode() + ends[i % len(ends)] for i, line in enumerate(lines))
        + last.encode()
    ),
    st.booleans(),
    st.lists(_LINE, max_size=24),
    st.lists(st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=1, max_size=4),
    st.one_of(st.just(""), _LINE),  # the last line may lack its newline
)


def _cuts(size: int, max_step: int = 16) -> st.SearchStrategy[list[int]]:
    """Cut offsets: a random list, or every ``step`` bytes."""
    offsets = st.lists(st.integers(0, size), max_size=40)
    steady = st.integers(1, max_step).map(lambda step: list(range(0, size, step)))
    return st.one_of(offsets, steady)


@settings(max_examples=100, deadline=None)
@given(body=_STREAM, data=st.data())
def test_sse_property_generated_streams_same_events_however_split(
    body: bytes, data: st.DataObject
) -> None:
    expected = spec_events(body)
    assert decode([body]) == expected
    assert decode(one_by_one(body)) == expected
    assert decode(split_at(body, data.draw(_cuts(len(body)), label="cuts"))) == expected


@settings(max_examples=100, deadline=None)
@given(body=_STREAM, data=st.data())
def test_sse_property_events_returned_once_their_blank_line_arrived(
    body: bytes, data: st.DataObject
) -> None:
    # bug class: events held back to a later chunk or to flush (a decoder that only answers at
    # EOF passes every "same events" test); a "\r" ending a chunk is a line end at once.
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    seen = 0
    for chunk in split_at(body, data.draw(_cuts(len(body)), label="cuts")):
        events += decoder.decode(chunk)
        seen += len(chunk)
        assert events == spec_events(body[:seen], eof=False)
    assert events + decoder.flush() == spec_events(body)


@functools.cache
def _capture_events(path: Path) -> list[SSEEvent]:
    return decode([path.read_bytes()])


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sse_capture_one_byte_at_a_time_same_events(path: Path) -> None:
    body = path.read_bytes()
    events = _capture_events(path)
    assert events  # a capture that decodes to nothing would make this test vacuous
    assert events == spec_events(body)
    head = body[:32_768]  # bytes one by one are slow on the long captures: their head
    assert decode(one_by_one(head)) == decode([head])


@settings(max_examples=60, deadline=None)
@given(
    path=st.sampled_from(CAPTURES),
    end=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    data=st.data(),
)
def test_sse_property_captures_same_events_however_split(
    path: Path, end: bytes, data: st.DataObject
) -> None:
    body = path.read_bytes().replace(b"\n", end)  # the captures use "\n" only
    cuts = data.draw(_cuts(len(body), max_step=4096), label="cuts")
    assert decode(split_at(body, cuts)) == _capture_events(path)


@pytest.mark.parametrize("path", [p for p in CAPTURES if p.parent.name == "anthropic"],
                         ids=lambda p: p.name)
def test_sse_names_false_gives_the_same_data(path: Path) -> None:
    # bug class: a fast path that drops or reorders events when payloads name their own kind
    body = path.read_bytes()
    named = decode([body])
    decoder = SSEDecoder(names=False)
    cut = len(body) // 3
    items = decoder.decode_payloads(body[:cut]) + decoder.decode_payloads(body[cut:])
    flushed = decoder.flush()
    assert len(items) + len(flushed) == len(named)
    for item, event in zip([*items, *flushed], named, strict=True):
        if isinstance(item, SSEEvent):
            assert item == event  # kept whole: with its real name
        else:
            assert item == event.data  # given bare: only where the payload names its kind
            assert event.event != "error"


def test_sse_names_false_keeps_error_events_named() -> None:
    body = b'event: content_block_delta\ndata: {"a":1}\n\nevent: error\ndata: {"b":2}\n\n'
    items = SSEDecoder(names=False).decode_payloads(body)
    assert [i for i in items if isinstance(i, SSEEvent) and i.event == "error"] == [
        SSEEvent("error", b'{"b":2}')
    ]
    plain = b'event: content_block_delta\ndata: {"a":1}\n\nevent: ping\ndata: {"b":2}\n\n'
    assert SSEDecoder(names=False).decode_payloads(plain) == [b'{"a":1}', b'{"b":2}']


def test_sse_names_false_max_frame_keeps_completed_events() -> None:
    # bug class: the limit tripping inside the named fast path loses the events before it
    body = b'event: a\ndata: {"ok":1}\n\nevent: b\ndata: ' + b"x" * 100 + b"\n\n"
    decoder = SSEDecoder(max_frame=64, names=False)
    with pytest.raises(FrameTooLargeError) as caught:
        decoder.decode_payloads(body)
    assert caught.value.frames == [b'{"ok":1}']


def test_sse_names_false_block_with_two_data_lines_takes_the_general_path() -> None:
    # bug class: a count-based fast path fooled by a two-data-line block balanced by a block
    # with no data line
    body = b"event: a\ndata: x\ndata: y\n\nevent: b\n\n"
    assert SSEDecoder(names=False).decode_payloads(body) == [SSEEvent("a", b"x\ny")]


_NAMED_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["a", "ping", "error", "content_block_delta"]),
        st.lists(st.sampled_from(["{}", '{"x":1}', "", "y"]), min_size=0, max_size=3),
        st.sampled_from(["\n\n", "\n\n\n", "\n"]),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(events=_NAMED_EVENTS, data=st.data())
def test_sse_property_names_false_same_data_as_named(
    events: list[tuple[str, list[str], str]], data: st.DataObject
) -> None:
    # bug class: the named-event fast path miscounting blocks with no, or several, data lines
    body = "".join(
        f"event: {name}\n" + "".join(f"data: {line}\n" for line in lines)[:-1] + end
        for name, lines, end in events
    ).encode()
    named = decode([body])
    decoder = SSEDecoder(names=False)
    items: list[bytes | SSEEvent] = []
    for chunk in split_at(body, data.draw(_cuts(len(body)), label="cuts")):
        items += decoder.decode_payloads(chunk)
    items += decoder.flush()
    assert len(items) == len(named)
    for item, event in zip(items, named, strict=True):
        if isinstance(item, SSEEvent):
            assert item == event
        else:
            assert (item, event.event != "error") == (event.data, True)


# -- a big read (a whole body at once) is framed a piece at a time ---------------------------

_KINDS = (b"data: {\"n\": %d}\n\n", b"event: delta\ndata: %d\n\n", b": keep-alive %d\n\n",
          b"id: %d\ndata: x\n\n", b"data: crlf %d\r\n\r\n", b"data: a\ndata: %d\n\n",
          b"data: %d lone cr\r\r")
BIG = b"".join(_KINDS[n % len(_KINDS)] % n for n in range(16_000))  # (about 320 KiB)


@settings(max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(0, len(BIG)), max_size=4))
def test_sse_big_read_same_events_as_any_reads(cuts: list[int]) -> None:
    # bug class: a read framed in pieces gives other events than the same bytes in reads
    # (an event cut between two pieces, a "\r\n" split between them)
    assert decode([BIG]) == decode(split_at(BIG, cuts))


def test_sse_big_read_framed_with_a_usual_read_working_set() -> None:
    # bug class: a whole body framed at once: several copies and splits of all of it
    body = b"".join(b'data: {"type": "delta", "text": "%d"}\n\n' % n for n in range(40_000))
    decoder = SSEDecoder()
    events: list[object] = []
    gc.collect()
    tracemalloc.start()
    try:
        events += decoder.decode_payloads(body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(events) == 40_000
    assert peak < 2.5 * len(body)


def test_sse_big_read_error_carries_the_events_of_every_piece_before_it() -> None:
    # bug class: a frame too large in a later piece losing the events of the earlier ones
    body = BIG + b"data: " + b"x" * 5000 + b"\n\ndata: after\n\n"
    events, error = decode_until_error([body], max_frame=4096)
    assert error is FrameTooLargeError
    assert events == decode([BIG])
