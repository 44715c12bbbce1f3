"""One test (or more) per bug other stream reassemblers shipped (PITFALLS.md, by number)."""

from __future__ import annotations

import orjson
import pytest

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import BlockStart, TextDelta
from llm_rx.response import TextBlock, ThinkingBlock, ToolCallBlock

from .captures import capture
from .helpers import decode_events, outcome, split_at
from .streams import (
    DONE,
    MESSAGE_STOP,
    anthropic_events,
    block_delta,
    block_start,
    block_stop,
    chat_chunk,
    message_delta,
    message_start,
    sse,
)


def chat(*chunks: object, done: bool = True) -> llm_rx.Response:
    return llm_rx.reassemble(sse(*chunks) + (DONE if done else b""), "openai-chat")


def tool_delta(index: int | None = None, id: str | None = None, name: str | None = None,
               arguments: str | None = None) -> dict[str, object]:
    call: dict[str, object] = {"function": {}}
    if index is not None:
        call["index"] = index
    if id is not None:
        call["id"] = id
        call["type"] = "function"
    if name is not None:
        call["function"] = {"name": name, "arguments": arguments or ""}
    elif arguments is not None:
        call["function"] = {"arguments": arguments}
    return {"tool_calls": [call]}


# -- usage -----------------------------------------------------------------------------------


def test_pitfall_01_openai_usage_chunk_with_empty_choices() -> None:
    response = llm_rx.reassemble(capture("openai/chat-text-basic.sse").data)
    assert response.complete
    assert (response.usage.input_tokens, response.usage.output_tokens) == (14, 30)
    assert response.usage.reasoning_tokens == 0  # reported as 0: a real zero


def test_pitfall_01_openai_usage_null_is_absent_not_zero() -> None:
    response = chat(
        chat_chunk({"role": "assistant", "content": "Hi"}, usage=None),
        chat_chunk({}, "stop", usage=None),
    )
    assert response.complete
    assert response.usage.input_tokens is None
    assert response.usage.output_tokens is None
    assert response.model_dump(mode="json")["usage"]["output_tokens"] is None


def test_pitfall_01_openai_usage_missing_after_error_stays_absent() -> None:
    response = chat(chat_chunk({"content": "Hi"}), {"error": {"message": "boom"}}, done=False)
    assert response.stop_reason == "error"
    assert response.usage.input_tokens is None


def test_pitfall_02_anthropic_message_delta_usage_is_cumulative_not_added() -> None:
    data = anthropic_events(
        message_start(usage={"input_tokens": 100, "cache_creation_input_tokens": 20,
                             "cache_read_input_tokens": 30, "output_tokens": 1}),
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "Hi"}),
        block_stop(0),
        message_delta(input_tokens=100, cache_creation_input_tokens=20,
                      cache_read_input_tokens=30, output_tokens=57),
        MESSAGE_STOP,
    )
    usage = llm_rx.reassemble(data, "anthropic").usage
    assert usage.input_tokens == 150  # 100 fresh + 20 written + 30 read, once
    assert usage.cache_write_tokens == 20
    assert usage.cache_read_tokens == 30
    assert usage.output_tokens == 57  # the last snapshot, not 1 + 57


def test_pitfall_02_anthropic_capture_usage_not_doubled() -> None:
    usage = llm_rx.reassemble(capture("anthropic/thinking-signature.sse").data).usage
    assert (usage.input_tokens, usage.output_tokens) == (43, 282)


def test_pitfall_04_continuous_usage_stats_on_every_chunk_not_summed() -> None:
    response = chat(
        chat_chunk({"content": "a"}, usage={"prompt_tokens": 5, "completion_tokens": 1,
                                            "total_tokens": 6}),
        chat_chunk({"content": "b"}, usage={"prompt_tokens": 5, "completion_tokens": 2,
                                            "total_tokens": 7}),
        chat_chunk({}, "stop", usage={"prompt_tokens": 5, "completion_tokens": 3,
                                      "total_tokens": 8}),
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (5, 3)


def test_pitfall_04_moonshot_usage_in_choice() -> None:
    response = llm_rx.reassemble(capture("moonshot/kimi-reasoning.sse").data)
    assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 12)
    assert response.usage.reasoning_tokens == 7


def test_pitfall_04_usage_on_finish_chunk_and_usage_chunk_counted_once() -> None:
    usage = {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}
    response = chat(
        chat_chunk({"content": "hey"}),
        chat_chunk({}, "stop", usage=usage),
        chat_chunk(choices=[], usage=usage),
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 4)


def test_pitfall_05_absent_usage_is_never_estimated() -> None:
    response = chat(chat_chunk({"content": "a long answer " * 50}), chat_chunk({}, "stop"))
    dumped = response.model_dump(mode="json")["usage"]
    assert set(dumped.values()) == {None}
    assert not response.usage.reported


# -- tool calls ------------------------------------------------------------------------------


def test_pitfall_07_parallel_calls_sharing_an_index_stay_separate() -> None:
    response = chat(
        chat_chunk(tool_delta(0, "call_a", "search", '{"q": "a"}')),
        chat_chunk(tool_delta(0, "call_b", "search", '{"q": "b"}')),
        chat_chunk({}, "tool_calls"),
    )
    calls = response.tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("call_a", {"q": "a"}), ("call_b", {"q": "b"})]


def test_pitfall_08_interleaved_fragments_without_ids_go_by_index() -> None:
    response = chat(
        chat_chunk(tool_delta(0, "call_a", "search_circular")),
        chat_chunk(tool_delta(1, "call_b", "lookup")),
        chat_chunk(tool_delta(0, arguments='{"q":')),
        chat_chunk(tool_delta(1, arguments='{"id":')),
        chat_chunk(tool_delta(0, arguments=' "x"}')),
        chat_chunk(tool_delta(1, arguments=" 7}")),
        chat_chunk({}, "tool_calls"),
    )
    calls = response.tool_calls
    assert [c.name for c in calls] == ["search_circular", "lookup"]
    assert [c.arguments for c in calls] == [{"q": "x"}, {"id": 7}]


def test_pitfall_09_a_parseable_prefix_is_not_a_finished_call() -> None:
    # '{"path": "/tmp"}' parses, but the call had more to say when the stream was cut.
    response = chat(
        chat_chunk(tool_delta(0, "call_a", "delete", '{"path": "/tmp"}')),
        done=False,
    )
    assert not response.complete
    assert response.stop_reason == "interrupted"
    (call,) = response.tool_calls
    assert call.arguments is None
    assert call.raw_arguments == '{"path": "/tmp"}'


def test_pitfall_09_anthropic_call_cut_inside_input_json_delta() -> None:
    data = anthropic_events(
        message_start(),
        block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "rm", "input": {}}),
        block_delta(0, {"type": "input_json_delta", "partial_json": '{"path": "/"}'}),
    )
    response = llm_rx.reassemble(data, "anthropic")
    assert not response.complete
    (call,) = response.tool_calls
    assert call.arguments is None
    assert call.raw_arguments == '{"path": "/"}'


def test_pitfall_10_unparseable_arguments_kept_raw_not_replaced() -> None:
    response = chat(
        chat_chunk(tool_delta(0, "call_a", "f", '{"a": tru')),
        chat_chunk({}, "tool_calls"),
    )
    (call,) = response.tool_calls
    assert call.arguments is None
    assert call.raw_arguments == '{"a": tru'
    assert response.model_dump(mode="json")["content"][0]["arguments"] is None


def test_pitfall_11_zero_argument_call_is_empty_object() -> None:
    response = chat(chat_chunk(tool_delta(0, "call_a", "now")), chat_chunk({}, "tool_calls"))
    (call,) = response.tool_calls
    assert call.arguments == {}
    assert call.raw_arguments == ""


def test_pitfall_11_parallel_noarg_capture() -> None:
    response = llm_rx.reassemble(capture("openai/chat-parallel-noarg-tools.sse").data)
    assert [c.arguments for c in response.tool_calls] == [{}, {}]


# -- reasoning and signatures ----------------------------------------------------------------


def test_pitfall_12_thinking_without_signature_is_kept() -> None:
    data = anthropic_events(
        message_start(),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        block_delta(0, {"type": "thinking_delta", "thinking": "Let me think"}),
        block_stop(0),
        message_delta("max_tokens"),
        MESSAGE_STOP,
    )
    response = llm_rx.reassemble(data, "anthropic")
    assert response.stop_reason == "max_tokens"
    (block,) = response.content
    assert isinstance(block, ThinkingBlock)
    assert block.text == "Let me think"
    assert block.signature is None


def test_pitfall_12_many_thinking_deltas_are_one_block() -> None:
    response = llm_rx.reassemble(capture("anthropic/thinking-signature.sse").data)
    thinking = [b for b in response.content if isinstance(b, ThinkingBlock)]
    assert len(thinking) == 1
    assert thinking[0].signature


def test_pitfall_13_think_text_think_order_and_signatures_preserved() -> None:
    data = anthropic_events(
        message_start(),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        block_delta(0, {"type": "thinking_delta", "thinking": "first"}),
        block_delta(0, {"type": "signature_delta", "signature": "SIG-1"}),
        block_stop(0),
        block_start(1, {"type": "redacted_thinking", "data": "REDACTED-1"}),
        block_stop(1),
        block_start(2, {"type": "text", "text": ""}),
        block_delta(2, {"type": "text_delta", "text": "middle"}),
        block_stop(2),
        block_start(3, {"type": "thinking", "thinking": "", "signature": ""}),
        block_delta(3, {"type": "thinking_delta", "thinking": "second"}),
        block_delta(3, {"type": "signature_delta", "signature": "SIG-2"}),
        block_stop(3),
        message_delta(),
        MESSAGE_STOP,
    )
    content = llm_rx.reassemble(data, "anthropic").model_dump(mode="json")["content"]
    assert [(b["type"], b["text"], b["signature"]) for b in content] == [
        ("thinking", "first", "SIG-1"),
        ("thinking", "", "REDACTED-1"),
        ("text", "middle", None),
        ("thinking", "second", "SIG-2"),
    ]
    assert [b.get("redacted") for b in content] == [False, True, None, False]


def test_pitfall_14_redacted_thinking_kept_verbatim() -> None:
    data = capture("anthropic/redacted-thinking.sse").data
    wire = [
        orjson.loads(line[6:])["content_block"]["data"]
        for line in data.split(b"\n")
        if line.startswith(b"data: ") and b'"redacted_thinking"' in line
    ]
    response = llm_rx.reassemble(data)
    redacted = [b for b in response.content if isinstance(b, ThinkingBlock) and b.redacted]
    assert [b.signature for b in redacted] == wire
    assert all(b.text == "" for b in redacted)
    native = llm_rx.to_native(response, "anthropic")["content"]
    assert [b["data"] for b in native if b["type"] == "redacted_thinking"] == wire


def test_pitfall_15_thinking_and_signature_byte_identical() -> None:
    data = capture("anthropic/thinking-signature.sse").data
    frames = [orjson.loads(line[6:]) for line in data.split(b"\n") if line.startswith(b"data: ")]
    thinking = "".join(
        f["delta"]["thinking"] for f in frames
        if f["type"] == "content_block_delta" and f["delta"]["type"] == "thinking_delta"
    )
    (signature,) = [
        f["delta"]["signature"] for f in frames
        if f["type"] == "content_block_delta" and f["delta"]["type"] == "signature_delta"
    ]
    block = llm_rx.reassemble(data).content[0]
    assert isinstance(block, ThinkingBlock)
    assert block.text == thinking
    assert block.signature == signature
    native = llm_rx.to_native(llm_rx.reassemble(data), "anthropic")["content"][0]
    assert (native["thinking"], native["signature"]) == (thinking, signature)


# -- framing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["openai/chat-tool-call-strict.sse", "anthropic/thinking-signature.sse"]
)
def test_pitfall_19_frames_split_at_every_offset(name: str) -> None:
    data = capture(name).data[:6000]
    whole = outcome([data])
    for offset in range(1, len(data), 7):
        assert outcome(split_at(data, [offset])) == whole


def test_pitfall_19_many_frames_in_one_chunk() -> None:
    data = capture("openai/chat-parallel-tool-calls.sse").data
    assert outcome([data]) == outcome(split_at(data, range(0, len(data), 4096)))


@pytest.mark.parametrize("ending", [b"\r\n", b"\r"], ids=["crlf", "cr"])
def test_pitfall_20_line_endings_do_not_matter(ending: bytes) -> None:
    data = capture("anthropic/text-vercel.sse").data
    assert outcome([data.replace(b"\n", ending)]) == outcome([data])


def test_pitfall_20_comments_pings_multiline_data_and_no_final_blank_line() -> None:
    first = orjson.dumps(chat_chunk({"content": "Hello"})).decode()
    cut = first.index(',"model"')  # between two members: the joining "\n" is JSON whitespace
    head, tail = first[:cut], first[cut:]
    body = (
        ": keep-alive\n\n"
        f"data: {head}\ndata:{tail}\n\n"  # one JSON object over two data lines
        "event: ping\ndata: {}\n\n"
        ": OPENROUTER PROCESSING\n\n"
        + sse(chat_chunk({}, "stop")).decode()
        + "data: [DONE]"  # no final newline at all
    ).encode()
    response = llm_rx.reassemble(body, "openai-chat")
    assert response.text == "Hello"
    assert response.complete


def test_pitfall_20_anthropic_ping_events_ignored() -> None:
    response = llm_rx.reassemble(capture("anthropic/redacted-thinking.sse").data)
    assert response.complete
    assert not any(b.type == "opaque" for b in response.content)


# -- truncation and terminal state -----------------------------------------------------------


def test_pitfall_21_cut_before_finish_reason_is_never_stop() -> None:
    response = chat(chat_chunk({"content": "The answer is"}), done=False)
    assert response.stop_reason == "interrupted"
    assert not response.complete
    assert response.text == "The answer is"
    assert response.error is not None
    assert response.error.kind == "incomplete"
    assert llm_rx.to_native(response, "openai-chat")["choices"][0]["finish_reason"] is None


def test_pitfall_22_clean_eof_without_finish_or_done_is_incomplete() -> None:
    response = chat(chat_chunk({"content": "Hi"}), chat_chunk({"content": "!"}), done=False)
    assert not response.complete
    assert response.stop_reason == "interrupted"


def test_pitfall_22_done_without_finish_reason_is_complete_and_inferred() -> None:
    response = chat(chat_chunk({"content": "Hi"}))
    assert response.complete
    assert response.stop_reason == "end_turn"
    assert response.stop_details is not None
    assert "inferred" in response.stop_details


def test_pitfall_22_done_without_finish_reason_after_tool_calls_is_tool_use() -> None:
    # Snowflake: empty ids, no finish_reason, then [DONE].
    response = chat(chat_chunk({"tool_calls": [{"index": 0, "id": "", "type": "function",
                                                "function": {"name": "f", "arguments": "{}"}}]}))
    assert response.complete
    assert response.stop_reason == "tool_use"
    assert response.tool_calls[0].id is None


def test_pitfall_22_finish_reason_without_done_is_complete() -> None:
    response = chat(chat_chunk({"content": "Hi"}), chat_chunk({}, "stop"), done=False)
    assert response.complete
    assert response.stop_reason == "end_turn"


def test_pitfall_24_anthropic_error_event_midstream() -> None:
    response = llm_rx.reassemble(capture("anthropic/error-overloaded-midstream.synthetic.sse").data)
    assert response.stop_reason == "error"
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "provider"
    assert "overloaded_error" in response.error.message
    assert response.error.raw is not None
    assert "overloaded_error" in response.error.raw
    assert response.text  # what arrived before the error is kept


def test_pitfall_24_duplicate_message_start_same_id_is_harmless() -> None:
    response = llm_rx.reassemble(capture("anthropic/duplicate-message-start.sse").data)
    assert response.complete
    assert response.text == "Hello, World!"


def test_pitfall_24_second_message_id_while_open_starts_another_response() -> None:
    # a spliced stream: the open message ends there, not complete; never merged with the next
    data = anthropic_events(
        message_start("msg_1"),
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "kept"}),
        message_start("msg_2"),
        block_stop(0),
        message_delta(),
        MESSAGE_STOP,
    )
    response = llm_rx.reassemble(data, "anthropic")
    assert response.text == "kept"
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "protocol"
    assert "msg_2" in response.error.message
    first, second = llm_rx.from_bytes(data, provider="anthropic").pipe(
        lxo.to_responses()).run()
    assert (first.id, first.text, first.complete, first.stop_reason) == (
        "msg_1", "kept", False, "interrupted")
    assert second.id == "msg_2"
    assert second.error is not None
    assert second.error.kind == "protocol"  # (its block 0 never started)
    assert second.error.raw is not None
    assert "content_block_stop" in second.error.raw


# -- metadata --------------------------------------------------------------------------------


def test_pitfall_25_repeated_finish_reason_and_model_not_concatenated() -> None:
    response = chat(
        chat_chunk({"content": "a"}),
        chat_chunk({}, "stop"),
        chat_chunk({}, "stop"),
    )
    assert response.stop_reason == "end_turn"
    assert response.model == "gpt-test"
    assert llm_rx.to_native(response, "openai-chat")["choices"][0]["finish_reason"] == "stop"


def test_pitfall_25_openrouter_capture_with_two_finish_chunks() -> None:
    response = llm_rx.reassemble(capture("openrouter/web-search-annotations.sse").data)
    native = llm_rx.to_native(response, "openai-chat")
    assert native["choices"][0]["finish_reason"] == "stop"
    assert native["model"] == response.model
    assert "stopstop" not in orjson.dumps(native).decode()


@pytest.mark.parametrize(
    ("name", "served"),
    [
        ("openai/chat-text-basic.sse", "gpt-4o-2024-08-06"),
        ("anthropic/thinking-signature.sse", "claude-sonnet-4-20250514"),
    ],
)
def test_pitfall_26_served_model_wins(name: str, served: str) -> None:
    events, _ = decode_events([capture(name).data])
    assert llm_rx.reassemble(capture(name).data).model == served
    assert events[0].model == served  # type: ignore[union-attr]


def test_pitfall_27_finish_reason_end_is_a_normal_stop() -> None:
    response = chat(chat_chunk({"content": "ok"}), chat_chunk({}, "end"))
    assert response.complete
    assert response.stop_reason == "end_turn"


def test_pitfall_27_azure_content_filter_chunks() -> None:
    response = llm_rx.reassemble(capture("azure/chat-model-router.sse").data)
    assert response.complete
    assert response.model  # the empty model of the prompt-filter chunk is not the served one
    assert "prompt_filter_results" in response.extra


@pytest.mark.parametrize(
    "name",
    [
        "deepseek/chat-reasoning-content.sse",
        "moonshot/kimi-reasoning.sse",
        "groq/web-search-executed-tools.sse",
        "openrouter/claude-reasoning-text-signature.sse",
        "mistral/magistral-thinking-chunks.sse",
    ],
)
def test_pitfall_27_reasoning_dialects_become_thinking(name: str) -> None:
    response = llm_rx.reassemble(capture(name).data)
    thinking = [b for b in response.content if isinstance(b, ThinkingBlock)]
    assert len(thinking) == 1
    assert thinking[0].text
    assert "<think>" not in response.text
    assert response.text


def test_pitfall_27_openrouter_reasoning_not_doubled_and_signed() -> None:
    data = capture("openrouter/claude-reasoning-text-signature.sse").data
    frames = [orjson.loads(line[6:]) for line in data.split(b"\n")
              if line.startswith(b"data: {")]
    plain = "".join(f["choices"][0]["delta"].get("reasoning") or "" for f in frames
                    if f.get("choices"))
    (block,) = [b for b in llm_rx.reassemble(data).content if isinstance(b, ThinkingBlock)]
    assert block.text == plain  # reasoning and reasoning_details carry the same text once
    assert block.signature


def test_pitfall_27_think_tags_left_as_the_provider_sent_them() -> None:
    response = llm_rx.reassemble(capture("huggingface/together-deepseek-r1-think-tags.sse").data)
    assert response.text.lstrip().startswith("<think>")


def test_text_delta_events_keep_block_index() -> None:
    events, _ = decode_events([capture("anthropic/text-basic.sse").data])
    starts = [e for e in events if isinstance(e, BlockStart)]
    texts = [e for e in events if isinstance(e, TextDelta)]
    assert [s.index for s in starts] == [0]
    assert {t.index for t in texts} == {0}
    block = llm_rx.reassemble(capture("anthropic/text-basic.sse").data).content[0]
    assert isinstance(block, TextBlock)
    assert not isinstance(block, ToolCallBlock)
