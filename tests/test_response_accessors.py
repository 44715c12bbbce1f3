"""``Response.thinking`` and ``Response.tool_calls``: the reasoning and the calls of a reply."""

from __future__ import annotations

from reactivex import operators as ops

import llm_rx
from llm_rx.response import OpaqueBlock, Response, TextBlock, ThinkingBlock, ToolCallBlock

from .captures import capture


def test_response_thinking_joins_the_reasoning_blocks_only() -> None:
    response = Response(provider="anthropic", content=[
        ThinkingBlock(text="Let me ", signature="S1"),
        TextBlock(text="Hi"),
        ThinkingBlock(text="", signature="DATA", redacted=True),
        ThinkingBlock(text="see."),
    ])
    assert response.thinking == "Let me see."
    assert response.text == "Hi"


def test_response_thinking_of_a_reply_without_reasoning_is_empty() -> None:
    assert Response(provider="openai-chat", content=[TextBlock(text="x")]).thinking == ""


def test_response_thinking_on_a_capture_is_the_thinking_deltas_joined() -> None:
    data = capture("anthropic/thinking-signature.sse").data
    deltas = llm_rx.from_bytes(data, provider="anthropic").pipe(
        llm_rx.operators.thinking_only()
    )
    joined = "".join(deltas.pipe(ops.to_list()).run())
    assert llm_rx.reassemble(data).thinking == joined != ""


def test_response_tool_calls_are_the_client_calls_in_order() -> None:
    calls = [ToolCallBlock(id="a", name="f"), ToolCallBlock(id="b", name="g")]
    response = Response(provider="anthropic", content=[
        calls[0], OpaqueBlock(kind="server_tool_use", raw={}), TextBlock(text="t"), calls[1],
    ])
    assert response.tool_calls == calls
