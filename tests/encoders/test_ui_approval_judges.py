"""What the UI targets write for an approval request, judged by the real clients: the AI
SDK's ``readUIMessageStream`` rebuilds a tool part in state ``approval-requested`` (its
``approval.id`` the request's id); AG-UI's models and ``ag-ui-validate`` accept the run that
ends with the ``interrupt`` outcome naming the tool call it waits on."""

from __future__ import annotations

import pytest

import llm_rx
from tests.test_approvals import ASKING, CLIENT_ASKS, DENIED, STREAM, _wire
from tests.ui_judges import ag_ui_events, ag_ui_report, read_ui_streams

REQUEST = "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe"


@pytest.mark.slow  # (runs Node)
def test_vercel_ui_approval_parts_are_rebuilt_by_the_ai_sdk() -> None:
    recorded = llm_rx.translate(STREAM.read_bytes(), "vercel-ui", "openai-responses")
    client = llm_rx.translate(CLIENT_ASKS, "vercel-ui", "vercel-ui")
    scripted, mcp, own = read_ui_streams([_wire(ASKING, "vercel-ui"), recorded, client])
    for read in (scripted, mcp, own):
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
