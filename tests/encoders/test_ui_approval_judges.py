"""What the UI targets write for an approval request, judged by the real clients: the AI
SDK's ``readUIMessageStream`` rebuilds a tool part in state ``approval-requested`` (its
``approval.id`` the request's id); AG-UI's models and ``ag-ui-validate`` accept the run that
ends with the ``interrupt`` outcome naming the tool call it waits on."""

from __future__ import annotations

from pathlib import Path

import ag_ui_validate
import pytest

import llm_rx
from tests.test_approvals import ASKING, CLIENT_ASKS, DENIED, LANGGRAPH, STREAM, _wire
from tests.ui_judges import ag_ui_events, ag_ui_report, read_ui_streams

REQUEST = "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe"
#: AG-UI's own specification fixture of a run that waits for an approval (then its resume)
HITL = (Path(ag_ui_validate.__file__).parent / "spec" / "fixtures" / "valid"
        / "human-in-the-loop.jsonl")


def _first_run() -> bytes:
    lines = [line for line in HITL.read_bytes().splitlines() if line.strip()]
    end = next(n for n, line in enumerate(lines) if b'"RUN_FINISHED"' in line)
    return b"".join(b"data: " + line + b"\n\n" for line in lines[:end + 1])


def test_ag_ui_specification_human_in_the_loop_fixture_reads_as_a_request() -> None:
    response = llm_rx.reassemble(_first_run(), "ag-ui")
    assert (response.complete, response.stop_reason) == (True, "tool_use")
    assert response.text == "I need your approval to delete 3 files."
    [request] = response.approval_requests
    assert (request.id, request.name, request.arguments, request.meta) == (
        "int_001", "confirm_action", {"action": "delete", "count": 3},
        {"tool_call_id": "call_001"})
    assert request.raw == {"id": "int_001", "reason": "approval_required",
                           "toolCallId": "call_001"}
    # written back, the run still waits on call_001 and still validates
    again = llm_rx.translate(_first_run(), "ag-ui", "ag-ui")
    events = ag_ui_events(again)
    assert events[-1]["outcome"]["interrupts"] == [
        {"id": "int_001", "reason": "approval_required", "toolCallId": "call_001"}]
    assert [e["type"] for e in events].count("TOOL_CALL_START") == 1
    report = ag_ui_report(again)
    assert (report.summary.errors, report.summary.warnings) == (0, 0), report.diagnostics


@pytest.mark.slow  # (runs Node)
def test_vercel_ui_approval_parts_are_rebuilt_by_the_ai_sdk() -> None:
    recorded = llm_rx.translate(STREAM.read_bytes(), "vercel-ui", "openai-responses")
    client = llm_rx.translate(CLIENT_ASKS, "vercel-ui", "vercel-ui")
    hitl = llm_rx.translate(_first_run(), "vercel-ui", "ag-ui")
    langgraph = llm_rx.translate(LANGGRAPH, "vercel-ui", "vercel-ui")
    scripted, mcp, own, agent, graph, as_recorded = read_ui_streams([
        _wire(ASKING, "vercel-ui"), recorded, client, hitl, langgraph, LANGGRAPH.read_bytes()])
    for read in (scripted, mcp, own, agent, graph, as_recorded):
        assert read["errors"] == []
    [tool] = [p for p in scripted["message"]["parts"] if p["type"] == "dynamic-tool"]
    assert (tool["state"], tool["approval"], tool["toolName"], tool["input"]) == (
        "approval-requested", {"id": "mcpr_1"}, "search", {"query": "rx"})
    [tool] = [p for p in mcp["message"]["parts"] if p["type"] == "dynamic-tool"]
    assert (tool["state"], tool["approval"]["id"], tool["toolName"]) == (
        "approval-requested", REQUEST, "create_short_url")
    assert tool["callProviderMetadata"] == {"llm-rx": {"server": "zip1"}}
    # a client's own tool (no provider ran it) awaiting approval: its typed part
    [tool] = [p for p in own["message"]["parts"] if p["type"] == "tool-delete_file"]
    assert (tool["state"], tool["approval"], tool["input"]) == (
        "approval-requested", {"id": "ap1"}, {"path": "a.txt"})
    # AG-UI's fixture, translated: the call the run waits on is awaiting approval
    [tool] = [p for p in agent["message"]["parts"] if p["type"] == "tool-confirm_action"]
    assert (tool["state"], tool["approval"], tool["toolCallId"]) == (
        "approval-requested", {"id": "int_001"}, "call_001")
    # the recorded LangGraph stream and what llm-rx writes of it: the same request
    [theirs] = [p for p in as_recorded["message"]["parts"] if p["type"] == "dynamic-tool"]
    [ours] = [p for p in graph["message"]["parts"] if p["type"] == "tool-delete_file"]
    for tool in (theirs, ours):
        assert (tool["state"], tool["approval"], tool["input"]) == (
            "approval-requested", {"id": theirs["toolCallId"]}, {"filename": "report.pdf"})
    # the next request the page sends carries the request beside the call
    [turn] = own["next"]
    assert [c["type"] for c in turn["content"]] == ["tool-call", "tool-approval-request"]


@pytest.mark.slow  # (runs Node)
def test_vercel_ui_denial_is_read_by_the_ai_sdk_as_output_denied() -> None:
    [read] = read_ui_streams([llm_rx.translate(DENIED, "vercel-ui", "vercel-ui")])
    assert read["errors"] == []
    [tool] = [p for p in read["message"]["parts"] if p["type"] == "tool-delete_file"]
    assert (tool["state"], tool["approval"]["id"]) == ("output-denied", "ap1")


@pytest.mark.parametrize("body", ["scripted", "recorded"])
def test_ag_ui_interrupt_outcome_validates(body: str) -> None:
    data = _wire(ASKING, "ag-ui") if body == "scripted" else llm_rx.translate(
        STREAM.read_bytes(), "ag-ui", "openai-responses")
    events = ag_ui_events(data)
    outcome = events[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    [interrupt] = outcome["interrupts"]
    calls = {e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_END"}
    assert interrupt["toolCallId"] in calls
    report = ag_ui_report(data)
    assert (report.summary.errors, report.summary.warnings) == (0, 0), report.diagnostics
