"""text_only(): the answer's text deltas, nothing else."""

from __future__ import annotations

from reactivex import operators as ops
from reactivex.testing.marbles import marbles_testing

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import BlockStart, MessageStart, MessageStop, TextDelta, ThinkingDelta

from ..captures import capture

EVENTS = {
    "S": MessageStart("anthropic"),
    "b": BlockStart(0, "thinking"),
    "t": ThinkingDelta(0, "hmm"),
    "c": BlockStart(1, "text"),
    "h": TextDelta(1, "Hel"),
    "l": TextDelta(1, "lo"),
    "M": MessageStop("end_turn"),
}


def test_text_only_marbles_excludes_thinking() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-S-b-t-c-h-l-M-|", EVENTS)
        expected = exp("---------h-l---|", {"h": "Hel", "l": "lo"})
        assert start(source.pipe(lxo.text_only())) == expected


def test_text_only_capture_joins_to_the_reassembled_text() -> None:
    data = capture("anthropic/thinking-signature.sse").data
    pieces = llm_rx.from_bytes(data).pipe(lxo.text_only(), ops.to_list()).run()
    assert "".join(pieces) == llm_rx.reassemble(data).text
    assert "pedestrian safety" not in "".join(pieces)  # that is the thinking
