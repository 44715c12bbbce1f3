"""The translation bugs gateways shipped (PITFALLS 34-38), each provoked by a small
hand-written stream (written here, not recorded) and judged by the target SDK's accumulator."""

from __future__ import annotations

from typing import Any

import orjson
from anthropic.lib.streaming._messages import accumulate_event
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

import llm_rx
from tests.captures import capture
from tests.streams import DONE, chat_chunk, sse

from .oracles import sse_payloads


def anthropic_message(data: bytes) -> Any:
    """The Anthropic SDK's accumulated message (it raises on an event before message_start)."""
    snapshot: Any = None
    bufs: dict[int, bytes] = {}
    for _, payload in sse_payloads(data):
        snapshot = accumulate_event(event=orjson.loads(payload), current_snapshot=snapshot,
                                    json_bufs=bufs)
    return snapshot


def names(data: bytes) -> list[str | None]:
    return [name for name, _ in sse_payloads(data)]


def call(index: int, arguments: str, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if "name" in fields:
        entry["function"]["name"] = fields.pop("name")
    entry.update(fields)
    return entry


# hand-written: an OpenAI-compatible reply whose very first chunk is a tool call
FIRST_IS_TOOL = sse(
    chat_chunk({"role": "assistant", "tool_calls": [
        call(0, "", id="call_1", type="function", name="get_weather")]}),
    chat_chunk({"tool_calls": [call(0, '{"city": ')]}),
    chat_chunk({"tool_calls": [call(0, '"Paris"}')]}),
    chat_chunk({}, "tool_calls"),
) + DONE


def test_translate_tool_call_first_still_opens_with_message_start() -> None:
    # PITFALLS 34 (CLIProxyAPI#561): content_block_start before message_start
    out = llm_rx.translate(FIRST_IS_TOOL, "anthropic", "openai-chat")
    assert names(out)[:2] == ["message_start", "content_block_start"]
    message = anthropic_message(out)  # (raises on the wrong order)
    assert [(b.type, b.id, b.name, b.input) for b in message.content] == [
        ("tool_use", "call_1", "get_weather", {"city": "Paris"})]
    assert message.stop_reason == "tool_use"


# hand-written: a Gemini reply with two calls, their arguments given whole
GEMINI_CALLS = sse(
    {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "get_time", "args": {"zone": "CET", "h24": True}}}]},
        "finishReason": "STOP"}],
     "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 9,
                       "totalTokenCount": 16},
     "modelVersion": "gemini-test"},
)


def test_translate_tool_arguments_arrive_as_input_json_delta() -> None:
    # PITFALLS 35 (LiteLLM#25561, #29491): tool_use start/stop with no input_json_delta
    out = llm_rx.translate(GEMINI_CALLS, "anthropic", "gemini")
    frames = [orjson.loads(p) for _, p in sse_payloads(out)]
    deltas = [f["delta"]["partial_json"] for f in frames if f["type"] == "content_block_delta"]
    assert [orjson.loads(d) for d in deltas] == [{"city": "Paris"}, {"zone": "CET", "h24": True}]
    message = anthropic_message(out)
    assert [(b.name, b.input) for b in message.content] == [
        ("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET", "h24": True})]
    assert all(b.id for b in message.content)  # (Gemini has none: the target needs one)


# hand-written: a host that sends its text together with an empty tool_calls list
TEXT_WITH_EMPTY_CALLS = sse(
    chat_chunk({"role": "assistant", "content": "", "tool_calls": []}),
    chat_chunk({"content": "Hello", "tool_calls": []}),
    chat_chunk({"content": " there", "tool_calls": []}),
    chat_chunk({}, "stop"),
) + DONE


def test_translate_text_with_empty_tool_calls_is_text() -> None:
    # PITFALLS 36 (LiteLLM#29286): empty input_json_delta frames instead of text_delta
    out = llm_rx.translate(TEXT_WITH_EMPTY_CALLS, "anthropic", "openai-chat")
    frames = [orjson.loads(p) for _, p in sse_payloads(out)]
    kinds = [f["delta"]["type"] for f in frames if f["type"] == "content_block_delta"]
    assert kinds == ["text_delta", "text_delta"]
    message = anthropic_message(out)
    assert [(b.type, b.text) for b in message.content] == [("text", "Hello there")]


# hand-written: the finish chunk, then the usage chunk (stream_options.include_usage), with
# an inclusive prompt_tokens of which 80 were read from cache
USAGE_AFTER_STOP = sse(
    chat_chunk({"role": "assistant", "content": "Hi"}),
    chat_chunk({}, "stop"),
    chat_chunk(choices=[], usage={
        "prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105,
        "prompt_tokens_details": {"cached_tokens": 80}}),
) + DONE


def test_translate_message_delta_waits_for_the_real_usage() -> None:
    # PITFALLS 37 (zcode-api#23): message_delta sent before the usage arrived (input 0)
    out = llm_rx.translate(USAGE_AFTER_STOP, "anthropic", "openai-chat")
    deltas = [orjson.loads(p) for n, p in sse_payloads(out) if n == "message_delta"]
    assert len(deltas) == 1
    assert deltas[0]["usage"] == {"input_tokens": 20, "cache_read_input_tokens": 80,
                                  "output_tokens": 5}
    assert names(out)[-2:] == ["message_delta", "message_stop"]


def test_translate_cache_tokens_are_subtracted_from_an_inclusive_prompt() -> None:
    # PITFALLS 37 (zcode-api#23): cache tokens not subtracted, so counted twice
    out = llm_rx.translate(USAGE_AFTER_STOP, "anthropic", "openai-chat")
    usage = anthropic_message(out).usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (
        20, 80, 5)
    back = llm_rx.reassemble(out, "anthropic").usage
    assert (back.input_tokens, back.cache_read_tokens) == (100, 80)  # the same bill


def test_translate_tool_block_opens_when_its_call_starts() -> None:
    # PITFALLS 37: late tool blocks, opened at the end with everything at once
    encoder = llm_rx.encoders.make_encoder("anthropic")
    outputs = [encoder.encode([event]) for event in _events(FIRST_IS_TOOL)]
    start = next(n for n, data in enumerate(outputs) if b'"tool_use"' in data)
    first_args = next(n for n, data in enumerate(outputs) if b"input_json_delta" in data)
    assert start < first_args < len(outputs) - 1  # (each out with its own event)


def _events(data: bytes) -> list[Any]:
    out: list[Any] = []
    llm_rx.from_bytes(data, "openai-chat").subscribe(out.append, lambda error: None)
    return out


def test_translate_same_provider_keeps_anthropic_native_blocks() -> None:
    # PITFALLS 38 (llm-gateway#1891): server-tool blocks, citations, cache counts and block
    # order lost on a round trip through the translator
    data = capture("anthropic/web-search-citations.sse").data
    out = llm_rx.translate(data, "anthropic", "anthropic")
    original, again = anthropic_message(data), anthropic_message(out)
    assert again.model_dump() == original.model_dump()
    assert [b.type for b in again.content][:3] == [
        "server_tool_use", "web_search_tool_result", "text"]


# hand-written: two calls whose fragments interleave, keyed by their index only
INTERLEAVED = sse(
    chat_chunk({"role": "assistant", "tool_calls": [
        call(0, "", id="call_a", type="function", name="first"),
        call(1, "", id="call_b", type="function", name="second")]}),
    chat_chunk({"tool_calls": [call(1, '{"b": '), call(0, '{"a": ')]}),
    chat_chunk({"tool_calls": [call(0, "1}")]}),
    chat_chunk({"tool_calls": [call(1, "2}")]}),
    chat_chunk({}, "tool_calls"),
) + DONE


def test_translate_parallel_calls_stay_apart_by_index() -> None:
    # PITFALLS 7-8: interleaved fragments merged into one call
    message = anthropic_message(llm_rx.translate(INTERLEAVED, "anthropic", "openai-chat"))
    assert [(b.id, b.name, b.input) for b in message.content] == [
        ("call_a", "first", {"a": 1}), ("call_b", "second", {"b": 2})]
    state = ChatCompletionStreamState()
    back = llm_rx.translate(llm_rx.translate(INTERLEAVED, "anthropic", "openai-chat"),
                            "openai-chat", "anthropic")
    for _, payload in sse_payloads(back):
        if payload != "[DONE]":
            state.handle_chunk(ChatCompletionChunk.model_validate(orjson.loads(payload)))
    calls = state.get_final_completion().choices[0].message.tool_calls or []
    assert [(c.id, c.function.name, orjson.loads(c.function.arguments)) for c in calls] == [
        ("call_a", "first", {"a": 1}), ("call_b", "second", {"b": 2})]


# hand-written: a call's first fragments come before its id and name (a host that streams
# the arguments as soon as the model emits them)
ARGS_BEFORE_ID = sse(
    chat_chunk({"role": "assistant", "tool_calls": [call(0, '{"city"')]}),
    chat_chunk({"tool_calls": [call(0, ': "Pa', id="call_9", type="function", name="weather")]}),
    chat_chunk({"tool_calls": [call(0, 'ris"}')]}),
    chat_chunk({}, "tool_calls"),
) + DONE


def test_translate_arguments_before_the_calls_id_and_name_are_kept() -> None:
    # PITFALLS 37: arguments that arrive before the call's id and name lost (or the id/name)
    out = llm_rx.translate(ARGS_BEFORE_ID, "anthropic", "openai-chat")
    message = anthropic_message(out)
    assert [(b.id, b.name, b.input) for b in message.content] == [
        ("call_9", "weather", {"city": "Paris"})]
