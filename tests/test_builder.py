"""ResponseBuilder: feeding a chunk's events at once is feeding them one by one."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_rx.builder import ResponseBuilder
from llm_rx.events import BlockStart, Event, MessageStart, TextDelta, ThinkingDelta

from .captures import CAPTURES, Capture
from .helpers import decode_events


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
