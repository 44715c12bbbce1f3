"""What the live displays say about a reply, on real captures: the footer, thinking, tools."""

from __future__ import annotations

import io

import pytest

import llm_rx
from llm_rx.sinks import PlainPrinter
from llm_rx.sinks._format import footer_text
from llm_rx.sinks._jupyter import render_frame

from ..captures import capture
from .timeline import events_of


def _partial(name: str, upto: int) -> llm_rx.Response:
    builder = llm_rx.ResponseBuilder()
    builder.feed_all(events_of(capture(name).data)[:upto])
    return builder.snapshot().response


def test_footer_while_streaming_shows_no_placeholder_output_count() -> None:
    # message_start says output_tokens 1: no count of the reply, only a placeholder
    streaming = _partial("anthropic/thinking-signature.sse", 3)  # start, usage, block start
    assert streaming.usage.output_tokens == 1
    assert footer_text(streaming, final=False) == (
        "claude-sonnet-4-20250514 · usage: input 43 · cache read 0 · cache write 0 · streaming…"
    )
    final = llm_rx.reassemble(capture("anthropic/thinking-signature.sse").data)
    assert "output 282" in footer_text(final, final=True)


@pytest.mark.parametrize("name", ["anthropic/advisor-tool.sse", "anthropic/text-basic.sse",
                                  "openai/responses-web-search.sse"])
def test_footer_fits_100_columns_and_keeps_every_count(name: str) -> None:
    response = llm_rx.reassemble(capture(name).data)
    footer = footer_text(response, final=True)
    assert all(len(line) <= 100 for line in footer.split("\n"))
    assert footer.replace("\n", " · ") == footer_text(response, final=True, width=10**6)
    assert f"stop: {response.stop_reason}" in footer


def test_footer_breaks_between_parts_never_inside_one() -> None:
    response = llm_rx.reassemble(capture("anthropic/thinking-signature.sse").data)
    footer = footer_text(response, final=True, width=40)
    assert footer.split("\n") == ["claude-sonnet-4-20250514", "usage: input 43 · output 282",
                                  "cache read 0 · cache write 0", "stop: end_turn"]


def test_render_frame_redacted_thinking_says_so_with_its_size() -> None:
    frame = render_frame(llm_rx.reassemble(capture("anthropic/redacted-thinking.sse").data), True)
    # (a line, not a <details> that opens on nothing: the encrypted data is not shown)
    assert ">Thinking (redacted: 744 bytes of encrypted data)</div>" in frame.markdown
    assert "<details" not in frame.markdown
    assert "[thinking (redacted: 296 bytes of encrypted data)]" in frame.plain


def test_render_frame_thinking_before_any_text_arrived_has_no_count() -> None:
    response = _partial("anthropic/thinking-signature.sse", 3)  # message_start, block start
    frame = render_frame(response, final=False)
    assert ">Thinking…</div>" in frame.markdown
    assert "characters" not in frame.markdown


def test_render_frame_signed_thinking_without_text_says_no_text_was_sent() -> None:
    response = llm_rx.reassemble(capture("anthropic/advisor-tool.sse").data)
    (thinking,) = [block for block in response.content if block.type == "thinking"]
    assert thinking.signature
    assert not thinking.text
    assert not thinking.redacted
    frame = render_frame(response, True)
    assert ">Thinking (no text sent)</div>" in frame.markdown
    assert "0 characters" not in frame.markdown
    assert "[thinking (no text sent)]" in frame.plain


def test_render_frame_thinking_quote_has_no_trailing_empty_lines() -> None:
    frame = render_frame(llm_rx.reassemble(capture("gemini/json-array-function-call.json").data),
                         True)
    assert "It's a quick plan.\n\n</details>" in frame.markdown


def test_render_frame_tool_call_without_arguments_shows_an_empty_object() -> None:
    frame = render_frame(
        llm_rx.reassemble(capture("anthropic/tool-use-input-json-delta.sse").data), True)
    assert "**Tool call** `pelican_name_generator`\n```json\n{}\n```" in frame.markdown
    assert "[tool call] pelican_name_generator({})" in frame.plain


def test_plain_printer_calls_a_provider_error_an_error() -> None:
    out = io.StringIO()
    printer = PlainPrinter(out)
    data = capture("anthropic/error-overloaded-midstream.synthetic.sse").data
    llm_rx.from_bytes(data).subscribe(printer.on_next, printer.on_error, printer.on_completed)
    assert out.getvalue().startswith("Hello\n[error (provider): overloaded_error: Overloaded")
    assert "interrupted" not in out.getvalue()
