"""ResponseBuilder: feeding a chunk's events at once is feeding them one by one."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_rx.events import (
    BlockStart,
    BlockStop,
    Event,
    MessageStart,
    RefusalDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from llm_rx.fold.builder import ResponseBuilder, Snapshot

from .captures import CAPTURES, Capture
from .helpers import decode_events, first_events


def _one_by_one(events: list[Event]) -> ResponseBuilder:
    builder = ResponseBuilder(history=False)
    for event in events:
        builder.feed(event)
    return builder


def _in_lists(events: list[Event], cuts: list[int]) -> ResponseBuilder:
    builder = ResponseBuilder(history=False)
    points = sorted({0, len(events), *(c % (len(events) + 1) for c in cuts)})
    for start, end in itertools.pairwise(points):
        builder.feed_all(events[start:end])
    return builder


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
@settings(max_examples=5, deadline=None)
@given(cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_builder_feed_all_in_any_lists_is_feed_one_by_one(
    capture: Capture, cuts: list[int]
) -> None:
    # bug class: a shortcut for a list of text deltas that sends them to the wrong block
    events, error = decode_events([capture.data], capture.provider)
    if first_events(events) != events:  # (several responses: a builder folds one)
        events, error = first_events(events), None
    assert _in_lists(events, cuts).build(error) == _one_by_one(events).build(error)


@pytest.mark.parametrize(
    "deltas",
    [
        [TextDelta(0, "a"), TextDelta(0, "b")],  # the shortcut: one block, already started
        [TextDelta(1, "a"), TextDelta(1, "b")],  # a block never started: implied
        [TextDelta(0, "a"), TextDelta(1, "b")],  # two blocks
        [TextDelta(0, "a"), ThinkingDelta(0, "b")],  # two kinds
    ],
)
def test_builder_feed_all_text_deltas(deltas: list[Event]) -> None:
    head: list[Event] = [MessageStart("openai-chat", "m", None), BlockStart(0, "text")]
    together = ResponseBuilder(history=False)
    together.feed_all(head)
    together.feed_all(deltas)
    assert together.build() == _one_by_one(head + deltas).build()
    assert together._seq == len(head) + len(deltas)


_DELTA_KINDS = [TextDelta, ThinkingDelta, RefusalDelta, ToolArgsDelta]


@settings(max_examples=150, deadline=None)
@given(
    started=st.lists(st.sampled_from(["text", "thinking", "tool_call", "refusal"]),
                     min_size=1, max_size=4),
    deltas=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.text(max_size=3)),
                    max_size=40),
    stopped=st.sets(st.integers(0, 5)),
    cuts=st.lists(st.integers(0, 60), max_size=5),
)
def test_builder_feed_all_interleaved_deltas_is_feed_one_by_one(
    started: list[str], deltas: list[tuple[int, int, str]], stopped: set[int],
    cuts: list[int],
) -> None:
    # bug class: the shortcut for the deltas of several blocks at once (parallel tool calls)
    # reordering a block's fragments, or taken for a delta whose block was never started
    head: list[Event] = [MessageStart("openai-chat", "m", None)]
    head += [BlockStart(index, kind) for index, kind in enumerate(started)]  # type: ignore[arg-type]
    head += [BlockStop(index) for index in sorted(stopped)]  # (fragments after a stop too)
    events = head + [_DELTA_KINDS[kind](index, text) for index, kind, text in deltas]
    together = _in_lists(events, cuts)
    assert together.build() == _one_by_one(events).build()
    assert together._seq == len(events)


def _advanced(events: list[Event], cuts: list[int]) -> list[Snapshot]:
    builder = ResponseBuilder()
    points = sorted({0, len(events), *(c % (len(events) + 1) for c in cuts)})
    snapshots: list[Snapshot] = []
    for start, end in itertools.pairwise(points):
        taken, failure = builder.advance_all(events[start:end])
        assert failure is None
        snapshots += taken
    return snapshots


@pytest.mark.parametrize("capture", CAPTURES[::4], ids=lambda c: c.name)
@settings(max_examples=3, deadline=None)
@given(cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_builder_advance_all_in_any_lists_is_advance_one_by_one(
    capture: Capture, cuts: list[int]
) -> None:
    # bug class: a shortcut for a read of text deltas that numbers them wrong, so an earlier
    # snapshot sees later text (or misses its own)
    events, _ = decode_events([capture.data], capture.provider)
    one_by_one = ResponseBuilder()
    expected = [one_by_one.advance(event) for event in events]
    snapshots = _advanced(events, cuts)
    assert [s.text for s in snapshots] == [s.text for s in expected]
    for n in {*(c % (len(events) + 1) for c in cuts), len(events)}:
        for at in (n - 2, n - 1):
            if at >= 0:
                assert snapshots[at].response == expected[at].response


@pytest.mark.parametrize(
    "deltas",
    [
        [TextDelta(0, "a"), TextDelta(0, "b")],  # the shortcut: one block, already started
        [TextDelta(1, "a"), TextDelta(1, "b")],  # a block never started: implied
        [TextDelta(0, "a"), TextDelta(1, "b")],  # two blocks
        [ThinkingDelta(0, "a"), ThinkingDelta(0, "b")],  # a kind the block does not have
    ],
)
def test_builder_advance_all_text_deltas(deltas: list[Event]) -> None:
    head: list[Event] = [MessageStart("openai-chat", "m", None), BlockStart(0, "text")]
    builder = ResponseBuilder()
    builder.advance_all(head)
    snapshots, failure = builder.advance_all(deltas)
    one_by_one = ResponseBuilder()
    expected = [one_by_one.advance(event) for event in head + deltas][len(head):]
    assert failure is None
    assert [s.response for s in snapshots] == [s.response for s in expected]
    assert builder._seq == len(head) + len(deltas)


def test_builder_advance_all_stops_at_an_event_it_cannot_feed() -> None:
    builder = ResponseBuilder()
    events: list[Any] = [MessageStart("x"), BlockStart(0, "text"), TextDelta(0, "a"),
                         "not an event", TextDelta(0, "b")]
    snapshots, failure = builder.advance_all(events)
    assert isinstance(failure, KeyError)  # (no handler for it)
    assert [s.text for s in snapshots] == ["", "", "a"]


def test_feed_all_counts_the_events_before_a_malformed_one() -> None:
    # bug class: a read's deltas folded inline take no number each, so a failure inside the
    # read must still say how many events went in before it (a fan_out's shared fold reads
    # it as the builder's sequence number)
    from llm_rx.operators._fold import fed

    builder = ResponseBuilder(history=False)
    events: list[Any] = [MessageStart("anthropic", None, None), BlockStart(0, "text"),
                         TextDelta(0, "a"), TextDelta(["unhashable"], "b"), TextDelta(0, "c")]
    count, error = fed(builder, events)
    assert (count, type(error)) == (3, TypeError)


def test_a_long_reply_fed_a_delta_a_read_keeps_its_parts_joined() -> None:
    # bug class: the bound on a block's parts kept only by reads of many events: a live
    # reply (one delta a read, as to_response() after a source steps it) held a string
    # object per delta
    builder = ResponseBuilder(history=False)
    builder.feed_all([MessageStart("anthropic", None, None), BlockStart(0, "text")])
    for _ in range(20_000):
        builder.feed_all([TextDelta(0, "ab")])
    acc = builder._blocks[0]
    assert acc.joined == 4  # (every 4,096 parts joined into one)
    assert len(acc.parts) == 4 + 20_000 - 4 * 4_097
    assert builder.build().text == "ab" * 20_000
