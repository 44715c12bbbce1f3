"""``encode(to)``: events to a target's stream bytes, live, fused with its source."""

from __future__ import annotations

from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError, ProviderError
from llm_rx.events import Dropped, Event

from ..captures import capture
from ..helpers import reads_of

THINKING = capture("anthropic/thinking-signature.sse")


def _run(observable: Any) -> list[Any]:
    seen: list[Any] = []
    observable.subscribe(seen.append, seen.append, lambda: seen.append("completed"))
    return seen


def test_encode_right_after_a_source_gives_one_value_per_read() -> None:
    reads = reads_of(THINKING.data, 256)
    values = _run(llm_rx.from_bytes(reads, "anthropic").pipe(lxo.encode("openai-chat")))
    assert values[-1] == "completed"
    chunks = values[:-1]
    assert 1 < len(chunks) <= len(reads)  # (a read whose events write nothing gives none)
    assert b"".join(chunks) == llm_rx.translate(THINKING.data, "openai-chat", "anthropic")


def test_encode_after_any_observable_gives_the_same_bytes() -> None:
    events = llm_rx.from_bytes(reads_of(THINKING.data, 100), "anthropic")
    hop = events.pipe(ops.map(lambda event: event))  # (not a source: one event at a time)
    values = _run(hop.pipe(lxo.encode("openai-chat")))
    assert values[-1] == "completed"
    assert b"".join(values[:-1]) == llm_rx.translate(THINKING.data, "openai-chat", "anthropic")


def test_encode_writes_each_delta_as_its_event_arrives() -> None:
    subject: Subject[Event] = Subject()
    out: list[bytes] = []
    subject.pipe(lxo.encode("anthropic")).subscribe(out.append)
    events = _events(THINKING.data, "anthropic")
    deltas = [n for n, event in enumerate(events) if type(event).__name__ == "ThinkingDelta"]
    for event in events[: deltas[1] + 1]:
        subject.on_next(event)
    assert b"thinking_delta" in out[-1]  # (the second delta is out before the third arrives)
    assert out[-1].count(b"thinking_delta") == 1


def _events(data: bytes, provider: Any) -> list[Event]:
    out: list[Event] = []
    llm_rx.from_bytes(data, provider).subscribe(out.append, lambda error: None)
    return out


def test_encode_reports_what_the_target_cannot_carry() -> None:
    lost: list[Dropped] = []
    _run(llm_rx.from_bytes(THINKING.data, "anthropic").pipe(lxo.encode("ollama", dropped=lost)))
    assert [(item.what, item.index) for item in lost] == [("signature", 0)]
    assert lost[0].raw == llm_rx.reassemble(THINKING.data).content[0].signature


def test_encode_cut_source_ends_with_its_error_and_no_terminal_frame() -> None:
    cut = THINKING.data[: len(THINKING.data) // 2]
    values = _run(llm_rx.from_bytes(cut, "anthropic").pipe(lxo.encode("openai-chat")))
    assert isinstance(values[-1], IncompleteStreamError)
    data = b"".join(values[:-1])
    assert data
    assert b"[DONE]" not in data
    assert b"finish_reason\":\"" not in data
    assert llm_rx.reassemble(data, "openai-chat").stop_reason == "interrupted"


def test_encode_provider_error_writes_the_targets_error_frame_then_passes_it_on() -> None:
    data = capture("anthropic/error-overloaded-midstream.synthetic.sse").data
    values = _run(llm_rx.from_bytes(data, "anthropic").pipe(lxo.encode("openai-chat")))
    assert isinstance(values[-1], ProviderError)
    again = llm_rx.reassemble(b"".join(values[:-1]), "openai-chat")
    assert (again.stop_reason, again.error and again.error.kind) == ("error", "provider")


def test_encode_completed_events_without_the_end_are_a_cut() -> None:
    events = [event for event in _events(THINKING.data, "anthropic")
              if type(event).__name__ != "MessageStop"]
    subject: Subject[Event] = Subject()
    seen = _run(subject.pipe(lxo.encode("anthropic")))
    for event in events:
        subject.on_next(event)
    subject.on_completed()
    assert isinstance(seen[-1], IncompleteStreamError)
    assert b"message_stop" not in b"".join(v for v in seen if isinstance(v, bytes))


def test_encode_keeps_its_state_per_subscription() -> None:
    encoded = llm_rx.from_bytes(THINKING.data, "anthropic").pipe(lxo.encode("gemini"))
    assert _run(encoded) == _run(encoded)


def test_encode_unknown_target_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="no stream encoder"):
        lxo.encode("nope")
