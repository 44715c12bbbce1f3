"""A tool call cut before its arguments became JSON (the reply stopped by ``max_tokens``
mid-call) in every target, judged by the target's own client: never a call ready to run
where the target can say so, always a stream its reader accepts (issue 31, items 3 and 10).

The sources are OpenAI chat streams whose call is cut by ``finish_reason: "length"``, as the
API sends one: a hand-made one and a recorded parallel-call stream cut in its second call.
"""

from __future__ import annotations

import pytest

import llm_rx
from tests.captures import capture
from tests.streams import DONE, chat_chunk, sse
from tests.ui_judges import ag_ui_events, ag_ui_report, read_ui_streams

CUT = '{"city": "Par'


def _cut_chat() -> bytes:
    call = {"index": 0, "id": "call_0", "type": "function",
            "function": {"name": "get_weather", "arguments": CUT}}
    return sse(chat_chunk({"role": "assistant", "content": "Checking."}),
               chat_chunk({"tool_calls": [call]}), chat_chunk({}, "length"),
               chat_chunk(choices=[], usage={"prompt_tokens": 9, "completion_tokens": 5,
                                             "total_tokens": 14})) + DONE


def _cut_recorded() -> bytes:
    """A recorded parallel call stream, its second call cut after two argument fragments and
    its finish made ``length``: the first call whole, the second cut short."""
    kept, fragments = [], 0
    for frame in capture("openai/chat-parallel-tool-calls.sse").data.split(b"\n\n"):
        if b'"tool_calls":[{"index":1,"function"' in frame:
            fragments += 1
            if fragments > 2:
                continue
        kept.append(frame.replace(b'"finish_reason":"tool_calls"', b'"finish_reason":"length"'))
    return b"\n\n".join(kept)


SOURCES = {"hand-made": _cut_chat, "recorded": _cut_recorded}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_vercel_ui_a_call_cut_short_is_a_tool_input_error(source: str) -> None:
    data = SOURCES[source]()
    reply = llm_rx.reassemble(data, "openai-chat")
    assert reply.complete
    assert reply.stop_reason == "max_tokens"
    cut = [call for call in reply.tool_calls if call.arguments is None]
    assert cut
    [read] = read_ui_streams([llm_rx.translate(data, "vercel-ui", "openai-chat")])
    assert read["errors"] == []  # (every chunk by the ai package's schema; converted again)
    assert "tool-input-error" in read["chunks"]
    parts = {p["toolCallId"]: p for p in read["message"]["parts"]
             if p["type"].startswith("tool-")}
    for call in cut:
        part = parts[call.id]
        assert part["state"] == "output-error"  # (never input-available: not to be run)
        assert part["rawInput"] == call.raw_arguments
        assert "never became JSON" in part["errorText"]
    for call in reply.tool_calls:
        if call.arguments is not None:
            assert parts[call.id]["state"] == "input-available"
            assert parts[call.id]["input"] == call.arguments
    assert read["chunks"][-1] == "finish"  # (the reply itself ended: max_tokens)
    assert read["message"]["metadata"]["stopReason"] == "max_tokens"


def test_vercel_ui_free_text_of_a_custom_tool_is_still_its_input() -> None:
    cap = capture("openai/responses-custom-tool.sse")
    [read] = read_ui_streams([llm_rx.translate(cap.data, "vercel-ui", cap.provider)])
    [part] = [p for p in read["message"]["parts"] if p["type"].startswith("tool-")]
    assert (part["state"], part["input"]) == ("input-available",
                                              "SELECT * FROM users WHERE age > 25")
    assert "tool-input-error" not in read["chunks"]



@pytest.mark.parametrize("source", sorted(SOURCES))
def test_ag_ui_a_call_cut_short_never_ends_and_the_run_is_an_error(source: str) -> None:
    data = SOURCES[source]()
    reply = llm_rx.reassemble(data, "openai-chat")
    body = llm_rx.translate(data, "ag-ui", "openai-chat")
    events = ag_ui_events(body)
    report = ag_ui_report(body)
    assert (report.summary.errors, report.summary.warnings) == (0, 0), report.diagnostics
    ended = {e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_END"}
    for call in reply.tool_calls:
        assert (call.id in ended) == (call.arguments is not None)
    assert (events[-1]["type"], events[-1]["code"]) == ("RUN_ERROR", "invalid_tool_arguments")


def test_ag_ui_free_text_of_a_custom_tool_is_a_call_that_ends() -> None:
    # (once read as arguments that never became JSON: no TOOL_CALL_END, the run an error)
    cap = capture("openai/responses-custom-tool.sse")
    body = llm_rx.translate(cap.data, "ag-ui", cap.provider)
    events = ag_ui_events(body)
    assert ag_ui_report(body).summary.errors == 0
    [end] = [e for e in events if e["type"] == "TOOL_CALL_END"]
    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1]["outcome"]["pendingToolCallIds"] == [end["toolCallId"]]
