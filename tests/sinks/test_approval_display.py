"""The displays show a reply that stops to ask: the tool it asks to run, the MCP server, the
arguments — each a string the provider wrote, escaped for the medium it reaches."""

from __future__ import annotations

import io

from rich.console import Console

import llm_rx
from llm_rx.sinks import PlainPrinter
from llm_rx.sinks._jupyter import render_frame
from llm_rx.sinks._rich import render_reply
from tests.captures import HERE
from tests.sinks.hostile import HTML, TERMINAL

RECORDED = (HERE / "openai" / "responses-mcp-approval-request.sse").read_bytes()


def _hostile() -> llm_rx.Response:
    return llm_rx.Response(provider="openai-responses", complete=True, stop_reason="tool_use",
                           content=[llm_rx.ApprovalRequestBlock(
                               id="mcpr_1", name=HTML[0] + TERMINAL[0], server=HTML[1],
                               arguments={"q": HTML[2] + TERMINAL[3]})])


def test_plain_printer_writes_the_request_on_its_own_line() -> None:
    out = io.StringIO()
    llm_rx.from_bytes(RECORDED).subscribe(PlainPrinter(out))
    lines = out.getvalue().splitlines()
    assert lines[-1].startswith('[approval request: zip1] create_short_url({"alias":""')
    assert lines[-1].endswith('"url":"https://ai-sdk.dev/"})')


def test_rich_and_jupyter_show_the_request() -> None:
    response = llm_rx.reassemble(RECORDED)
    console = Console(file=io.StringIO(), width=100)
    console.print(render_reply(response, final=True))
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "approval requested: create_short_url (MCP server zip1)" in shown
    assert '"url": "https://ai-sdk.dev/"' in shown
    frame = render_frame(response, final=True)
    assert "**approval requested: create_short_url (MCP server zip1)**" in frame.markdown
    assert "```json\n{\n  \"alias\": \"\"," in frame.markdown


def test_a_hostile_request_is_escaped_in_every_display() -> None:
    response = _hostile()
    frame = render_frame(response, final=True)
    assert "<img" not in frame.markdown.split("```")[0]  # (outside the code block: escaped)
    assert "<script>" not in frame.markdown.split("```")[0]
    assert "\x1b" not in frame.plain
    console = Console(file=io.StringIO(), width=200, force_terminal=True)
    console.print(render_reply(response, final=True))
    assert "\x1b]0;" not in console.file.getvalue()  # type: ignore[attr-defined]
    out = io.StringIO()
    printer = PlainPrinter(out)
    for event in [llm_rx.MessageStart("openai-responses"),
                  llm_rx.BlockStart(0, "approval_request", "r", TERMINAL[0] + "tool",
                                    meta={"server": TERMINAL[4] + "srv"}),
                  llm_rx.ToolArgsDelta(0, '{"a":"' + TERMINAL[2] + '"}'), llm_rx.BlockStop(0),
                  llm_rx.MessageStop("tool_use")]:
        printer.on_next(event)
    printer.on_completed()
    assert "\x1b" not in out.getvalue()
    assert "\x07" not in out.getvalue()
