"""The openai-chat decoder on its dialects, beyond the pitfalls."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion

import llm_rx
from llm_rx.errors import WireFormatError
from llm_rx.events import ChoiceEnd, MetadataUpdate, TextDelta
from llm_rx.response import OpaqueBlock, RefusalBlock, TextBlock, ThinkingBlock
from llm_rx.speed import fast_paths

from ..captures import capture
from ..helpers import decode_events, outcome
from ..streams import DONE, chat_chunk, sse


def test_openai_chat_n2_choices_interleaved() -> None:
    body = sse(
        chat_chunk({"role": "assistant", "content": "A1"}, index=0),
        chat_chunk({"role": "assistant", "content": "B1"}, index=1),
        chat_chunk({"content": " A2"}, index=0),
        chat_chunk({"content": " B2"}, index=1),
        chat_chunk({}, "length", index=1),
        chat_chunk({}, "stop", index=0),
        chat_chunk(choices=[], usage={"prompt_tokens": 3, "completion_tokens": 8,
                                      "total_tokens": 11}),
    ) + DONE
    response = llm_rx.reassemble(body, "openai-chat")
    assert response.complete
    assert [c.index for c in response.choices] == [0, 1]
    assert [c.stop_reason for c in response.choices] == ["end_turn", "max_tokens"]
    assert response.text == "A1 A2"
    assert response.stop_reason == "end_turn"
    texts = ["".join(b.text for b in c.content if isinstance(b, TextBlock))
             for c in response.choices]
    assert texts == ["A1 A2", "B1 B2"]
    native = ChatCompletion.model_validate(llm_rx.to_native(response, "openai-chat"))
    assert [(c.message.content, c.finish_reason) for c in native.choices] == [
        ("A1 A2", "stop"), ("B1 B2", "length")
    ]


def test_openai_chat_n2_eof_after_every_choice_finished_is_complete() -> None:
    body = sse(
        chat_chunk({"content": "A"}, index=0),
        chat_chunk({"content": "B"}, index=1),
        chat_chunk({}, "stop", index=0),
    )
    assert not llm_rx.reassemble(body, "openai-chat").complete  # choice 1 never finished
    body += sse(chat_chunk({}, "stop", index=1))
    assert llm_rx.reassemble(body, "openai-chat").complete


def test_openai_chat_mistral_array_content_thinking_then_text() -> None:
    response = llm_rx.reassemble(capture("mistral/magistral-thinking-chunks.sse").data)
    kinds = [b.type for b in response.content]
    assert kinds == ["thinking", "text"]
    native = llm_rx.to_native(response, "openai-chat")
    content = native["choices"][0]["message"]["content"]
    assert [part["type"] for part in content] == ["thinking", "text"]


def test_openai_chat_mistral_indexless_tool_call() -> None:
    response = llm_rx.reassemble(capture("mistral/tool-call.sse").data)
    (call,) = response.tool_calls
    assert call.id == "gSIMJiOkT"
    assert call.arguments == {"location": "San Francisco"}
    assert response.stop_reason == "tool_use"


def test_openai_chat_xai_output_tokens_include_reasoning() -> None:
    usage = llm_rx.reassemble(capture("xai/chat-reasoning-tool-call.sse").data).usage
    assert usage.reasoning_tokens == 196
    assert usage.output_tokens == 26 + 196  # so input + output == the wire's total_tokens 513
    assert usage.input_tokens == 291
    assert usage.cache_read_tokens == 290


def test_openai_chat_groq_usage_from_x_groq() -> None:
    response = llm_rx.reassemble(capture("groq/web-search-executed-tools.sse").data)
    assert response.usage.input_tokens is not None
    assert response.usage.output_tokens is not None


def test_openai_chat_refusal_block_and_stop_reason() -> None:
    response = llm_rx.reassemble(capture("openai/chat-refusal.sse").data)
    (block,) = response.content
    assert isinstance(block, RefusalBlock)
    assert block.text == "I'm sorry, I can't assist with that request."
    assert response.stop_reason == "refusal"
    native = llm_rx.to_native(response, "openai-chat")["choices"][0]
    assert native["finish_reason"] == "stop"  # the provider's own value comes back
    assert native["message"]["content"] is None


def test_openai_chat_unmodelled_delta_fields_pass_through() -> None:
    response = llm_rx.reassemble(capture("groq/web-search-executed-tools.sse").data)
    opaque = [b for b in response.content if isinstance(b, OpaqueBlock)]
    assert opaque
    assert all(b.kind == "delta.executed_tools" for b in opaque)
    message = llm_rx.to_native(response, "openai-chat")["choices"][0]["message"]
    assert message["executed_tools"][0]["output"]


def test_openai_chat_metadata_once_per_change() -> None:
    events, _ = decode_events([capture("perplexity/citations.sse").data])
    updates = [e for e in events if isinstance(e, MetadataUpdate) and "citations" in e.fields]
    assert len(updates) == 1  # repeated identical citations are one update


def test_openai_chat_reasoning_content_to_native_spelling() -> None:
    response = llm_rx.reassemble(capture("deepseek/chat-reasoning-content.sse").data)
    thinking = [b for b in response.content if isinstance(b, ThinkingBlock)]
    message = llm_rx.to_native(response, "openai-chat")["choices"][0]["message"]
    assert message["reasoning_content"] == thinking[0].text
    assert "reasoning" not in message


def test_openai_chat_choice_end_carries_native_value() -> None:
    events, _ = decode_events([capture("openai/chat-max-tokens-length.sse").data])
    (end,) = [e for e in events if isinstance(e, ChoiceEnd)]
    assert (end.stop_reason, end.native) == ("max_tokens", "length")


def test_openai_chat_reencode_anthropic_reply() -> None:
    response = llm_rx.reassemble(capture("anthropic/tool-use-input-json-delta.sse").data)
    native = ChatCompletion.model_validate(llm_rx.to_native(response, "openai-chat"))
    calls = native.choices[0].message.tool_calls or []
    assert len(calls) == 2
    assert native.choices[0].finish_reason == "tool_calls"
    assert native.usage is not None
    assert native.usage.prompt_tokens == response.usage.input_tokens


def test_openai_chat_fast_path_decodes_exactly_as_the_general_path() -> None:
    from ..captures import CAPTURES

    chats = [c for c in CAPTURES if c.provider == "openai-chat"]
    fast = [outcome([c.data], "openai-chat") for c in chats]
    with fast_paths(False):
        slow = [outcome([c.data], "openai-chat") for c in chats]
    assert fast == slow


_TEXTS = st.lists(st.text(max_size=12), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(texts=_TEXTS, ascii_only=st.booleans())
def test_openai_chat_template_path_decodes_any_text_exactly(
    texts: list[str], ascii_only: bool
) -> None:
    # bug class: a byte-template shortcut that mis-cuts a text holding quotes, backslashes,
    # escapes or what looks like the chunk's own suffix
    def frame(delta: dict[str, object], finish: str | None = None) -> bytes:
        chunk = chat_chunk(delta, finish, system_fingerprint="fp_1")
        text = json.dumps(chunk, ensure_ascii=ascii_only, separators=(",", ":"))
        return b"data: " + text.encode() + b"\n\n"

    body = b"".join(
        [frame({"role": "assistant", "content": ""})]
        + [frame({"content": text}) for text in texts]
        + [frame({"content": '"},"logprobs":null,"finish_reason":null}]}'}), frame({}, "stop")]
    ) + DONE
    response = llm_rx.reassemble(body, "openai-chat")
    assert response.text == "".join(texts) + '"},"logprobs":null,"finish_reason":null}]}'
    fast = outcome([body], "openai-chat")
    with fast_paths(False):
        slow = outcome([body], "openai-chat")
    assert fast == slow


def test_openai_chat_legacy_function_call_is_a_tool_call_and_comes_back() -> None:
    body = sse(
        chat_chunk({"role": "assistant", "content": None,
                    "function_call": {"name": "get_weather", "arguments": ""}}),
        chat_chunk({"function_call": {"arguments": '{"city":'}}),
        chat_chunk({"function_call": {"arguments": ' "Paris"}'}}),
        chat_chunk({}, "function_call"),
    ) + DONE
    response = llm_rx.reassemble(body, "openai-chat")
    (call,) = response.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    assert response.stop_reason == "tool_use"
    native = ChatCompletion.model_validate(llm_rx.to_native(response, "openai-chat"))
    message = native.choices[0].message
    assert message.function_call is not None
    assert message.function_call.arguments == '{"city": "Paris"}'
    assert native.choices[0].finish_reason == "function_call"


def test_openai_chat_body_read_as_anthropic_is_refused() -> None:
    with pytest.raises(WireFormatError):
        llm_rx.reassemble(capture("openai/chat-text-basic.sse").data, "anthropic")


@pytest.mark.parametrize("choices", [False, "x", {"0": {}}, 1])
@pytest.mark.parametrize("at", [1, 12])  # (the second chunk: the general path; a late one: fast)
def test_openai_chat_choices_not_a_list_is_a_wire_format_error(choices: object, at: int) -> None:
    # bug class: "choices": false ignored by the general path (read as no choices) but an
    # error on the fast one, or an error whose message depends on which path read the chunk
    chunks = [chat_chunk({"role": "assistant", "content": ""})]
    chunks += [chat_chunk({"content": f" w{i}"}) for i in range(20)]
    chunks[at] = {**chunks[at], "choices": choices}
    body = sse(*chunks, chat_chunk({}, "stop")) + DONE
    events, error = decode_events([body], "openai-chat")
    assert isinstance(error, WireFormatError)
    assert error.message == "a chunk's choices are not a list"
    assert error.raw is not None
    assert '"choices":' in error.raw
    assert sum(isinstance(event, TextDelta) for event in events) == at - 1
    fast = outcome([body], "openai-chat")
    with fast_paths(False):
        assert outcome([body], "openai-chat") == fast


def test_openai_chat_choices_null_is_no_choices() -> None:
    body = sse(chat_chunk({"role": "assistant", "content": "Hi"}),
               {**chat_chunk({}), "choices": None}, chat_chunk({}, "stop")) + DONE
    response = llm_rx.reassemble(body, "openai-chat")
    assert response.complete
    assert response.text == "Hi"


def test_openai_chat_first_created_after_a_false_one_is_kept_on_the_fast_path() -> None:
    # bug class: the learned layout skips "created" (read once), but the general path still
    # waited for a first truthy one: a chunk taken by the layout lost it
    chunks = [chat_chunk({"role": "assistant", "content": ""})]
    chunks += [chat_chunk({"content": f" w{i}"}) for i in range(20)]
    chunks[:2] = [{**chunk, "created": False} for chunk in chunks[:2]]  # (then one of 1)
    body = sse(*chunks, chat_chunk({}, "stop")) + DONE
    fast = outcome([body], "openai-chat")
    with fast_paths(False):
        assert outcome([body], "openai-chat") == fast
    assert llm_rx.reassemble(body, "openai-chat").extra.get("created") == 1


def test_openai_chat_arguments_before_the_id_and_name_wait_for_them() -> None:
    body = sse(
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]}),
        chat_chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                    "function": {"name": "f", "arguments": ": 1}"}}]}),
        chat_chunk({}, "tool_calls"),
    ) + DONE
    (call,) = llm_rx.reassemble(body, "openai-chat").tool_calls
    assert (call.id, call.name, call.raw_arguments, call.arguments) == (
        "call_1", "f", '{"a": 1}', {"a": 1})


def test_openai_chat_arguments_whose_id_never_comes_are_kept_when_cut() -> None:
    body = sse(chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]}))
    response = llm_rx.reassemble(body, "openai-chat")
    assert [(c.id, c.name, c.raw_arguments) for c in response.tool_calls] == [
        (None, None, '{"a"')]
    assert response.stop_reason == "interrupted"
