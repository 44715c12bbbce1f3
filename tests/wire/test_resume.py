"""The resume tap: the `Cursor` of the last whole event, whatever the reads and wherever the
connection was cut; the SSE framer and the decoders drop the event cut in half."""

from __future__ import annotations

import orjson
import pytest

from llm_rx import speed
from llm_rx.events import Event
from llm_rx.serve._frames import split_frames
from llm_rx.wire.registry import make_decoder
from llm_rx.wire.resume import Cursor, ResumeTap
from llm_rx.wire.sse import SSEDecoder

from ..captures import capture


def _sequence(frame: bytes) -> int:
    data = frame.split(b"data: ", 1)[1]
    return int(orjson.loads(data)["sequence_number"])


def test_resume_tap_cursor_at_every_cut_is_the_last_whole_event() -> None:
    data = capture("openai/responses-basic-llm.sse").data
    frames = split_frames(data, "sse")
    ends = [sum(map(len, frames[: n + 1])) for n in range(len(frames))]
    for cut in range(len(data) + 1):
        tap = ResumeTap()
        for at in range(0, cut, 97):  # (reads of an odd size)
            tap.read(data[at : min(at + 97, cut)])
        whole = [n for n, end in enumerate(ends) if end <= cut]
        expected = _sequence(frames[whole[-1]]) if whole else None
        assert tap.cursor == Cursor(None, expected), cut
        assert tap.frames == len(whole)


def test_resume_tap_a_quoted_sequence_number_in_a_string_is_not_the_events() -> None:
    tap = ResumeTap()
    tap.read(b'data: {"delta":"\\"sequence_number\\": 99","sequence_number":4}\n\n')
    tap.read(b'data: {"type":"x","text":"\\"sequence_number\\":7"}\n\n')
    assert tap.cursor.sequence_number == 4


def test_resume_tap_keeps_the_last_event_id_across_a_reconnection() -> None:
    tap = ResumeTap()
    tap.read(b"id: 1\ndata: {}\n\nid: 2\ndata: {}\r\n\r\nid: 3\ndata: {")
    assert tap.cursor.last_event_id == "2"
    tap.reconnected()
    tap.read(b"id: 3\ndata: {}\n\n")
    assert (tap.cursor.last_event_id, tap.frames) == ("3", 3)


def test_sse_reconnected_drops_the_event_cut_in_half_and_checks_a_bom_again() -> None:
    framer = SSEDecoder()
    assert [e.data for e in framer.decode(b"data: a\n\ndata: b")] == [b"a"]
    framer.reconnected()
    assert [e.data for e in framer.decode(b"\xef\xbb\xbfdata: b2\r")] == []
    assert [e.data for e in framer.decode(b"\n\r\n")] == [b"b2"]


@pytest.mark.parametrize("shortcuts", [True, False])
def test_decoder_reconnected_goes_on_as_one_body(shortcuts: bool) -> None:
    cap = capture("openai/responses-code-interpreter-reasoning.sse")
    frames = split_frames(cap.data, "sse")
    expected = [(type(e), *e) for e in _events(cap.data, shortcuts)]
    for cut_frame in (3, 50, 200):
        head = b"".join(frames[:cut_frame]) + frames[cut_frame][: len(frames[cut_frame]) // 2]
        rest = b"".join(frames[cut_frame:])
        with speed.fast_paths(shortcuts):
            decoder = make_decoder("openai-responses",
                                   decoders=speed.decoders() if shortcuts else None)
            events: list[Event] = []
            for at in range(0, len(head), 512):
                events += decoder.decode(head[at : at + 512])
            assert decoder.settled().reconnected()
            for at in range(0, len(rest), 512):
                events += decoder.decode(rest[at : at + 512])
            events += decoder.flush()
        assert [(type(e), *e) for e in events] == expected, cut_frame


def _events(data: bytes, shortcuts: bool) -> list[Event]:
    with speed.fast_paths(shortcuts):
        decoder = make_decoder("openai-responses",
                               decoders=speed.decoders() if shortcuts else None)
        events: list[Event] = []
        for at in range(0, len(data), 512):
            events += decoder.decode(data[at : at + 512])
        return events + decoder.flush()


def test_a_wire_without_event_ids_does_not_resume() -> None:
    decoder = make_decoder("ollama")
    assert decoder.settled().reconnected() is False
