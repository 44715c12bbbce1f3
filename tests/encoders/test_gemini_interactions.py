"""The gemini-interactions target: what ``translate`` / ``encode`` write, read back by llm-rx
and by google-genai's own event types (the round-trip contract covers every capture)."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from pydantic import TypeAdapter
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.testing import reply

from ..captures import capture
from .oracles import ORACLES, sse_payloads

interactions = pytest.importorskip("google.genai.interactions")


def payloads(body: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(data) for _, data in sse_payloads(body) if data != "[DONE]"]


def test_encode_operator_writes_the_interactions_stream() -> None:
    events = llm_rx.from_file(capture("anthropic/adaptive-thinking-opus46.sse").path)
    body = b"".join(events.pipe(lxo.encode("gemini-interactions"), ops.to_list()).run())
    again = llm_rx.reassemble(body, provider="gemini-interactions")
    original = llm_rx.reassemble(capture("anthropic/adaptive-thinking-opus46.sse").data)
    assert again.text == original.text
    assert again.complete
    assert ORACLES["gemini-interactions"](body).text == original.text


def test_encoded_events_are_numbered_and_end_with_done() -> None:
    body = llm_rx.translate(capture("openai/chat-parallel-tool-calls.sse").data,
                            to="gemini-interactions")
    frames = payloads(body)
    assert [frame["event_id"] for frame in frames] == [str(n) for n in
                                                        range(1, len(frames) + 1)]
    assert frames[0]["event_type"] == "interaction.created"
    assert frames[-1]["event_type"] == "interaction.completed"
    assert frames[-1]["interaction"]["status"] == "requires_action"
    assert body.endswith(b"event: done\ndata: [DONE]\n\n")
    adapter = TypeAdapter(interactions.InteractionSSEEvent)  # (each frame a type it knows)
    for frame in frames:
        assert not getattr(adapter.validate_python(frame), "is_unknown", False)


def test_completed_event_is_the_body_without_its_steps() -> None:
    data = capture("gemini-interactions/function-call-requires-action.sse").data
    last = payloads(llm_rx.translate(data, to="gemini-interactions"))[-1]["interaction"]
    body = llm_rx.to_native(llm_rx.reassemble(data), "gemini-interactions")
    assert {key: value for key, value in body.items() if key != "steps"} == last


def test_provider_error_writes_usage_then_the_error_event() -> None:
    data = capture("openrouter/error-chunk-finish-length.sse").data
    frames = payloads(llm_rx.translate(data, to="gemini-interactions"))
    assert [frame["event_type"] for frame in frames[-2:]] == [
        "interaction.status_update", "error"]
    assert frames[-1]["error"]["message"] == "Token limit reached"
    again = llm_rx.reassemble(llm_rx.translate(data, to="gemini-interactions"),
                              provider="gemini-interactions")
    assert again.stop_reason == "error"
    assert (again.usage.input_tokens, again.usage.output_tokens) == (43, 10)


def test_a_cut_source_gets_no_terminal_event() -> None:
    data = capture("gemini-interactions/basic-thought-signature.sse").data
    cut = data[: data.index(b"event: step.stop")]
    body = llm_rx.translate(cut, to="gemini-interactions", provider="gemini-interactions")
    assert b"interaction.completed" not in body
    assert b"[DONE]" not in body
    assert not llm_rx.reassemble(body, provider="gemini-interactions").complete


def test_tool_use_whose_calls_were_dropped_is_completed() -> None:
    data = capture("openai/responses-apply-patch.sse").data
    frames = payloads(llm_rx.translate(data, to="gemini-interactions"))
    assert frames[-1]["interaction"]["status"] == "completed"


def test_scripted_reply_as_an_interaction_stream() -> None:
    scripted = reply(text="Hi", thinking="hmm", tool_calls=[("f", {"a": 1})],
                     usage={"input_tokens": 5, "output_tokens": 7}, stop="tool_use")
    body = llm_rx.to_native(scripted, "gemini-interactions")
    steps = [step["type"] for step in body["steps"]]
    assert steps == ["thought", "model_output", "function_call"]
    assert body["status"] == "requires_action"
    assert body["usage"] == {"total_input_tokens": 5, "total_output_tokens": 7,
                             "total_tokens": 12}
    assert interactions.Interaction.model_validate(body).status == "requires_action"


def test_to_message_gives_the_steps_back_with_their_signatures() -> None:
    data = capture("gemini-interactions/function-call-requires-action.sse").data
    response = llm_rx.reassemble(data)
    steps = llm_rx.to_message(response, "gemini-interactions")
    assert [step["type"] for step in steps] == ["thought", "function_call"]
    assert steps[0]["signature"] == response.content[0].signature
    assert steps[1]["arguments"] == {"location": "San Francisco"}
    request = interactions.CreateModelInteraction.model_validate(
        {"model": "gemini-3-flash", "input": [*steps, {
            "type": "function_result", "call_id": steps[1]["id"], "name": "getWeather",
            "result": "sunny"}]})
    assert isinstance(request.input, list)


def test_to_message_leaves_another_providers_reasoning_out() -> None:
    response = llm_rx.reassemble(capture("anthropic/adaptive-thinking-opus46.sse").data)
    dropped: list[llm_rx.MessageDrop] = []
    steps = llm_rx.to_message(response, "gemini-interactions", dropped=dropped)
    assert "thought" not in [step["type"] for step in steps]
    assert {drop.what for drop in dropped} == {"thinking"}


@pytest.mark.parametrize("name", ["basic-thought-signature", "function-call-requires-action",
                                  "function-result-answer", "store-false-empty-ids"])
def test_same_provider_translation_is_the_recording_but_for_event_ids(name: str) -> None:
    """A recording of steps the encoder writes as the wire did (text, thoughts, calls) comes
    back byte for byte, with an ``event_id`` on each event (built-in tool steps are written
    whole at their start, and the early-2026 names as the current ones)."""
    data = capture(f"gemini-interactions/{name}.sse").data
    out = llm_rx.translate(data, to="gemini-interactions")
    assert re.sub(rb',"event_id":"\d+"', b"", out) == data
