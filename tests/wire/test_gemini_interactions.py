"""The gemini-interactions decoder: the recorded streams, and each trap the first
implementations of the Interactions wire met (PITFALLS-style, one test each)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

import llm_rx
from llm_rx.errors import (
    CancelledStreamError,
    IncompleteStreamError,
    ProtocolError,
    ProviderError,
    WireFormatError,
)
from llm_rx.response import OpaqueBlock, Response, TextBlock, ThinkingBlock, ToolCallBlock
from llm_rx.wire.registry import sniff

from ..captures import CAPTURES, Capture, capture
from ..helpers import decode_events, kinds, split_at

INTERACTIONS = [cap for cap in CAPTURES if cap.provider == "gemini-interactions"]
SIG = "CiQBDDnWxzCnKBoG0/vIUQ9fHy3JYGvjTmIZFY4uKrzvEqSA+/="


def sse(*frames: dict[str, Any], done: bool = True) -> bytes:
    """Frames as the wire sends them: ``event: <event_type>`` and the payload."""
    body = b"".join(
        b"event: %s\ndata: %s\n\n" % (frame["event_type"].encode(), orjson.dumps(frame))
        for frame in frames
    )
    return body + (b"event: done\ndata: [DONE]\n\n" if done else b"")


def created(id_: str = "v1_abc", model: str = "gemini-3-flash") -> dict[str, Any]:
    return {"interaction": {"id": id_, "status": "in_progress", "object": "interaction",
                            "model": model}, "event_type": "interaction.created"}


def start(index: int, step: dict[str, Any]) -> dict[str, Any]:
    return {"index": index, "step": step, "event_type": "step.start"}


def delta(index: int, value: dict[str, Any]) -> dict[str, Any]:
    return {"index": index, "delta": value, "event_type": "step.delta"}


def stop(index: int) -> dict[str, Any]:
    return {"index": index, "event_type": "step.stop"}


def completed(status: str = "completed", **usage: int) -> dict[str, Any]:
    interaction: dict[str, Any] = {"id": "v1_abc", "status": status}
    if usage:
        interaction["usage"] = usage
    return {"interaction": interaction, "event_type": "interaction.completed"}


def call_stream(*deltas: dict[str, Any]) -> bytes:
    return sse(
        created(),
        start(0, {"id": "c1", "type": "function_call", "name": "get_weather", "arguments": {}}),
        *[delta(0, {"type": "arguments_delta", **value}) for value in deltas],
        stop(0),
        completed("requires_action"),
    )


# -- the recorded streams ----------------------------------------------------------------


def test_gemini_interactions_captures_exist() -> None:
    assert len(INTERACTIONS) >= 7


@pytest.mark.parametrize("cap", INTERACTIONS, ids=lambda cap: cap.name)
def test_gemini_interactions_capture_sniffed_without_options(cap: Capture) -> None:
    assert sniff(cap.data) == "gemini-interactions"
    named = llm_rx.reassemble(cap.data, provider="gemini-interactions")
    assert llm_rx.reassemble(cap.data) == named
    assert named.complete
    assert named.error is None


@pytest.mark.parametrize("cap", INTERACTIONS, ids=lambda cap: cap.name)
def test_gemini_interactions_capture_same_events_split_anywhere(cap: Capture) -> None:
    whole = decode_events([cap.data], "gemini-interactions")
    for step in (1, 7, 64):
        cuts = range(step, len(cap.data), step)
        split = decode_events(split_at(cap.data, cuts), "gemini-interactions")
        assert kinds(split[0]) == kinds(whole[0])
        assert split[1] is None


def test_gemini_interactions_completed_carries_no_steps_reply_built_from_steps() -> None:
    cap = capture("gemini-interactions/basic-thought-signature.sse")
    last = [line for line in cap.data.splitlines() if b"interaction.completed" in line][-1]
    assert b'"steps"' not in last  # (the trap: the terminal event has usage, no steps)
    reply = llm_rx.reassemble(cap.data)
    thinking, text = reply.content
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.text == ""
    assert thinking.signature is not None
    assert thinking.signature.startswith("CiQBDDnWxzCn")
    assert isinstance(text, TextBlock)
    assert text.text.startswith("I'm doing great")
    assert reply.usage.input_tokens == 7
    assert reply.usage.output_tokens == 26 + 115  # (output counts the thoughts, as gemini)
    assert reply.usage.reasoning_tokens == 115
    assert reply.usage.cache_read_tokens == 0
    assert reply.model == "gemini-2.5-flash"
    assert reply.id is not None
    assert reply.extra["service_tier"] == "standard"


def test_gemini_interactions_requires_action_is_a_tool_use_end() -> None:
    reply = llm_rx.reassemble(capture("gemini-interactions/function-call-requires-action.sse").data)
    assert reply.complete
    assert reply.error is None
    assert reply.stop_reason == "tool_use"
    assert reply.native_stop_reason == "requires_action"
    call = reply.content[1]
    assert isinstance(call, ToolCallBlock)
    assert (call.id, call.name, call.arguments) == ("61nzpsv4", "getWeather",
                                                    {"location": "San Francisco"})
    assert call.raw_arguments == '{"location":"San Francisco"}'


def test_gemini_interactions_built_in_tool_steps_after_text_are_opaque_blocks() -> None:
    reply = llm_rx.reassemble(capture("gemini-interactions/google-search-annotations.sse").data)
    assert [block.type for block in reply.content] == ["thinking", "text", "opaque", "opaque"]
    text, search, result = reply.content[1:]
    assert isinstance(text, TextBlock)
    assert len(text.citations) == 14
    assert text.citations[0]["type"] == "url_citation"
    assert text.citations[0]["start_index"] == 346
    assert isinstance(search, OpaqueBlock)
    assert search.kind == "google_search_call"
    assert search.raw["arguments"]["queries"][0].startswith("notable AI developments")
    assert search.raw["id"] == "7xveqyd2"
    assert isinstance(result, OpaqueBlock)
    assert result.kind == "google_search_result"
    assert result.raw["call_id"] == "7xveqyd2"
    assert len(result.raw["result"]) >= 1
    assert reply.stop_reason == "end_turn"  # (a built-in tool is no call the client runs)
    usage = result and reply.usage.native
    assert usage is not None
    assert reply.usage.input_tokens == (
        usage["total_input_tokens"] + usage["total_tool_use_tokens"])


def test_gemini_interactions_store_false_empty_ids_are_no_id() -> None:
    reply = llm_rx.reassemble(capture("gemini-interactions/store-false-empty-ids.sse").data)
    assert reply.id is None
    assert reply.model == "gemini-2.5-flash"
    assert reply.complete


def test_gemini_interactions_legacy_schema_decodes_like_the_current_one() -> None:
    old = llm_rx.reassemble(capture("gemini-interactions/legacy-content-events.sse").data)
    assert [block.type for block in old.content] == ["thinking", "text"]
    assert old.content[0].signature
    assert old.complete
    assert old.stop_reason == "end_turn"
    assert old.content[1].text.startswith("Hello! I'm doing well")
    call = llm_rx.reassemble(capture("gemini-interactions/legacy-function-call-object.sse").data)
    block = call.content[1]
    assert isinstance(block, ToolCallBlock)
    assert block.name == "getWeather"
    assert block.id == "odkxni2w"
    assert block.arguments == {"location": "San Francisco"}
    assert call.stop_reason == "tool_use"


# -- traps, hand-made --------------------------------------------------------------------


@pytest.mark.parametrize("deltas", [
    [{"arguments": '{"city":'}, {"arguments": '"Paris"}'}],  # the wire: a string
    [{"partial_arguments": '{"city":'}, {"partial_arguments": '"Paris"}'}],  # the SDK's name
    [{"arguments": {"city": "Paris"}}],  # an object
], ids=["string", "partial_arguments", "object"])
def test_gemini_interactions_arguments_delta_in_every_spelling(deltas: list[dict[str, Any]]
                                                                ) -> None:
    reply = llm_rx.reassemble(call_stream(*deltas))
    call = reply.content[0]
    assert isinstance(call, ToolCallBlock)
    assert call.arguments == {"city": "Paris"}
    assert call.raw_arguments == '{"city":"Paris"}'
    assert reply.stop_reason == "tool_use"
    assert reply.complete


def test_gemini_interactions_call_with_no_argument_deltas_is_empty_object() -> None:
    reply = llm_rx.reassemble(call_stream())
    call = reply.content[0]
    assert isinstance(call, ToolCallBlock)
    assert call.arguments == {}
    assert call.raw_arguments == ""


def test_gemini_interactions_cut_inside_arguments_is_never_a_finished_call() -> None:
    body = call_stream({"arguments": '{"city":'}, {"arguments": '"Paris"}'})
    cut = body.index(b'"Paris')
    reply = llm_rx.reassemble(body[:cut])
    assert not reply.complete
    assert reply.stop_reason == "interrupted"


def test_gemini_interactions_thought_summary_and_signature_on_one_block() -> None:
    body = sse(
        created(),
        start(0, {"type": "thought"}),
        delta(0, {"type": "thought_summary", "content": {"type": "text", "text": "**Plan**"}}),
        delta(0, {"type": "thought_summary", "content": {"type": "text", "text": " more"}}),
        delta(0, {"type": "thought_signature", "signature": SIG}),
        stop(0),
        start(1, {"type": "model_output"}),
        delta(1, {"type": "text", "text": "Hi"}),
        stop(1),
        start(2, {"type": "thought"}),
        delta(2, {"type": "thought_signature", "signature": SIG + "2"}),
        stop(2),
        completed(total_input_tokens=3, total_output_tokens=1, total_thought_tokens=9),
    )
    reply = llm_rx.reassemble(body)
    first, text, second = reply.content
    assert isinstance(first, ThinkingBlock)
    assert first.text == "**Plan** more"
    assert first.signature == SIG
    assert second.signature == SIG + "2"
    assert isinstance(text, TextBlock)
    assert text.text == "Hi"
    assert (reply.usage.output_tokens, reply.usage.reasoning_tokens) == (10, 9)


def test_gemini_interactions_cut_before_completed_is_never_complete() -> None:
    body = capture("gemini-interactions/basic-thought-signature.sse").data
    end = body.index(b"event: interaction.completed")
    for at in range(0, end, max(1, end // 40)):
        reply = llm_rx.reassemble(body[:at], provider="gemini-interactions")
        assert not reply.complete
        assert reply.stop_reason == "interrupted"


def test_gemini_interactions_done_before_completed_is_a_truncation() -> None:
    body = sse(created(), start(0, {"type": "model_output"}), delta(0, {"type": "text",
                                                                         "text": "Hal"}))
    _events, error = decode_events([body], "gemini-interactions")
    assert isinstance(error, IncompleteStreamError)
    assert error.raw == "[DONE]"
    reply = llm_rx.reassemble(body)
    assert reply.content[0].text == "Hal"
    assert not reply.complete


def test_gemini_interactions_error_event_is_the_providers_error() -> None:
    frame = {"error": {"message": "Deadline expired before operation could complete.",
                       "code": "gateway_timeout"}, "event_type": "error"}
    body = sse(created(), start(0, {"type": "model_output"}),
               delta(0, {"type": "text", "text": "Par"}), frame, done=False)
    _events, error = decode_events([body], "gemini-interactions")
    assert isinstance(error, ProviderError)
    assert "Deadline expired" in error.message
    reply = llm_rx.reassemble(body)
    assert reply.stop_reason == "error"
    assert reply.error is not None
    assert reply.error.kind == "provider"
    assert reply.content[0].text == "Par"


@pytest.mark.parametrize(("status", "error_type"), [
    ("failed", ProviderError), ("cancelled", CancelledStreamError)])
def test_gemini_interactions_failed_and_cancelled_are_not_success(status: str,
                                                                  error_type: type) -> None:
    body = sse(created(), start(0, {"type": "model_output"}),
               delta(0, {"type": "text", "text": "Par"}), stop(0), completed(status))
    _events, error = decode_events([body], "gemini-interactions")
    assert isinstance(error, error_type)
    assert not llm_rx.reassemble(body).complete


def test_gemini_interactions_resumed_tail_is_not_the_whole_reply() -> None:
    body = sse(delta(1, {"type": "text", "text": "tail"}), stop(1), completed())
    _events, error = decode_events([body], "gemini-interactions")
    assert isinstance(error, ProtocolError)
    reply = llm_rx.reassemble(body, provider="gemini-interactions")
    assert reply.content[0].text == "tail"
    assert reply.id == "v1_abc"
    assert not reply.complete


def test_gemini_interactions_unknown_schema_names_the_schema() -> None:
    body = b'event: turn.begin\ndata: {"event_type":"turn.begin","index":0}\n\n'
    _events, error = decode_events([body], "gemini-interactions")
    assert isinstance(error, WireFormatError)
    assert "event_type" in error.message
    assert "interaction.created" in error.message
    assert "content.start" in error.message  # (the early-2026 names are named too)


def test_gemini_interactions_unknown_event_after_start_is_kept_opaque() -> None:
    later = {"event_type": "interaction.heartbeat", "n": 1}
    body = sse(created(), later, start(0, {"type": "model_output"}),
               delta(0, {"type": "text", "text": "ok"}), stop(0), completed())
    events, error = decode_events([body], "gemini-interactions")
    assert error is None
    assert any(type(event).__name__ == "Opaque" and event.raw == later for event in events)


def test_gemini_interactions_image_delta_is_an_opaque_block() -> None:
    image = {"type": "image", "mime_type": "image/png", "data": "iVBORw0KGgo="}
    body = sse(created(), start(0, {"type": "model_output"}),
               delta(0, {"type": "text", "text": "Here:"}), delta(0, image), stop(0),
               completed())
    reply = llm_rx.reassemble(body)
    assert [block.type for block in reply.content] == ["text", "opaque"]
    assert reply.content[1].raw == image


def test_gemini_interactions_payloads_are_data() -> None:
    body = call_stream({"arguments": '{"q": "<script>\\u001b]0;x\\u0007"}'})
    call = llm_rx.reassemble(body).content[0]
    assert isinstance(call, ToolCallBlock)
    assert call.arguments == {"q": "<script>\x1b]0;x\x07"}


# -- the non-stream body -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["basic-thought-signature", "function-call-requires-action",
                                  "google-search-annotations"])
def test_gemini_interactions_recorded_body_round_trips(name: str) -> None:
    raw = (capture(f"gemini-interactions/{name}.sse").path.parent
           / f"{name}.nonstream.json").read_bytes()
    reply = llm_rx.from_native(raw)
    assert reply.provider == "gemini-interactions"
    assert reply.complete
    assert llm_rx.to_native(reply, "gemini-interactions") == json.loads(raw)
    assert llm_rx.from_native(llm_rx.to_native(reply, "gemini-interactions")) == reply


def test_gemini_interactions_stream_and_body_have_the_same_shape() -> None:
    stream = llm_rx.reassemble(capture("gemini-interactions/function-call-requires-action.sse")
                               .data)
    native = llm_rx.to_native(stream, "gemini-interactions")
    assert native["status"] == "requires_action"
    assert native["object"] == "interaction"
    assert [step["type"] for step in native["steps"]] == ["thought", "function_call"]
    assert native["steps"][1]["arguments"] == {"location": "San Francisco"}
    assert llm_rx.from_native(native) == stream


def test_gemini_interactions_body_still_running_is_not_complete() -> None:
    body = {"id": "v1_x", "status": "in_progress", "object": "interaction",
            "steps": [{"type": "model_output", "content": [{"type": "text", "text": "So"}]}]}
    reply = llm_rx.from_native(body)
    assert not reply.complete
    assert reply.content[0].text == "So"
    assert reply.error is not None
    assert "in_progress" in reply.error.message


def test_gemini_interactions_another_providers_reply_as_a_body() -> None:
    reply = llm_rx.testing.reply(text="Hi", thinking="hmm", tool_calls=[("f", {"a": 1})],
                                 usage={"input_tokens": 5, "output_tokens": 7},
                                 stop="tool_use")
    body = llm_rx.to_native(reply, "gemini-interactions")
    assert body["status"] == "requires_action"
    assert [step["type"] for step in body["steps"]] == ["thought", "model_output",
                                                        "function_call"]
    back = llm_rx.from_native(body, "gemini-interactions")
    assert isinstance(back, Response)
    assert back.text == "Hi"
    assert back.stop_reason == "tool_use"


def test_gemini_interactions_signature_before_any_text_is_kept_on_its_step() -> None:
    body = sse(created(), start(0, {"type": "model_output"}),
               delta(0, {"type": "thought_signature", "signature": SIG}),
               delta(0, {"type": "text", "text": "Hi"}), stop(0), completed())
    (block,) = llm_rx.reassemble(body).content
    assert isinstance(block, TextBlock)
    assert (block.text, block.signature) == ("Hi", SIG)


def test_gemini_interactions_one_start_per_reply() -> None:
    events, error = decode_events([capture("gemini-interactions/basic-thought-signature.sse")
                                   .data], "gemini-interactions")
    assert error is None
    assert [type(event).__name__ for event in events].count("MessageStart") == 1


def test_gemini_interactions_image_thought_summary_is_kept() -> None:
    image = {"type": "image", "mime_type": "image/png", "data": "iVBORw0KGgo="}
    body = sse(created(), start(0, {"type": "thought"}),
               delta(0, {"type": "thought_summary", "content": image}),
               delta(0, {"type": "thought_signature", "signature": SIG}), stop(0),
               completed())
    events, error = decode_events([body], "gemini-interactions")
    assert error is None
    assert any(type(event).__name__ == "Opaque" and event.raw == image for event in events)
    assert llm_rx.reassemble(body).content[0].signature == SIG


def test_gemini_interactions_body_of_a_reply_that_did_not_finish() -> None:
    data = capture("gemini-interactions/basic-thought-signature.sse").data
    cut = llm_rx.reassemble(data[: data.index(b"event: step.stop")], "gemini-interactions")
    assert llm_rx.to_native(cut, "gemini-interactions")["status"] == "in_progress"
    frame = {"error": {"message": "Deadline expired", "code": "gateway_timeout"},
             "event_type": "error"}
    failed = llm_rx.reassemble(sse(created(), frame, done=False))
    assert llm_rx.to_native(failed, "gemini-interactions")["status"] == "failed"
    other = llm_rx.reassemble(capture("anthropic/adaptive-thinking-opus46.sse").data[:400],
                              "anthropic")
    assert llm_rx.to_native(other, "gemini-interactions")["status"] == "in_progress"
