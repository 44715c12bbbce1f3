"""The openai-responses decoder: captures and hand-made streams, PITFALLS 6, 17 and 23."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.responses import Response as SDKResponse

import llm_rx
from llm_rx.errors import ProtocolError, ProviderError
from llm_rx.events import (
    BlockStart,
    LogprobsDelta,
    MessageStart,
    Opaque,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from llm_rx.response import OpaqueBlock, RefusalBlock, TextBlock, ThinkingBlock
from llm_rx.wire.registry import sniff

from ..captures import CAPTURES, Capture, capture, responses_terminal
from ..helpers import decode_events
from ..streams import sse
from ..test_contract_sdk import frames

RESPONSES = [cap for cap in CAPTURES if cap.provider == "openai-responses"]
USAGE = {
    "input_tokens": 20, "input_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 0},
    "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 50,
}


# -- hand-made streams -------------------------------------------------------------------------


def stream(*frames: dict[str, Any]) -> bytes:
    """Responses SSE: each frame sent with its ``event:`` name, as OpenAI does."""
    return b"".join(sse(frame, event=frame["type"]) for frame in frames)


def snapshot(kind: str, status: str = "in_progress", usage: Any = None,
             **fields: Any) -> dict[str, Any]:
    response = {"id": "resp_1", "object": "response", "created_at": 1, "status": status,
                "model": "gpt-test", "output": [], "parallel_tool_calls": True,
                "tool_choice": "auto", "tools": [], "usage": usage, **fields}
    return {"type": kind, "response": response}


CREATED = snapshot("response.created")
COMPLETED = snapshot("response.completed", "completed", USAGE)


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def message(text: str = "", item_id: str = "msg_1", status: str = "in_progress",
            ) -> dict[str, Any]:
    content = [{"type": "output_text", "annotations": [], "text": text}] if text else []
    return {"id": item_id, "type": "message", "status": status, "role": "assistant",
            "content": content}


def part_added(index: int, item_id: str = "msg_1", part: str = "output_text") -> dict[str, Any]:
    body = {"type": part, "annotations": [], "text": ""} if part == "output_text" else {
        "type": part, "refusal": ""}
    return {"type": "response.content_part.added", "output_index": index, "item_id": item_id,
            "content_index": 0, "part": body}


def text_delta(index: int, delta: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {"type": "response.output_text.delta", "output_index": index, "item_id": item_id,
            "content_index": 0, "delta": delta}


def call(item_id: str = "fc_1", call_id: str = "call_1", name: str = "get_weather",
         arguments: str = "", status: str = "in_progress") -> dict[str, Any]:
    return {"id": item_id, "type": "function_call", "status": status, "arguments": arguments,
            "call_id": call_id, "name": name}


def args_delta(index: int, delta: str, item_id: str = "fc_1") -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "output_index": index,
            "item_id": item_id, "delta": delta}


def hello(*tail: dict[str, Any]) -> bytes:
    """A message "Hello" streamed in two deltas, then ``tail``."""
    return stream(
        CREATED, added(0, message()), part_added(0), text_delta(0, "Hel"), text_delta(0, "lo"),
        *tail,
    )


def reassemble(body: bytes) -> llm_rx.Response:
    return llm_rx.reassemble(body, "openai-responses")


def wire(name: str, kind: str) -> list[dict[str, Any]]:
    return [frame.data for frame in frames(name) if frame.data.get("type") == kind]


def done_items(name: str) -> list[dict[str, Any]]:
    return [frame["item"] for frame in wire(name, "response.output_item.done")]


# -- the pitfalls ------------------------------------------------------------------------------


def test_pitfall_06_usage_from_the_terminal_response_not_from_in_progress() -> None:
    zeros = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    body = hello(snapshot("response.in_progress", usage=zeros), COMPLETED)
    usage = reassemble(body).usage
    assert (usage.input_tokens, usage.output_tokens) == (20, 30)  # totals, cached included
    assert (usage.cache_read_tokens, usage.reasoning_tokens) == (8, 12)
    cut = reassemble(hello(snapshot("response.in_progress", usage=zeros)))
    assert not cut.complete
    assert cut.usage.input_tokens is None  # the in_progress zeros are not the reply's usage
    assert cut.usage.output_tokens is None


@pytest.mark.parametrize("cap", RESPONSES, ids=lambda c: c.name)
def test_pitfall_06_usage_of_every_capture_is_the_completed_response_s(cap: Capture) -> None:
    # (the terminal response's: response.completed, or response.incomplete / response.failed)
    terminal = responses_terminal(cap.name)
    assert terminal is not None
    usage = wire(cap.name, terminal)[-1]["response"]["usage"]
    got = reassemble(cap.data).usage
    if usage is None:  # (a failed reply that counted nothing)
        assert not got.reported
        return
    assert got.input_tokens == usage["input_tokens"]
    assert got.output_tokens == usage["output_tokens"]
    assert got.input_tokens + got.output_tokens == usage["total_tokens"]
    assert got.cache_read_tokens == usage["input_tokens_details"]["cached_tokens"]
    assert got.cache_write_tokens == usage["input_tokens_details"].get("cache_write_tokens")
    assert got.reasoning_tokens == usage["output_tokens_details"]["reasoning_tokens"]
    assert got.native == usage


def test_pitfall_17_encrypted_content_taken_from_output_item_done_only() -> None:
    name = "openai/responses-web-search.sse"
    first_added = wire(name, "response.output_item.added")[0]["item"]
    first_done = done_items(name)[0]
    final = wire(name, "response.completed")[0]["response"]["output"][0]
    # The capture shows the bug: three encryptions of one reasoning item.
    assert len({first_added["encrypted_content"], first_done["encrypted_content"],
                final["encrypted_content"]}) == 3
    reasoning = [b for b in reassemble(capture(name).data).content if isinstance(b, ThinkingBlock)]
    expected = [item["encrypted_content"] for item in done_items(name)
                if item["type"] == "reasoning"]
    assert [block.signature for block in reasoning] == expected
    native = llm_rx.to_native(reassemble(capture(name).data), "openai-responses")
    assert [item["encrypted_content"] for item in native["output"]
            if item["type"] == "reasoning"] == expected


def test_pitfall_17_hand_made_differing_copies_keep_the_done_one() -> None:
    item = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "ADDED"}
    final = snapshot("response.completed", "completed", USAGE,
                     output=[{**item, "encrypted_content": "COMPLETED"}])
    response = reassemble(stream(CREATED, added(0, item),
                                 done(0, {**item, "encrypted_content": "DONE"}), final))
    assert [(b.type, b.text, b.signature, b.redacted) for b in response.content
            if isinstance(b, ThinkingBlock)] == [("thinking", "", "DONE", True)]


def test_pitfall_23_incomplete_response_keeps_its_content_and_is_max_tokens() -> None:
    incomplete = snapshot("response.incomplete", "incomplete", USAGE,
                          incomplete_details={"reason": "max_output_tokens"})
    response = reassemble(hello(incomplete))
    assert response.text == "Hello"
    assert response.complete  # the provider ended the reply: no crash, no truncation
    assert response.stop_reason == "max_tokens"  # and no success either
    assert response.stop_details == "max_output_tokens"
    assert response.error is None
    assert response.usage.output_tokens == 30
    native = llm_rx.to_native(response, "openai-responses")
    assert native["status"] == "incomplete"
    assert native["incomplete_details"] == {"reason": "max_output_tokens"}
    assert native["output"][-1]["status"] == "incomplete"
    SDKResponse.model_validate(native)


def test_pitfall_23_incomplete_for_content_filter() -> None:
    incomplete = snapshot("response.incomplete", "incomplete", None,
                          incomplete_details={"reason": "content_filter"})
    response = reassemble(hello(incomplete))
    assert (response.complete, response.stop_reason, response.text) == (
        True, "content_filter", "Hello")
    assert response.usage.input_tokens is None  # this one reported none


def test_pitfall_23_failed_response_keeps_its_content_and_is_a_provider_error() -> None:
    failed = snapshot("response.failed", "failed", USAGE,
                      error={"code": "server_error", "message": "The model crashed."})
    body = hello(failed)
    response = reassemble(body)
    assert response.text == "Hello"
    assert not response.complete
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert response.error.message == "server_error: The model crashed."
    assert response.error.raw is not None
    assert "response.failed" in response.error.raw
    assert response.usage.output_tokens == 30  # the failed response's usage is kept
    assert response.extra["status"] == "failed"
    events, error = decode_events([body], "openai-responses")
    assert isinstance(error, ProviderError)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello"


# -- terminal states, errors, truncation -------------------------------------------------------


def test_openai_responses_error_event_midstream_is_a_provider_error() -> None:
    error = {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down.",
             "param": None, "sequence_number": 5}
    response = reassemble(hello(error))
    assert response.text == "Hello"
    assert (response.complete, response.stop_reason) == (False, "error")
    assert response.error is not None
    assert response.error.message == "rate_limit_exceeded: Slow down."


def test_openai_responses_error_before_anything_still_gives_a_response() -> None:
    response = reassemble(sse({"type": "error", "code": None, "message": "Bad key."},
                              event="error"))
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.message == "Bad key."
    assert response.content == []


def test_openai_responses_cut_before_completed_is_interrupted() -> None:
    name = "openai/responses-function-call.sse"
    data = capture(name).data
    response = reassemble(data[: data.index(b"event: response.function_call_arguments.done")])
    assert not response.complete
    assert response.stop_reason == "interrupted"
    assert response.error is not None
    assert response.error.kind == "incomplete"
    [call_block] = response.tool_calls
    assert call_block.arguments is None  # a call cut short is not a finished call (PITFALLS 9)
    assert call_block.raw_arguments == "".join(
        f["delta"] for f in wire(name, "response.function_call_arguments.delta"))


def test_openai_responses_done_sentinel_alone_does_not_finish() -> None:
    response = reassemble(hello() + b"data: [DONE]\n\n")
    assert not response.complete
    assert response.stop_reason == "interrupted"


def test_openai_responses_openrouter_done_after_completed_is_ignored() -> None:
    name = "openrouter/responses-raw-cot.sse"
    assert capture(name).data.rstrip().endswith(b"data: [DONE]")
    response = reassemble(capture(name).data)
    assert response.complete
    assert response.stop_reason == "end_turn"


def test_openai_responses_resumed_stream_without_created_decodes() -> None:
    # A stream resumed with `starting_after` begins mid-item: no response.created, no
    # output_item.added for the item whose deltas arrive. It decodes, but it is a tail, not
    # the whole reply (see test_start_frame.py).
    name = "openai/responses-basic-llm.sse"
    data = capture(name).data
    resumed = data[data.index(b"event: response.output_text.delta"):]
    response = reassemble(resumed)
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "protocol"
    assert response.text == "pong"
    final = wire(name, "response.completed")[0]["response"]
    assert (response.model, response.id) == (final["model"], final["id"])
    assert response.usage.input_tokens == final["usage"]["input_tokens"]
    native = llm_rx.to_native(response, "openai-responses")
    assert native["output"][0]["content"][0]["text"] == "pong"


def test_openai_responses_resumed_after_items_ended_keeps_the_rest() -> None:
    name = "openai/responses-reasoning-summary.sse"
    data = capture(name).data
    resumed = data[data.index(b"event: response.output_item.added\ndata: {\"type\":"
                              b"\"response.output_item.added\",\"sequence_number\":399"):]
    response = reassemble(resumed)
    assert not response.complete  # (a tail: see test_start_frame.py)
    assert [block.type for block in response.content] == ["text"]
    events, _ = decode_events([resumed], "openai-responses")
    starts = [e for e in events if isinstance(e, MessageStart)]
    assert starts[0].model is None  # the first frame had no response in it
    assert starts[-1].model == "o3-mini-2025-01-31"  # the terminal response filled it in


def test_openai_responses_delta_after_its_item_ended_is_a_protocol_error() -> None:
    body = hello(done(0, message("Hello", status="completed")), text_delta(0, "!"))
    _events, error = decode_events([body], "openai-responses")
    assert isinstance(error, ProtocolError)
    response = reassemble(body)
    assert response.text == "Hello"  # what came before is kept
    assert response.error is not None
    assert response.error.kind == "protocol"


def test_openai_responses_output_index_added_twice_is_a_protocol_error() -> None:
    body = stream(CREATED, added(0, message()), added(0, message(item_id="msg_2")))
    _, error = decode_events([body], "openai-responses")
    assert isinstance(error, ProtocolError)


# -- text, refusal, annotations, logprobs --------------------------------------------------


def test_openai_responses_text_basic_capture() -> None:
    name = "openai/responses-basic-llm.sse"
    response = reassemble(capture(name).data)
    assert (response.text, response.stop_reason, response.complete) == ("pong", "end_turn", True)
    created = wire(name, "response.created")[0]["response"]
    assert (response.model, response.id) == (created["model"], created["id"])
    assert response.extra["service_tier"] == "default"  # the completed response's word wins
    assert response.extra["status"] == "completed"


def test_openai_responses_one_event_per_text_delta() -> None:
    name = "openai/responses-reasoning-summary.sse"
    events, error = decode_events([capture(name).data], "openai-responses")
    assert error is None
    text = [e for e in events if isinstance(e, TextDelta)]
    thinking = [e for e in events if isinstance(e, ThinkingDelta)]
    assert len(text) == len(wire(name, "response.output_text.delta"))
    assert len(thinking) == len(wire(name, "response.reasoning_summary_text.delta"))


def test_openai_responses_text_from_done_alone_when_no_delta_came() -> None:
    body = stream(
        CREATED, added(0, message()), part_added(0),
        {"type": "response.output_text.done", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "text": "Whole"},
        {"type": "response.content_part.done", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "part": {"type": "output_text", "annotations": [],
                                      "text": "Whole"}},
        done(0, message("Whole", status="completed")), COMPLETED,
    )
    response = reassemble(body)
    assert [(b.type, b.text) for b in response.content] == [("text", "Whole")]  # once


def test_openai_responses_item_given_whole_at_done_only() -> None:
    body = stream(CREATED, done(0, message("Whole", status="completed")), COMPLETED)
    assert reassemble(body).text == "Whole"


def test_openai_responses_refusal_part_is_a_refusal_block() -> None:
    body = stream(
        CREATED, added(0, message()), part_added(0, part="refusal"),
        {"type": "response.refusal.delta", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "delta": "I can't help"},
        {"type": "response.refusal.delta", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "delta": " with that."},
        {"type": "response.refusal.done", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "refusal": "I can't help with that."},
        COMPLETED,
    )
    response = reassemble(body)
    assert [(type(b), b.text) for b in response.content] == [
        (RefusalBlock, "I can't help with that.")]
    assert response.stop_reason == "refusal"
    native = llm_rx.to_native(response, "openai-responses")
    assert native["output"][0]["content"] == [
        {"type": "refusal", "refusal": "I can't help with that."}]
    SDKResponse.model_validate(native)


@pytest.mark.parametrize(
    "name", ["openai/responses-annotations-raw.sse", "openai/responses-file-search.sse"]
)
def test_openai_responses_annotations_become_citations(name: str) -> None:
    response = reassemble(capture(name).data)
    [text] = [block for block in response.content if isinstance(block, TextBlock)]
    expected = [frame["annotation"] for frame in
                wire(name, "response.output_text.annotation.added")]
    assert expected
    assert text.citations == expected
    final = next(item for item in done_items(name) if item["type"] == "message")
    assert text.citations == final["content"][0]["annotations"]  # not doubled by the .done


def test_openai_responses_annotations_from_part_done_when_no_event_came() -> None:
    citation = {"type": "url_citation", "start_index": 0, "end_index": 5, "title": "T",
                "url": "https://example.com"}
    body = hello(
        {"type": "response.content_part.done", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "part": {"type": "output_text", "annotations": [citation],
                                      "text": "Hello"}},
        COMPLETED,
    )
    [text] = reassemble(body).content
    assert isinstance(text, TextBlock)
    assert (text.text, text.citations) == ("Hello", [citation])


def test_openai_responses_logprobs_from_the_deltas() -> None:
    name = "openai/responses-logprobs.sse"
    response = reassemble(capture(name).data)
    expected = [lp for f in wire(name, "response.output_text.delta") for lp in f["logprobs"]]
    assert response.logprobs is not None
    assert response.logprobs["content"] == expected
    assert "".join(lp["token"] for lp in expected) == response.text
    events, _ = decode_events([capture(name).data], "openai-responses")
    assert all(e.channel == "content" for e in events if isinstance(e, LogprobsDelta))


def test_openai_responses_phase_kept_on_the_message() -> None:
    name = "openai/responses-phase-commentary.sse"
    response = reassemble(capture(name).data)
    assert [b.type for b in response.content] == ["thinking", "text", "tool_call"]
    native = llm_rx.to_native(response, "openai-responses")
    assert native["output"][1]["phase"] == "commentary"


def test_openai_responses_queued_background_reply() -> None:
    name = "openai/responses-background-queued.sse"
    response = reassemble(capture(name).data)
    assert response.complete
    assert response.extra["background"] is True
    statuses = [f.data["response"]["status"] for f in frames(name)[:3]]
    assert statuses == ["queued", "queued", "in_progress"]
    assert response.extra["status"] == "completed"


# -- reasoning ---------------------------------------------------------------------------------


def test_openai_responses_summary_parts_are_blocks_signed_on_the_first() -> None:
    name = "openai/responses-reasoning-summary.sse"
    response = reassemble(capture(name).data)
    thinking = [b for b in response.content if isinstance(b, ThinkingBlock)]
    summaries = [f["text"] for f in wire(name, "response.reasoning_summary_text.done")]
    assert [b.text for b in thinking] == summaries
    [item] = [i for i in done_items(name) if i["type"] == "reasoning"]
    assert [b.signature for b in thinking] == [item["encrypted_content"], None, None, None]
    assert [b.type for b in response.content] == ["thinking"] * 4 + ["text"]
    assert response.stop_reason == "end_turn"


@pytest.mark.parametrize(
    "name",
    ["deepseek/responses-text-reasoning.sse", "deepseek/responses-function-call.sse",
     "openrouter/responses-raw-cot.sse"],
)
def test_openai_responses_reasoning_text_parts_are_thinking(name: str) -> None:
    response = reassemble(capture(name).data)
    [thinking] = [b for b in response.content if isinstance(b, ThinkingBlock)]
    assert thinking.text == wire(name, "response.reasoning_text.done")[0]["text"]
    assert (thinking.signature, thinking.redacted) == (None, False)
    assert response.content[0] is thinking  # first, as in the output


def test_openai_responses_openrouter_interleaved_items_keep_output_order() -> None:
    # The reasoning item stays open while the message streams, and ends after it.
    name = "openrouter/responses-raw-cot.sse"
    events, error = decode_events([capture(name).data], "openai-responses")
    assert error is None
    starts = [e for e in events if isinstance(e, BlockStart)]
    assert [(s.index, s.kind) for s in starts] == [(0, "thinking"), (1, "text")]
    assert [b.type for b in reassemble(capture(name).data).content] == ["thinking", "text"]


def test_openai_responses_encrypted_only_reasoning_is_redacted_thinking() -> None:
    response = reassemble(capture("openai/responses-web-search.sse").data)
    kinds = [(b.type, getattr(b, "redacted", None)) for b in response.content]
    assert kinds == [("thinking", True), ("opaque", None), ("thinking", True), ("text", None)]
    for block in response.content:
        if isinstance(block, ThinkingBlock):
            assert block.text == ""
            assert block.signature


def test_openai_responses_empty_unencrypted_reasoning_is_an_empty_thinking_block() -> None:
    response = reassemble(capture("openai/responses-image-generation-partial.sse").data)
    first = response.content[0]
    assert isinstance(first, ThinkingBlock)
    assert (first.text, first.signature, first.redacted) == ("", None, False)


# -- tool calls --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["openai/responses-function-call.sse", "openai/responses-tool-use-llm.sse",
     "deepseek/responses-function-call.sse", "bedrock/mantle-responses-reused-tool-call-ids.sse",
     "openai/responses-phase-commentary.sse"],
)
def test_openai_responses_function_call_arguments_from_deltas(name: str) -> None:
    response = reassemble(capture(name).data)
    calls = [i for i in done_items(name) if i["type"] == "function_call"]
    assert [(c.id, c.name, c.raw_arguments) for c in response.tool_calls] == [
        (i["call_id"], i["name"], i["arguments"]) for i in calls]
    assert response.stop_reason == "tool_use"


def test_openai_responses_function_call_arguments_from_done_alone() -> None:
    args_done = {"type": "response.function_call_arguments.done", "output_index": 0,
                 "item_id": "fc_1", "arguments": '{"city":"Paris"}'}
    body = stream(CREATED, added(0, call()), args_done,
                  done(0, call(arguments='{"city":"Paris"}', status="completed")), COMPLETED)
    [block] = reassemble(body).tool_calls
    assert (block.raw_arguments, block.arguments) == ('{"city":"Paris"}', {"city": "Paris"})


def test_openai_responses_function_call_arguments_from_item_done_alone() -> None:
    body = stream(CREATED, added(0, call()),
                  done(0, call(arguments='{"n":1}', status="completed")), COMPLETED)
    [block] = reassemble(body).tool_calls
    assert (block.id, block.raw_arguments, block.arguments) == ("call_1", '{"n":1}', {"n": 1})


def test_openai_responses_zero_argument_call_is_an_empty_object() -> None:
    body = stream(CREATED, added(0, call()), done(0, call(status="completed")), COMPLETED)
    response = reassemble(body)
    [block] = response.tool_calls
    assert (block.raw_arguments, block.arguments) == ("", {})
    native = llm_rx.to_native(response, "openai-responses")
    assert native["output"] == [call(status="completed")]  # as the wire had it


def test_openai_responses_parallel_calls_interleaved_stay_apart() -> None:
    body = stream(
        CREATED, added(0, call()), added(1, call("fc_2", "call_2", "get_time")),
        args_delta(0, '{"city":'), args_delta(1, '{"tz":', "fc_2"), args_delta(0, '"Paris"}'),
        args_delta(1, '"UTC"}', "fc_2"), COMPLETED,
    )
    response = reassemble(body)
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"}), ("call_2", "get_time", {"tz": "UTC"})]


def test_openai_responses_custom_tool_input_is_kept_raw() -> None:
    name = "openai/responses-custom-tool.sse"
    response = reassemble(capture(name).data)
    [block] = response.tool_calls
    [item] = done_items(name)
    assert (block.id, block.name, block.raw_arguments) == (
        item["call_id"], item["name"], item["input"])
    assert block.arguments is None  # free-form input, not JSON: never replaced by {}
    assert response.stop_reason == "tool_use"
    native = llm_rx.to_native(response, "openai-responses")
    assert native["output"] == [item]


def test_openai_responses_tool_args_one_event_per_delta() -> None:
    name = "openai/responses-tool-use-llm.sse"
    events, _ = decode_events([capture(name).data], "openai-responses")
    fragments = [e.fragment for e in events if isinstance(e, ToolArgsDelta)]
    assert fragments == [f["delta"] for f in wire(name, "response.function_call_arguments.delta")]


# -- server tools and everything else ----------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["openai/responses-web-search.sse", "openai/responses-annotations-raw.sse",
     "openai/responses-file-search.sse", "openai/responses-code-interpreter-reasoning.sse",
     "openai/responses-image-generation-partial.sse", "openai/responses-apply-patch.sse"],
)
def test_openai_responses_server_tool_items_are_opaque_verbatim(name: str) -> None:
    response = reassemble(capture(name).data)
    opaque = [b for b in response.content if isinstance(b, OpaqueBlock)]
    expected = [i for i in done_items(name) if i["type"] not in
                ("message", "reasoning", "function_call", "custom_tool_call")]
    assert [(b.kind, b.raw) for b in opaque] == [(i["type"], i) for i in expected]
    events, _ = decode_events([capture(name).data], "openai-responses")
    assert not [e for e in events if isinstance(e, Opaque)]  # progress events folded


def test_openai_responses_apply_patch_is_for_the_client_to_run() -> None:
    response = reassemble(capture("openai/responses-apply-patch.sse").data)
    assert response.stop_reason == "tool_use"


def test_openai_responses_server_tool_cut_before_its_done_is_kept_as_it_stood() -> None:
    name = "openai/responses-code-interpreter-reasoning.sse"
    data = capture(name).data
    code = wire(name, "response.code_interpreter_call_code.done")[0]["code"]
    cut = data[: data.index(b"event: response.code_interpreter_call_code.done")]
    response = reassemble(cut)
    assert response.stop_reason == "interrupted"
    [opaque] = [b for b in response.content if isinstance(b, OpaqueBlock)]
    assert opaque.kind == "code_interpreter_call"
    assert opaque.raw["status"] == "in_progress"
    assert opaque.raw["code"] == code  # the streamed code, applied


def test_openai_responses_unknown_event_passes_through_opaque() -> None:
    odd = {"type": "response.audio.transcript.delta", "delta": "hi", "sequence_number": 3}
    response = reassemble(hello(odd, COMPLETED))
    assert response.complete
    assert [b for b in response.content if isinstance(b, OpaqueBlock)] == [
        OpaqueBlock(kind="response.audio.transcript.delta", raw=odd)]
    native = llm_rx.to_native(response, "openai-responses")
    assert [item["type"] for item in native["output"]] == ["message"]  # no output item


def test_openai_responses_unknown_event_without_prefix_is_no_output_item() -> None:
    response = reassemble(hello({"type": "keepalive"}, COMPLETED))
    assert [b.type for b in response.content] == ["text", "opaque"]
    native = llm_rx.to_native(response, "openai-responses")
    assert [item["type"] for item in native["output"]] == ["message"]


def test_openai_responses_unknown_part_type_stays_in_its_message() -> None:
    audio = {"type": "output_audio", "data": "AAAA", "transcript": "Hi"}
    body = stream(
        CREATED, added(0, message()),
        {"type": "response.content_part.added", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "part": {**audio, "data": ""}},
        {"type": "response.content_part.done", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "part": audio},
        part_added(0) | {"content_index": 1},
        text_delta(0, "Hi") | {"content_index": 1},
        COMPLETED,
    )
    response = reassemble(body)
    assert [(b.type, getattr(b, "raw", None)) for b in response.content] == [
        ("opaque", audio), ("text", None)]
    native = llm_rx.to_native(response, "openai-responses")
    [item] = native["output"]
    assert item["content"][0] == audio
    assert item["content"][1]["text"] == "Hi"


def test_openai_responses_unknown_item_type_is_opaque() -> None:
    item = {"id": "x_1", "type": "future_call", "status": "completed", "payload": [1, 2]}
    response = reassemble(stream(CREATED, added(0, {**item, "status": "in_progress"}),
                                 done(0, item), COMPLETED))
    assert [(b.type, getattr(b, "kind", None), getattr(b, "raw", None))
            for b in response.content] == [("opaque", "future_call", item)]
    assert response.stop_reason == "end_turn"
    native = llm_rx.to_native(response, "openai-responses")
    assert native["output"] == [item]


# -- provider detection ------------------------------------------------------------------------


@pytest.mark.parametrize("cap", RESPONSES, ids=lambda c: c.name)
def test_openai_responses_sniffed_from_every_capture(cap: Capture) -> None:
    assert sniff(cap.data) == "openai-responses"
    response = llm_rx.reassemble(cap.data)  # no provider given
    assert response.provider == "openai-responses"
    # (a reply cut by its token limit ended: only a failed one is not complete)
    assert response.complete == (responses_terminal(cap.name) != "response.failed")


def test_openai_responses_sniff_type_after_nested_types() -> None:
    # Bedrock's keys are sorted: the top-level "type" comes after nested ones ("text" config,
    # "error") that once made the head read as an openai-chat error.
    data = capture("bedrock/mantle-responses-reused-tool-call-ids.sse").data
    first_line = data[: data.index(b"\n") + 1]
    assert first_line.index(b'"type":"response.created"') > first_line.index(b'"type":"text"')
    assert sniff(first_line[:-1]) is None  # a line not yet whole is not guessed at
    assert sniff(first_line) == "openai-responses"
