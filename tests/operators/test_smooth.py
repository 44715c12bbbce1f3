"""smooth(): text and reasoning re-chunked at word or line boundaries, one chunk per delay at
most, the rest flushed at a block's end or the reply's end, every other event in order
(virtual time)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import reactivex
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError
from llm_rx.events import (
    BlockStart,
    BlockStop,
    Event,
    MessageStart,
    MessageStop,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    UsageUpdate,
)
from llm_rx.fold.builder import ResponseBuilder
from llm_rx.response import Usage

from ..captures import CAPTURES, Capture, capture

on_next, on_completed, on_error = (
    ReactiveTest.on_next, ReactiveTest.on_completed, ReactiveTest.on_error
)
subscribe = ReactiveTest.subscribe

S, B, E, M = MessageStart("anthropic"), BlockStart(0, "text"), BlockStop(0), MessageStop("end_turn")


def _kinds(messages: list[object]) -> list[tuple[float, object]]:
    """Each record's time and its value with its kind (events compare by kind)."""
    out: list[tuple[float, object]] = []
    for record in messages:
        value = record.value  # type: ignore[attr-defined]
        kind = value.kind
        if kind == "N":
            out.append((record.time, (type(value.value), *value.value)))  # type: ignore[attr-defined]
        else:
            out.append((record.time, kind))
    return out


def test_smooth_word_chunks_one_per_delay_and_flushes_at_the_block_end() -> None:
    with marbles_testing(timespan=1.0) as (start, cold, _hot, _exp):
        source = cold("-s-b-x-y-z-e-m-|", {"s": S, "b": B, "x": TextDelta(0, "Hel"),
                                           "y": TextDelta(0, "lo wo"),
                                           "z": TextDelta(0, "rld, again"), "e": E, "m": M})
        result = start(source.pipe(lxo.smooth("word", 3.0)))
    assert _kinds(result) == [
        (201, (MessageStart, "anthropic", None, None)),
        (203, (BlockStart, 0, "text", None, None, 0, None, None)),
        (207, (TextDelta, 0, "Hello ")),  # (at the first boundary)
        (210, (TextDelta, 0, "world, ")),  # (a delay after the one before)
        (213, (TextDelta, 0, "again")),  # (the rest, flushed at the block's end)
        (213, (BlockStop, 0)), (213, (MessageStop, "end_turn", None, None)), (215, "C")]


def test_smooth_line_chunks_at_line_ends() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        on_next(10, S), on_next(11, B), on_next(12, TextDelta(0, "one\ntw")),
        on_next(13, TextDelta(0, "o\n\nthree")), on_next(14, E), on_next(15, M),
        on_completed(16))
    result = scheduler.start(lambda: source.pipe(lxo.smooth("line", 5.0, scheduler)))
    assert _kinds(result.messages) == [
        (210, (MessageStart, "anthropic", None, None)), (211, (BlockStart, *B)),
        (212, (TextDelta, 0, "one\n")), (217, (TextDelta, 0, "two\n\n")),
        (222, (TextDelta, 0, "three")), (222, (BlockStop, 0)),
        (222, (MessageStop, "end_turn", None, None)), (222, "C")]
    assert source.subscriptions == [subscribe(200, 216)]


def test_smooth_passes_other_events_in_order_after_the_text_before_them() -> None:
    scheduler = TestScheduler()
    usage = UsageUpdate(Usage(output_tokens=3))
    source = scheduler.create_cold_observable(
        on_next(10, BlockStart(0, "thinking")), on_next(11, ThinkingDelta(0, "a b c")),
        on_next(12, SignatureDelta(0, "sig")), on_next(13, usage), on_completed(14))
    result = scheduler.start(lambda: source.pipe(lxo.smooth("word", 3.0, scheduler)))
    assert _kinds(result.messages) == [
        (210, (BlockStart, 0, "thinking", None, None, 0, None, None)),
        (211, (ThinkingDelta, 0, "a ")), (214, (ThinkingDelta, 0, "b ")),
        (217, (ThinkingDelta, 0, "c")), (217, (SignatureDelta, 0, "sig")),
        (217, (UsageUpdate, usage.usage)), (217, "C")]


def test_smooth_slow_text_goes_out_at_once() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        on_next(10, TextDelta(0, "one ")), on_next(50, TextDelta(0, "two ")), on_completed(60))
    result = scheduler.start(lambda: source.pipe(lxo.smooth("word", 5.0, scheduler)))
    assert _kinds(result.messages) == [
        (210, (TextDelta, 0, "one ")), (250, (TextDelta, 0, "two ")), (260, "C")]


def test_smooth_error_comes_after_the_last_chunk() -> None:
    scheduler = TestScheduler()
    cut = IncompleteStreamError("cut")
    source = scheduler.create_cold_observable(
        on_next(10, TextDelta(0, "a b c")), on_error(11, cut))
    result = scheduler.start(lambda: source.pipe(lxo.smooth("word", 10.0, scheduler)))
    assert _kinds(result.messages) == [
        (210, (TextDelta, 0, "a ")), (220, (TextDelta, 0, "b ")), (230, (TextDelta, 0, "c")),
        (230, "E")]


def test_smooth_dispose_cancels_the_waiting_chunks() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        on_next(10, TextDelta(0, "a b c d ")), on_completed(11))
    result = scheduler.start(lambda: source.pipe(lxo.smooth("word", 10.0, scheduler)),
                             disposed=225)
    assert _kinds(result.messages) == [(210, (TextDelta, 0, "a ")), (220, (TextDelta, 0, "b "))]
    scheduler.advance_by(100)  # (no timer left to fire into a disposed observer)


def test_smooth_another_block_flushes_the_text_before_it() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        on_next(10, TextDelta(0, "no boundary")), on_next(11, TextDelta(1, "next ")),
        on_completed(12))
    result = scheduler.start(lambda: source.pipe(lxo.smooth("word", 1.0, scheduler)))
    assert _kinds(result.messages) == [
        (210, (TextDelta, 0, "no ")), (211, (TextDelta, 0, "boundary")),
        (212, (TextDelta, 1, "next ")), (212, "C")]


def _read(observable: reactivex.Observable[Event]) -> tuple[dict[str, object], list[type]]:
    """The reply built from what arrived, and the kinds of the errors."""
    events: list[Event] = []
    errors: list[Exception] = []
    observable.subscribe(events.append, errors.append)
    builder = ResponseBuilder()
    for event in events:
        builder.feed(event)
    return builder.build().model_dump(), [type(error) for error in errors]


@pytest.mark.parametrize("chunking", ["word", "line"])
@pytest.mark.parametrize("cap", CAPTURES[::5], ids=lambda c: c.name)
def test_smooth_keeps_every_capture_the_same_reply(cap: Capture, chunking: str) -> None:
    plain = _read(llm_rx.from_bytes(cap.data, cap.provider))
    smoothed = _read(llm_rx.from_bytes(cap.data, cap.provider).pipe(
        lxo.smooth(chunking, 0.0)))  # type: ignore[arg-type]
    assert smoothed == plain  # (the same reply, the same error when the body has one)


def test_smooth_refuses_an_unknown_chunking() -> None:
    with pytest.raises(ValueError, match="word"):
        lxo.smooth("sentence")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="delay"):
        lxo.smooth("word", -1.0)


def test_smooth_on_a_real_capture_reassembles_the_same() -> None:
    cap = capture("anthropic/thinking-signature.sse")
    scheduler = TestScheduler()
    result: list[Event] = []
    llm_rx.from_bytes(cap.data, cap.provider).pipe(
        lxo.smooth("word", 0.01, scheduler)).subscribe(result.append, scheduler=scheduler)
    scheduler.start()
    builder = ResponseBuilder()
    for event in result:
        builder.feed(event)
    assert builder.build().model_dump() == llm_rx.reassemble(cap.data, cap.provider).model_dump()


class _CountingPattern:
    """A boundary pattern that counts the characters it is asked to scan (and stops a
    quadratic re-scan at once)."""

    def __init__(self, pattern: re.Pattern[str], most: int) -> None:
        self.pattern, self.most, self.scanned = pattern, most, 0

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        self.scanned += len(text)
        assert self.scanned <= self.most, "the pending text is scanned again"
        return self.pattern.finditer(text)


@pytest.mark.parametrize("chunking", ["word", "line"])
def test_smooth_scans_each_character_once(chunking: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from llm_rx.operators import _smooth

    pattern, after_word = _smooth._BOUNDARY[chunking]
    counting = _CountingPattern(pattern, 20_000)
    monkeypatch.setitem(_smooth._BOUNDARY, chunking, (counting, after_word))
    text = "x" * 20_000  # (no boundary at all: a long URL, base64, ...)
    events = [TextDelta(0, text[i:i + 10]) for i in range(0, len(text), 10)]
    out: list[Event] = []
    reactivex.from_iterable([B, *events, E]).pipe(lxo.smooth(chunking, 0.0)).subscribe(out.append)
    assert _kinds([ReactiveTest.on_next(0, e) for e in out]) == [
        (0, (BlockStart, *B)), (0, (TextDelta, 0, text)), (0, (BlockStop, 0))]
    assert counting.scanned == len(text)


def test_smooth_word_boundaries_across_deltas() -> None:
    pieces = ["  lead", "ing wo", "rd", "  ", " next\t", "\n", "x", "y z", " "]
    out: list[Event] = []
    reactivex.from_iterable([TextDelta(0, p) for p in pieces]).pipe(
        lxo.smooth("word", 0.0)).subscribe(out.append)
    assert [(type(e), *e) for e in out] == [
        (TextDelta, 0, "  leading "), (TextDelta, 0, "word  "), (TextDelta, 0, " next\t"),
        (TextDelta, 0, "\nxy "), (TextDelta, 0, "z ")]


def test_smooth_a_fast_source_catches_up_past_the_backlog_bound() -> None:
    scheduler = TestScheduler()
    words = [f"w{i} " for i in range(100)]
    source = scheduler.create_cold_observable(
        *[on_next(10 + i, TextDelta(0, word)) for i, word in enumerate(words)],
        on_completed(110))
    result = scheduler.start(lambda: source.pipe(lxo.smooth("word", 10.0, scheduler)))
    out = _kinds(result.messages)
    # one word per 10 ticks until 65 wait (at 282): they go out at once, merged
    assert out[:8] == [(210 + 10 * i, (TextDelta, 0, words[i])) for i in range(8)]
    assert out[8] == (282, (TextDelta, 0, "".join(words[8:73])))
    assert out[9] == (290, (TextDelta, 0, words[73]))
    assert [kind for _time, kind in out[-1:]] == ["C"]
    assert "".join(value[2] for _time, value in out[:-1]) == "".join(words)  # type: ignore[index]
