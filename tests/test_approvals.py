"""Approval requests (a reply that stops to ask the user before a tool runs): the
``approval_request`` block of the event algebra, read from each wire that carries one (the
Responses ``mcp_approval_request`` item, the AI SDK UI stream's ``tool-approval-request``,
AG-UI's ``interrupt`` outcome), kept through ``to_response``, ``to_native`` and
``to_message`` (the next turn carries the decision), written by each target that has the
concept and reported ``Dropped`` by the others."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from openai._models import construct_type
from openai.types.responses import (
    ResponseInputItemParam,
    ResponseInputParam,
    ResponseStreamEvent,
)
from pydantic import TypeAdapter

import llm_rx
from llm_rx.encoders import ENCODERS, UI_TARGETS, make_encoder
from llm_rx.events import (
    BlockStart,
    BlockStop,
    Dropped,
    Event,
    MessageStart,
    MessageStop,
    Opaque,
    TextDelta,
    ToolArgsDelta,
    event_from_dict,
    event_to_dict,
)
from llm_rx.response import WITHOUT_NATIVE, ApprovalRequestBlock, Response, ToolCallBlock
from tests.captures import HERE

STREAM = HERE / "openai" / "responses-mcp-approval-request.sse"
BODY = HERE / "openai" / "responses-mcp-approval-body.nonstream.json"
REQUEST = "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe"
ARGUMENTS = {"alias": "", "description": "Shortened link for ai-sdk.dev", "max_clicks": 100,
             "password": "", "url": "https://ai-sdk.dev/"}

ASKING: list[Event] = [
    MessageStart("openai-responses", "gpt-5", "resp_1"),
    BlockStart(0, "text"),
    TextDelta(0, "I need your approval."),
    BlockStop(0),
    BlockStart(1, "approval_request", "mcpr_1", "search", meta={"server": "docs"}),
    ToolArgsDelta(1, '{"query":'),
    ToolArgsDelta(1, '"rx"}'),
    BlockStop(1),
    MessageStop("tool_use"),
]


def _recorded() -> Response:
    return llm_rx.reassemble(STREAM.read_bytes(), provider="openai-responses")


def _approval(response: Response) -> ApprovalRequestBlock:
    [block] = response.approval_requests
    return block


def _same(block: ApprovalRequestBlock) -> tuple[Any, ...]:
    """What every wire means by the request (not how one spelled it)."""
    return block.id, block.name, block.arguments, block.server


# -- the algebra ------------------------------------------------------------------------------

def test_approval_request_folds_to_a_typed_block() -> None:
    response = _fold(ASKING)
    block = _approval(response)
    assert (block.id, block.name, block.arguments, block.server, block.meta) == (
        "mcpr_1", "search", {"query": "rx"}, "docs", None)
    assert response.tool_calls == []
    assert response.model_dump(mode="json")["content"][1] == {
        "type": "approval_request", "id": "mcpr_1", "name": "search",
        "arguments": {"query": "rx"}, "server": "docs", "raw": None, "native": None}
    assert Response.model_validate_json(response.model_dump_json()) == response


def _fold(events: list[Event]) -> Response:
    builder = llm_rx.ResponseBuilder()
    for event in events:
        builder.feed(event)
    return builder.build()


def test_approval_request_arguments_unparsed_or_cut() -> None:
    raw = [ASKING[0], BlockStart(0, "approval_request", "r", "t"), ToolArgsDelta(0, "not json"),
           BlockStop(0), MessageStop("tool_use")]
    assert _approval(_fold(raw)).arguments == "not json"  # (the evidence kept)
    none = [ASKING[0], BlockStart(0, "approval_request", "r", "t"), BlockStop(0)]
    assert _approval(_fold(none)).arguments == {}
    cut = _fold(ASKING[:6])  # (cut inside the arguments: no parsed prefix)
    assert _approval(cut).arguments is None
    assert not cut.complete


def test_approval_request_events_round_trip_through_json() -> None:
    for event in ASKING:
        back = event_from_dict(json.loads(json.dumps(event_to_dict(event))))
        assert back == event
    assert ASKING[4] != BlockStart(1, "tool_call", "mcpr_1", "search", meta={"server": "docs"})
    assert ASKING[4] != Opaque("approval_request", None)


# -- the Responses wire, streamed and not ----------------------------------------------------

def test_responses_stream_reads_the_recorded_approval_request() -> None:
    response = _recorded()
    assert [block.type for block in response.content] == [
        "opaque", "thinking", "approval_request"]
    block = _approval(response)
    assert _same(block) == (REQUEST, "create_short_url", ARGUMENTS, "zip1")
    assert block.raw["type"] == "mcp_approval_request"
    assert (response.complete, response.stop_reason) == (True, "tool_use")


def test_responses_non_stream_body_reads_and_writes_the_approval_request() -> None:
    body = json.loads(BODY.read_bytes())
    response = llm_rx.from_native(body, "openai-responses")
    block = _approval(response)
    assert (block.name, block.server) == ("create_short_url", "zip1")
    assert llm_rx.to_native(response, "openai-responses")["output"] == body["output"]


def test_responses_to_response_of_the_stream_equals_from_native_of_its_body() -> None:
    streamed = _recorded()
    body = llm_rx.to_native(streamed, "openai-responses")
    assert body["output"][2] == streamed.approval_requests[0].raw
    assert llm_rx.from_native(body, "openai-responses") == streamed


def test_responses_stream_cut_after_the_request_is_not_complete() -> None:
    data = STREAM.read_bytes()
    cut = data[: data.index(b"event: response.output_item.done\ndata: {\"type\":"
                            b"\"response.output_item.done\",\"sequence_number\":9")]
    response = llm_rx.reassemble(cut, provider="openai-responses")
    assert not response.complete
    block = _approval(response)
    assert (block.id, block.arguments) == (REQUEST, None)  # (never ended: not a decision yet)


def test_responses_encoder_writes_the_request_as_the_sdk_reads_it() -> None:
    events = _fold(ASKING)
    body = llm_rx.translate(_wire(ASKING, "openai-responses"), "openai-responses",
                            "openai-responses")
    items = []
    for frame in body.split(b"\n\n"):
        data = next((line[6:] for line in frame.split(b"\n") if line.startswith(b"data: ")),
                    None)
        if data is None:
            continue
        event = construct_type(type_=ResponseStreamEvent, value=orjson.loads(data))
        if event.type == "response.output_item.done":
            items.append(event.item)
    asked = [item for item in items if item.type == "mcp_approval_request"]
    assert [(i.id, i.name, json.loads(i.arguments), i.server_label) for i in asked] == [
        ("mcpr_1", "search", {"query": "rx"}, "docs")]
    back = llm_rx.reassemble(body, provider="openai-responses")
    assert _same(_approval(back)) == _same(_approval(events))


def _wire(events: list[Event], to: str) -> bytes:
    encoder = make_encoder(to)
    return encoder.encode(events) + encoder.finish(None)


# -- every other target -----------------------------------------------------------------------

@pytest.mark.parametrize("target", sorted(set(ENCODERS) - set(UI_TARGETS)
                                          - {"openai-responses"}))
def test_targets_without_approvals_report_them_dropped(target: str) -> None:
    dropped: list[Dropped] = []
    body = llm_rx.translate(STREAM.read_bytes(), target, "openai-responses",
                            on_dropped=dropped.append)
    assert [d.index for d in dropped if d.what == "approval_request"] == [2]
    assert REQUEST.encode() not in body
    assert b"create_short_url" not in body  # (nor its arguments: nothing of it is written)


# -- the UI streams ---------------------------------------------------------------------------

@pytest.mark.parametrize("target", sorted(UI_TARGETS))
def test_ui_round_trip_keeps_the_approval_request(target: str) -> None:
    source = _recorded()
    dropped: list[Dropped] = []
    body = llm_rx.translate(STREAM.read_bytes(), target, "openai-responses",
                            on_dropped=dropped.append)
    assert "approval_request" not in {d.what for d in dropped}
    back = llm_rx.reassemble(body, provider=target)
    assert _same(_approval(back)) == _same(_approval(source))
    assert (back.complete, back.stop_reason) == (True, "tool_use")
    # the UI stream's own events come back the same (its request names the call it asks about)
    again = llm_rx.translate(body, target, target)
    assert llm_rx.reassemble(again, provider=target).model_dump(exclude=WITHOUT_NATIVE) == (
        back.model_dump(exclude=WITHOUT_NATIVE))


def test_vercel_ui_writes_a_tool_part_awaiting_approval() -> None:
    chunks = [orjson.loads(frame[6:]) for frame in _wire(ASKING, "vercel-ui").split(b"\n\n")
              if frame.startswith(b"data: {")]
    tool = [chunk for chunk in chunks if chunk["type"].startswith("tool-")]
    assert tool == [
        {"type": "tool-input-start", "toolCallId": "mcpr_1", "toolName": "search",
         "providerExecuted": True, "dynamic": True},
        {"type": "tool-input-available", "toolCallId": "mcpr_1", "toolName": "search",
         "providerExecuted": True, "dynamic": True, "input": {"query": "rx"},
         "providerMetadata": {"llm-rx": {"server": "docs"}}},
        {"type": "tool-approval-request", "approvalId": "mcpr_1", "toolCallId": "mcpr_1"},
    ]


CLIENT_ASKS = (
    b'data: {"type":"start","messageId":"m1"}\n\n'
    b'data: {"type":"tool-input-start","toolCallId":"c1","toolName":"delete_file"}\n\n'
    b'data: {"type":"tool-input-available","toolCallId":"c1","toolName":"delete_file",'
    b'"input":{"path":"a.txt"}}\n\n'
    b'data: {"type":"tool-approval-request","approvalId":"ap1","toolCallId":"c1"}\n\n'
    b'data: {"type":"finish","finishReason":"tool-calls"}\n\n'
)


def test_vercel_ui_reads_a_client_tool_awaiting_approval() -> None:
    response = llm_rx.reassemble(CLIENT_ASKS, provider="vercel-ui")
    # (a client call's tool-input-start opens its block and is nothing more: no opaque block)
    assert [block.type for block in response.content] == ["tool_call", "approval_request"]
    [call] = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "delete_file", {"path": "a.txt"})
    block = _approval(response)
    assert (block.id, block.name, block.arguments, block.meta) == (
        "ap1", "delete_file", {"path": "a.txt"}, {"tool_call_id": "c1"})
    # written back: the call once, then the request naming it
    again = llm_rx.translate(CLIENT_ASKS, "vercel-ui", "vercel-ui")
    types = [orjson.loads(f[6:])["type"] for f in again.split(b"\n\n") if f.startswith(b"data: {")]
    assert types.count("tool-input-start") == 1
    assert b'{"type":"tool-approval-request","approvalId":"ap1","toolCallId":"c1"}' in again


DENIED = (
    CLIENT_ASKS.replace(b'data: {"type":"finish","finishReason":"tool-calls"}\n\n', b"")
    + b'data: {"type":"tool-output-denied","toolCallId":"c1"}\n\n'
    b'data: {"type":"text-start","id":"t"}\n\n'
    b'data: {"type":"text-delta","id":"t","delta":"I will not delete it."}\n\n'
    b'data: {"type":"text-end","id":"t"}\n\n'
    b'data: {"type":"finish","finishReason":"stop"}\n\n')


def test_vercel_ui_denial_is_read_and_written_back() -> None:
    response = llm_rx.reassemble(DENIED, provider="vercel-ui")
    assert [(b.type, getattr(b, "kind", None)) for b in response.content] == [
        ("tool_call", None), ("approval_request", None), ("opaque", "tool-output-denied"),
        ("text", None)]
    dropped: list[Dropped] = []
    again = llm_rx.translate(DENIED, "vercel-ui", "vercel-ui", on_dropped=dropped.append)
    assert dropped == []
    assert b'data: {"type":"tool-output-denied","toolCallId":"c1"}\n\n' in again
    assert llm_rx.reassemble(again).model_dump(exclude=WITHOUT_NATIVE) == (
        response.model_dump(exclude=WITHOUT_NATIVE))


LANGGRAPH = HERE / "vercel-ui" / "langgraph-hitl-request.sse"


def test_vercel_ui_reads_the_recorded_langgraph_approval_request() -> None:
    # (its call's input came only as fragments: no tool-input-available; no finishReason)
    response = llm_rx.reassemble(LANGGRAPH.read_bytes())  # (sniffed)
    assert response.provider == "vercel-ui"
    assert [block.type for block in response.content] == [
        "thinking", "tool_call", "approval_request"]
    [call] = response.tool_calls
    block = _approval(response)
    assert (block.id, block.name, block.arguments, block.meta) == (
        call.id, "delete_file", {"filename": "report.pdf"}, {"tool_call_id": call.id})
    assert call.arguments == block.arguments
    assert (response.complete, response.stop_reason) == (True, "tool_use")
    again = llm_rx.translate(LANGGRAPH, "vercel-ui", "vercel-ui")
    assert _same(_approval(llm_rx.reassemble(again))) == _same(block)


def test_vercel_ui_provider_call_without_approval_stays_opaque() -> None:
    body = (b'data: {"type":"start"}\n\n'
            b'data: {"type":"tool-input-start","toolCallId":"s1","toolName":"web",'
            b'"providerExecuted":true}\n\n'
            b'data: {"type":"tool-input-available","toolCallId":"s1","toolName":"web",'
            b'"input":{},"providerExecuted":true}\n\n')
    for tail in (b'data: {"type":"finish"}\n\n', b""):  # (finished, and cut: held, then given)
        response = llm_rx.reassemble(body + tail, provider="vercel-ui")
        assert [(b.type, getattr(b, "kind", None)) for b in response.content] == [
            ("opaque", "tool-input-available")]
        assert response.complete == bool(tail)


def test_ag_ui_reads_an_interrupt_naming_a_tool_call() -> None:
    body = (b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
            b'data: {"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"pay"}\n\n'
            b'data: {"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\\"eur\\":5}"}\n\n'
            b'data: {"type":"TOOL_CALL_END","toolCallId":"c1"}\n\n'
            b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":'
            b'"interrupt","interrupts":[{"id":"i1","reason":"confirm","toolCallId":"c1"},'
            b'{"id":"i2","reason":"input_required"}]}}\n\n')
    response = llm_rx.reassemble(body, provider="ag-ui")
    assert [b.type for b in response.content] == ["tool_call", "approval_request", "opaque"]
    block = _approval(response)
    assert (block.id, block.name, block.arguments, block.meta) == (
        "i1", "pay", {"eur": 5}, {"tool_call_id": "c1"})
    assert block.raw == {"id": "i1", "reason": "confirm", "toolCallId": "c1"}
    assert (response.complete, response.stop_reason) == (True, "tool_use")


def test_ag_ui_writes_the_interrupt_outcome() -> None:
    frames = [orjson.loads(f[6:]) for f in _wire(ASKING, "ag-ui").split(b"\n\n") if f]
    calls = [f for f in frames if f["type"].startswith("TOOL_CALL")]
    assert [f["type"] for f in calls] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert calls[1]["delta"] == '{"query":"rx"}'
    assert frames[-1]["outcome"] == {"type": "interrupt", "interrupts": [
        {"id": "mcpr_1", "reason": "tool_approval", "toolCallId": "mcpr_1",
         "metadata": {"server": "docs"}}]}


# -- the next turn ----------------------------------------------------------------------------

def test_to_message_carries_the_decision_as_mcp_approval_response() -> None:
    response = _recorded()
    approved = llm_rx.to_message(response, "openai-responses", approvals={REQUEST: True})
    denied = llm_rx.to_message(response, "openai-responses",
                               approvals={REQUEST: (False, "not that URL")})
    assert approved[-2] == response.approval_requests[0].raw
    assert approved[-1] == {"type": "mcp_approval_response", "approval_request_id": REQUEST,
                            "approve": True}
    assert denied[-1] == {"type": "mcp_approval_response", "approval_request_id": REQUEST,
                          "approve": False, "reason": "not that URL"}
    # the openai SDK's own request types take the request and the decision as they are
    adapter: TypeAdapter[Any] = TypeAdapter(ResponseInputItemParam)
    for item in (*approved[-2:], denied[-1]):
        assert adapter.validate_python(item) == item
    TypeAdapter(ResponseInputParam).validate_python(approved)
    assert llm_rx.to_message(response, "openai-responses")[-1] == approved[-2]  # (no decision)


def test_to_message_of_another_providers_request_keeps_its_id() -> None:
    response = _fold(ASKING).model_copy(update={"provider": "vercel-ui"})
    turn = llm_rx.to_message(response, "openai-responses", approvals={"mcpr_1": False})
    assert turn[-2:] == [
        {"id": "mcpr_1", "type": "mcp_approval_request", "arguments": '{"query":"rx"}',
         "name": "search", "server_label": "docs"},
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": False}]


def test_to_message_refuses_a_decision_on_no_request() -> None:
    with pytest.raises(ValueError, match="no approval request 'mcpr_x'"):
        llm_rx.to_message(_recorded(), "openai-responses", approvals={"mcpr_x": True})


def test_to_message_for_a_target_without_approvals_reports_request_and_decision() -> None:
    dropped: list[llm_rx.MessageDrop] = []
    turn = llm_rx.to_message(_fold(ASKING), "anthropic", approvals={"mcpr_1": True},
                             dropped=dropped)
    assert turn["content"] == [{"type": "text", "text": "I need your approval."}]
    assert [(d.index, d.what) for d in dropped] == [(1, "approval_request"),
                                                    (1, "approval_response")]


def test_tool_calls_are_not_approval_requests() -> None:
    response = _fold(ASKING)
    assert not any(isinstance(block, ToolCallBlock) for block in response.approval_requests)
