"""Pacing and fault parsing, without a server: the schedule of writes is a pure function."""

from __future__ import annotations

import math

import pytest

from llm_rx.serve import Fault, parse_fault
from llm_rx.serve._faults import parse_pace
from llm_rx.serve._media import Pacing, _split, writes


def test_writes_at_pace_zero_are_read_size_slices_at_once() -> None:
    plan = list(writes([b"abc", b"defgh"], Pacing(0, read_size=3)))
    assert plan == [(0.0, b"abc"), (0.0, b"def"), (0.0, b"gh")]


def test_writes_at_a_pace_send_one_frame_per_tick() -> None:
    plan = list(writes([b"aa", b"bbbb", b"c"], Pacing(4, read_size=2)))
    assert plan == [(0.0, b"aa"), (0.25, b"bb"), (0.25, b"bb"), (0.5, b"c")]


def test_split_cuts_a_write_at_each_fault_offset() -> None:
    plan = list(_split([(0.0, b"abcdef"), (1.0, b"gh")], {2, 4, 6}))
    assert plan == [(0.0, b"ab"), (0.0, b"cd"), (0.0, b"ef"), (1.0, b"gh")]


def test_parse_fault_reads_every_field() -> None:
    fault = parse_fault("drop-after=10, stall-after=5,stall=0.5,status=429,error-after=7")
    assert fault == Fault(drop_after=10, stall_after=5, stall=0.5, status=429, error_after=7)


def test_parse_fault_empty_is_no_fault() -> None:
    assert parse_fault(None) == Fault()
    assert parse_fault(" ") == Fault()
    assert math.isinf(parse_fault("stall-after=3").stall)  # until the client goes away


@pytest.mark.parametrize("value", ["drop-after=-1", "status=302", "x=1", "stall=nan",
                                   "stall-after"])
def test_parse_fault_refuses_what_it_cannot_read(value: str) -> None:
    with pytest.raises(ValueError):
        parse_fault(value)


def test_parse_pace_header_overrides_the_default() -> None:
    assert parse_pace({}, 12.0) == 12.0
    assert parse_pace({"x-llm-rx-pace": "0"}, 12.0) == 0.0
    with pytest.raises(ValueError):
        parse_pace({"x-llm-rx-pace": "inf"}, 0.0)
