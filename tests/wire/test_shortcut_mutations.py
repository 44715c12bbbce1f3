"""The equivalence checks can fail: a shortcut patched to relabel, drop or reorder the deltas it
makes is caught by each comparison the property tests and the fuzzer hold the shortcuts to
(the fast path against the general one, a body re-chunked, the fuzzer's invariants).

The shortcut patched is the batch of a template's frames (``TemplateFrames._template_run``,
``llm_rx/speed/batches.py``; with the compiled core in use, the run it read,
``TemplateFrames._took``): with the shortcuts on, a whole OpenAI chat body's text deltas come
from it; with them off, or a frame per read, it makes one delta at a time (never mutated)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from llm_rx import speed
from llm_rx.events import Event, TextDelta, ThinkingDelta
from llm_rx.speed import batches, fast_paths

from ..captures import capture
from ..fuzz.checks import check
from ..helpers import decode_events, outcome, split_at
from .frames import frames_of
from .test_fast_paths import _both

NAME = "openai/chat-text-basic.sse"


def _relabel(events: list[Event]) -> list[Event]:
    """Every answer delta made a reasoning delta (same block, same text)."""
    return [ThinkingDelta(*e) if type(e) is TextDelta else e for e in events]


def _drop(events: list[Event]) -> list[Event]:
    """One delta (the second) left out."""
    return events[:1] + events[2:]


def _swap(events: list[Event]) -> list[Event]:
    """The first two adjacent deltas that differ, in the other order."""
    out = list(events)
    for at in range(len(out) - 1):
        if out[at] != out[at + 1]:
            out[at], out[at + 1] = out[at + 1], out[at]
            break
    return out


MUTATIONS: dict[str, Callable[[list[Event]], list[Event]]] = {
    "relabel": _relabel,
    "drop": _drop,
    "swap": _swap,
}


@pytest.fixture(params=sorted(MUTATIONS))
def mutated(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The batch shortcut patched with one mutation; the list counts the runs it changed."""
    mutation = MUTATIONS[request.param]
    original = getattr(batches.TemplateFrames, _RUN)
    changed: list[int] = []

    def patched(self: Any, *args: Any) -> Any:
        out: list[Event] = args[-1]
        start = len(out)
        taken = original(self, *args)
        if taken is not False and len(out) - start >= 2:
            out[start:] = mutation(out[start:])
            changed.append(len(out) - start)
        return taken

    monkeypatch.setattr(batches.TemplateFrames, _RUN, patched)
    return changed


# The batch the shortcuts take: the compiled core's run where it is in use.
_RUN = "_took" if speed.compiled else "_template_run"


def test_mutated_shortcut_is_taken(mutated: list[int]) -> None:
    # bug class: a mutation test whose shortcut is never run proves nothing
    decode_events([capture(NAME).data], "openai-chat")
    assert sum(mutated) >= 10


def test_mutated_shortcut_fails_the_fast_path_property(mutated: list[int]) -> None:
    # bug class: the fast-path property test (test_fast_paths.py's comparison) passing a
    # shortcut that relabels, drops or reorders what it decodes
    data = capture(NAME).data
    fast = _both([data], "openai-chat")
    assert mutated
    with fast_paths(False):
        slow = _both([data], "openai-chat")
    assert fast != slow


def test_mutated_shortcut_fails_the_rechunk_property(mutated: list[int]) -> None:
    # bug class: the re-chunking property (test_properties.py's comparison) passing it: a
    # frame per read never batches, the whole body does
    data = capture(NAME).data
    reads = [frame for _, frame in frames_of(capture(NAME))]
    assert outcome(reads, "openai-chat") != outcome([data], "openai-chat")
    assert mutated


def test_mutated_shortcut_fails_the_fuzz_invariants(mutated: list[int]) -> None:
    # bug class: the fuzzer's invariants (re-chunked, fast paths off) blind to it
    data = capture(NAME).data
    failures = check(data, "openai-chat", [[len(data) // 2]])
    assert {failure.invariant for failure in failures} >= {"fast-path"}
    assert mutated


def test_relabelled_deltas_pass_a_comparison_without_kinds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # why the kinds are compared: the fields alone (the events as bare tuples) cannot tell
    # a relabelled delta from the one it replaced
    original = getattr(batches.TemplateFrames, _RUN)

    def relabelled(self: Any, *args: Any) -> Any:
        out: list[Event] = args[-1]
        start = len(out)
        taken = original(self, *args)
        out[start:] = _relabel(out[start:])
        return taken

    monkeypatch.setattr(batches.TemplateFrames, _RUN, relabelled)
    data = capture(NAME).data
    fast, _ = decode_events([data], "openai-chat")
    slow, _ = decode_events(split_at(data, range(0, len(data), 64)), "openai-chat")
    assert [tuple(e) for e in fast] == [tuple(e) for e in slow]
    assert fast != slow
    assert outcome([data], "openai-chat") != outcome(split_at(data, range(0, len(data), 64)),
                                                     "openai-chat")
