"""The google-genai SDK as the oracle of the Interactions wire: its event types read every
recorded event, and what its typed events add up to is what llm-rx's ``Response`` holds."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import llm_rx

from ..captures import CAPTURES, Capture

interactions = pytest.importorskip("google.genai.interactions")
pydantic = pytest.importorskip("pydantic")

CURRENT = [cap for cap in CAPTURES if cap.provider == "gemini-interactions"
           and "legacy_schema" not in cap.features]
EVENT = pydantic.TypeAdapter(interactions.InteractionSSEEvent)


def payloads(data: bytes) -> list[dict[str, Any]]:
    """The stream's JSON payloads, read with no llm-rx code."""
    lines = [line[5:].strip() for line in data.splitlines() if line.startswith(b"data:")]
    return [orjson.loads(line) for line in lines if line != b"[DONE]"]


def known(event: Any) -> bool:
    """Whether the SDK read the event (and its step or delta) as a type it knows."""
    parts = [event, getattr(event, "step", None), getattr(event, "delta", None)]
    return not any(getattr(part, "is_unknown", False) for part in parts)


def accumulate(events: list[Any]) -> dict[str, Any]:
    """What a client of the SDK gathers from its typed events: the text, the thoughts, the
    signatures, the calls and the usage (the SDK has no accumulator of its own)."""
    out: dict[str, Any] = {"text": "", "thoughts": "", "signatures": [], "calls": [],
                           "usage": None, "status": None}
    for event in events:
        if event.event_type == "step.start" and event.step.type == "function_call":
            out["calls"].append([event.step.id, event.step.name, ""])
        elif event.event_type == "step.delta":
            delta = event.delta
            if delta.type == "text":
                out["text"] += delta.text
            elif delta.type == "thought_summary":
                out["thoughts"] += delta.content.text
            elif delta.type == "thought_signature":
                out["signatures"].append(delta.signature)
            elif delta.type == "arguments_delta":
                out["calls"][-1][2] += delta.arguments
        elif event.event_type == "interaction.completed":
            out["usage"] = event.interaction.usage
            out["status"] = event.interaction.status
    return out


def test_genai_captures_of_the_current_schema_exist() -> None:
    assert len(CURRENT) >= 5


def sdk_events(data: bytes) -> list[Any]:
    """The SDK's typed events of a stream, less the built-in tool step starts it refuses."""
    out = []
    for payload in payloads(data):
        try:
            out.append(EVENT.validate_python(payload))
        except pydantic.ValidationError:
            assert refused_by_the_sdk(payload), payload
    return out


def refused_by_the_sdk(payload: dict[str, Any]) -> bool:
    """A real ``step.start`` of a built-in tool step whose fields come in its delta (the
    recorded Google Search call starts with no ``arguments``): google-genai 3.6 requires them
    at the start and refuses the frame, which llm-rx reads (the step is its opaque block)."""
    step = payload.get("step") or {}
    return payload.get("event_type") == "step.start" and step.get("type") in (
        "google_search_call", "google_search_result")


@pytest.mark.parametrize("cap", CURRENT, ids=lambda cap: cap.name)
def test_genai_reads_every_recorded_event_as_a_known_type(cap: Capture) -> None:
    for event in sdk_events(cap.data):
        assert known(event), event


def test_genai_refuses_a_recorded_google_search_step_start() -> None:
    data = next(cap for cap in CURRENT if "google_search_call" in cap.features).data
    refused = [payload for payload in payloads(data) if refused_by_the_sdk(payload)]
    assert refused
    with pytest.raises(pydantic.ValidationError):
        EVENT.validate_python(refused[0])


@pytest.mark.parametrize("cap", CURRENT, ids=lambda cap: cap.name)
def test_genai_accumulation_agrees_with_the_response(cap: Capture) -> None:
    sdk = accumulate(sdk_events(cap.data))
    reply = llm_rx.reassemble(cap.data)
    assert reply.text == sdk["text"]
    assert "".join(b.text for b in reply.content if b.type == "thinking") == sdk["thoughts"]
    assert [b.signature for b in reply.content if b.type == "thinking"] == sdk["signatures"]
    calls = [[b.id, b.name, b.raw_arguments] for b in reply.content if b.type == "tool_call"]
    assert calls == sdk["calls"]
    usage = sdk["usage"]
    assert reply.usage.reasoning_tokens == usage.total_thought_tokens
    assert reply.usage.output_tokens == usage.total_output_tokens + usage.total_thought_tokens
    assert reply.usage.input_tokens == usage.total_input_tokens + usage.total_tool_use_tokens
    assert reply.native_stop_reason == sdk["status"]


@pytest.mark.parametrize("cap", [cap for cap in CURRENT if cap.nonstream is not None],
                         ids=lambda cap: cap.name)
def test_genai_reads_the_body_llm_rx_writes(cap: Capture) -> None:
    assert cap.nonstream is not None
    body = llm_rx.to_native(llm_rx.reassemble(cap.data), "gemini-interactions")
    interaction = interactions.Interaction.model_validate(body)
    assert all(not getattr(step, "is_unknown", False) for step in interaction.steps or ())
    recorded = interactions.Interaction.model_validate(orjson.loads(cap.nonstream.read_bytes()))
    assert [step.type for step in interaction.steps] == [s.type for s in recorded.steps]
