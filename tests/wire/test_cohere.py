"""The ``cohere`` decoder: Cohere v2 chat streams (``message-start`` ... ``message-end``).

Two recorded captures (a tool plan with two tool calls; thinking then text); hand-built
frames in the same shape for each finish reason, citations, a cut stream, an in-band error.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import llm_rx
from llm_rx.errors import WireFormatError
from llm_rx.events import BlockStart, MessageStart, ThinkingDelta
from llm_rx.response import TextBlock, ThinkingBlock, ToolCallBlock
from llm_rx.wire.cohere import CohereDecoder
from llm_rx.wire.registry import sniff

from ..captures import CAPTURES, Capture, capture
from ..helpers import decode_events, outcome, split_at

TOOLS = "cohere/v2-tool-call.sse"
REASONING = "cohere/v2-reasoning.sse"


def frame(kind: str, **fields: Any) -> bytes:
    return b"event: %s\ndata: %s\n\n" % (kind.encode(), orjson.dumps({"type": kind, **fields}))


def start() -> bytes:
    return frame("message-start", id="msg-1", delta={"message": {"role": "assistant"}})


def text(index: int, value: str) -> bytes:
    return frame("content-delta", index=index, delta={"message": {"content": {"text": value}}})


def end(reason: str = "COMPLETE", **delta: Any) -> bytes:
    usage = {"billed_units": {"input_tokens": 3, "output_tokens": 2},
             "tokens": {"input_tokens": 10, "output_tokens": 4}}
    return frame("message-end", delta={"finish_reason": reason, "usage": usage, **delta})


def reply(*frames: bytes) -> llm_rx.Response:
    return llm_rx.reassemble(b"".join(frames), "cohere")


def text_reply(reason: str = "COMPLETE") -> llm_rx.Response:
    content_start = frame("content-start", index=0,
                          delta={"message": {"content": {"type": "text", "text": ""}}})
    return reply(start(), content_start, text(0, "Hi"), frame("content-end", index=0),
                 end(reason))


def test_cohere_tool_call_capture() -> None:
    # bug class: Cohere's stream was not recognised at all ("could not tell which provider")
    response = llm_rx.reassemble(capture(TOOLS).data)  # sniffed
    assert response.provider == "cohere"
    assert response.id == "2941521a-b87a-45f6-9b0d-235fd66c3025"
    assert (response.complete, response.stop_reason) == (True, "tool_use")
    plan, *calls = response.content
    assert isinstance(plan, ThinkingBlock)
    assert plan.text.startswith("I will use the weather tool")
    assert [(c.id, c.name, c.arguments) for c in calls if isinstance(c, ToolCallBlock)] == [
        ("weather_e8p4pn45zt0t", "weather", {"location": "San Francisco"}),
        ("cityAttractions_pyxssbwnq9fq", "cityAttractions", {"city": "San Francisco"}),
    ]


def test_cohere_reasoning_capture() -> None:
    response = llm_rx.reassemble(capture(REASONING).data)
    assert [type(block) for block in response.content] == [ThinkingBlock, TextBlock]
    assert response.text == "The answer to 2 + 2 is 4."
    assert (response.complete, response.stop_reason) == (True, "end_turn")


def test_cohere_usage_counts_every_token_and_the_cache_read() -> None:
    # bug class: billed units (a discounted count) taken for the token count
    usage = llm_rx.reassemble(capture(TOOLS).data).usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (1549, 95, 1504)
    assert usage.reasoning_tokens is None  # never reported: absent, not zero


def test_cohere_usage_falls_back_to_billed_units() -> None:
    billed = {"billed_units": {"input_tokens": 5.0, "output_tokens": 7.0}}
    response = reply(start(), text(0, "x"), frame("message-end", delta={
        "finish_reason": "COMPLETE", "usage": billed}))
    assert (response.usage.input_tokens, response.usage.output_tokens) == (5, 7)
    assert response.usage.cache_read_tokens is None


@pytest.mark.parametrize(
    ("native", "reason"),
    [("COMPLETE", "end_turn"), ("MAX_TOKENS", "max_tokens"), ("TOOL_CALL", "tool_use"),
     ("STOP_SEQUENCE", "stop_sequence")],
)
def test_cohere_finish_reasons(native: str, reason: str) -> None:
    response = text_reply(native)
    assert (response.complete, response.stop_reason) == (True, reason)
    assert llm_rx.to_native(response, "cohere")["finish_reason"] == native


def test_cohere_error_finish_is_a_provider_error() -> None:
    response = reply(start(), text(0, "par"), end("ERROR"))
    assert (response.complete, response.stop_reason, response.text) == (False, "error", "par")
    assert response.error is not None
    assert response.error.kind == "provider"


def test_cohere_stream_without_message_end_is_incomplete() -> None:
    # bug class: a cut stream reported as a finished answer
    data = capture(REASONING).data
    cut = data[: data.index(b"event: message-end")]
    response = llm_rx.reassemble(cut, "cohere")
    assert (response.complete, response.stop_reason) == (False, "interrupted")
    assert response.text == "The answer to 2 + 2 is 4."


def test_cohere_citations_attach_to_the_text_block() -> None:
    citation = {"start": 0, "end": 2, "text": "Hi", "sources": [{"type": "document", "id": "d"}]}
    response = reply(start(), text(0, "Hi"),
                     frame("citation-start", index=0, delta={"message": {"citations": citation}}),
                     frame("citation-end", index=0), end())
    block = response.content[0]
    assert isinstance(block, TextBlock)
    assert block.citations == [citation]
    assert llm_rx.to_native(response, "cohere")["message"]["citations"] == [citation]


def test_cohere_thinking_block_is_thinking() -> None:
    events, error = decode_events([capture(REASONING).data], "cohere")
    assert error is None
    assert isinstance(events[0], MessageStart)
    assert isinstance(events[1], BlockStart)
    assert events[1].kind == "thinking"
    assert isinstance(events[2], ThinkingDelta)


def test_cohere_first_frame_of_another_provider_is_a_wire_format_error() -> None:
    anthropic = capture("anthropic/text-basic.sse").data
    decoder = CohereDecoder()  # the decoder alone, without the check make_decoder adds
    with pytest.raises(WireFormatError, match="not a cohere event stream"):
        decoder.decode(anthropic)


def test_cohere_to_native_tool_calls() -> None:
    native = llm_rx.to_native(llm_rx.reassemble(capture(TOOLS).data), "cohere")
    assert native["id"] == "2941521a-b87a-45f6-9b0d-235fd66c3025"
    assert native["finish_reason"] == "TOOL_CALL"
    message = native["message"]
    assert message["role"] == "assistant"
    assert message["tool_plan"].startswith("I will use the weather tool")
    assert message["tool_calls"][0] == {
        "id": "weather_e8p4pn45zt0t", "type": "function",
        "function": {"name": "weather", "arguments": '{"location": "San Francisco"}'},
    }
    assert native["usage"] == {"billed_units": {"input_tokens": 119, "output_tokens": 44},
                               "tokens": {"input_tokens": 1549, "output_tokens": 95},
                               "cached_tokens": 1504}


def test_cohere_to_native_content() -> None:
    native = llm_rx.to_native(llm_rx.reassemble(capture(REASONING).data), "cohere")
    content = native["message"]["content"]
    assert [item["type"] for item in content] == ["thinking", "text"]
    assert content[1] == {"type": "text", "text": "The answer to 2 + 2 is 4."}
    assert "tool_calls" not in native["message"]


def test_cohere_to_native_from_another_provider() -> None:
    response = llm_rx.reassemble(capture("openai/chat-parallel-tool-calls.sse").data)
    native = llm_rx.to_native(response, "cohere")
    assert native["finish_reason"] == "TOOL_CALL"
    assert [call["function"]["name"] for call in native["message"]["tool_calls"]] == [
        call.name for call in response.tool_calls
    ]
    assert native["usage"]["tokens"]["input_tokens"] == response.usage.input_tokens


def test_cohere_sniffed_from_the_first_frame() -> None:
    data = capture(TOOLS).data
    assert sniff(data[: data.index(b"\n") + 1]) == "cohere"  # the event name alone
    assert sniff(data[data.index(b"data:"):]) == "cohere"  # the payload's type alone


@pytest.mark.parametrize("name", [TOOLS, REASONING])
@pytest.mark.parametrize("size", [1, 7, 100])
def test_cohere_chunk_boundaries_do_not_matter(name: str, size: int) -> None:
    data = capture(name).data
    assert outcome(split_at(data, range(0, len(data), size))) == outcome([data], "cohere")


@pytest.mark.parametrize("cap", [c for c in CAPTURES if c.name != "ollama/pull-progress.ndjson"],
                         ids=lambda c: c.name)
def test_cohere_to_native_of_every_capture(cap: Capture) -> None:
    response = llm_rx.reassemble(cap.data, cap.provider)
    native = orjson.loads(orjson.dumps(llm_rx.to_native(response, "cohere")))
    assert native["finish_reason"] in {"COMPLETE", "STOP_SEQUENCE", "MAX_TOKENS", "TOOL_CALL",
                                       "ERROR", "TIMEOUT"}
    message = native["message"]
    assert message["role"] == "assistant"
    texts = [item["text"] for item in message.get("content", []) if item["type"] == "text"]
    assert "".join(texts) == response.text
    assert len(message.get("tool_calls", [])) == len(response.tool_calls)
