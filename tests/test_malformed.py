"""Frames of valid JSON in a shape the wire never sends, one test per class the fuzzer found.

Each class once escaped ``reassemble()`` as a ``TypeError``, ``AttributeError``,
``pydantic.ValidationError`` or ``RecursionError`` (or, after the error boundary, as an error
with no frame to show). The decoders now check the values where they enter: the result is a
``WireFormatError`` carrying the offending frame, and what arrived before it is kept.
"""

from __future__ import annotations

import pytest

import llm_rx
from llm_rx.response import Response, TextBlock
from llm_rx.wire.eventstream import encode_message
from llm_rx.wire.registry import SNIFF_LIMIT
from llm_rx.wire.sse import SSEDecoder, SSEEvent

from .captures import capture
from .fuzz.checks import fast_paths_off
from .helpers import outcome

_ANTHROPIC_START = b'data: {"type":"message_start","message":{"id":"m","model":"c"}}\n\n'
_OPENAI_FIRST = b'data: {"id":"c","model":"g","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'


def _sse(*payloads: bytes) -> bytes:
    return b"".join(b"data: " + payload + b"\n\n" for payload in payloads)


def _refused(body: bytes, provider: str, frame: bytes, names: str) -> Response:
    """The Response of a reply whose frame ``frame`` is malformed: incomplete, a wire-format
    error that carries that frame and whose message ``names`` the value at fault."""
    response = llm_rx.reassemble(body, provider)
    assert response.complete is False
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "wire_format"
    assert names in response.error.message
    assert response.error.raw == frame.decode()
    return response


# -- Anthropic ------------------------------------------------------------------------------


def test_anthropic_text_delta_text_not_a_string() -> None:
    good = b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}'
    bad = b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":{}}}'
    response = _refused(_ANTHROPIC_START + _sse(good, bad), "anthropic", bad, "text")
    assert response.content == [TextBlock(text="Hi")]


def test_anthropic_tool_use_name_not_a_string() -> None:
    bad = (b'{"type":"content_block_start","index":0,'
           b'"content_block":{"type":"tool_use","id":"t","name":["f"]}}')
    _refused(_ANTHROPIC_START + _sse(bad), "anthropic", bad, "name")


def test_anthropic_unknown_frame_kind_does_not_depend_on_chunking() -> None:
    # bug class: an empty "type" took the SSE event name instead, which the framer may drop
    body = _ANTHROPIC_START + b'event: content_block_stop\ndata: {"type":""}\n\n'
    single = [body[i : i + 1] for i in range(len(body))]
    assert outcome(single, "anthropic") == outcome([body], "anthropic")


# -- Gemini ---------------------------------------------------------------------------------


def test_gemini_array_candidates_not_a_list() -> None:
    bad = b'{"candidates":true}'
    _refused(b"[" + bad + b"]", "gemini", bad, "candidates")


def test_gemini_array_part_not_an_object() -> None:
    good = b'{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}'
    bad = b'{"candidates":[{"content":{"parts":["Hi"]}}]}'
    response = _refused(b"[" + good + b",\n" + bad + b"]", "gemini", bad, "part")
    assert response.content == [TextBlock(text="Hi")]


def test_gemini_array_bad_separator_same_error_in_any_chunking() -> None:
    # bug class: the evidence kept was the rest of the chunk, so it depended on the chunking
    body = b'[{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}}x, {"a": 1}'
    single = [body[i : i + 1] for i in range(len(body))]
    assert outcome(single, "gemini") == outcome([body], "gemini")


def test_gemini_content_not_an_object() -> None:
    bad = b'{"candidates":[{"content":[1]}]}'
    _refused(_sse(bad), "gemini", bad, "content")


@pytest.mark.parametrize("number", [b"1180591620717411303424", b'"a"', b"1.5"])
def test_gemini_candidate_index_not_an_integer(number: bytes) -> None:
    good = b'{"candidates":[{"content":{"parts":[{"text":"Hi"}]},"index":0}]}'
    bad = b'{"candidates":[{"content":{"parts":[{"text":"Hi"}]},"index":' + number + b"}]}"
    _refused(_sse(good, bad), "gemini", bad, "index")


def test_gemini_finish_message_not_a_string() -> None:
    bad = b'{"candidates":[{"finishReason":"STOP","finishMessage":{"a":1}}]}'
    _refused(_sse(b'{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}', bad), "gemini",
             bad, "finishMessage")


def test_gemini_function_call_name_not_a_string() -> None:
    bad = b'{"candidates":[{"content":{"parts":[{"functionCall":{"name":["f"]}}]}}]}'
    _refused(_sse(b'{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}', bad), "gemini",
             bad, "name")


def test_gemini_usage_metadata_not_an_object() -> None:
    bad = b'{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}],"usageMetadata":[1]}'
    _refused(b"[" + bad + b"]", "gemini", bad, "usageMetadata")


# -- OpenAI chat and Responses ----------------------------------------------------------------


def test_openai_chat_choice_index_not_an_integer() -> None:
    bad = b'{"id":"c","model":"g","choices":[{"index":"a","delta":{"content":"x"}}]}'
    response = _refused(_OPENAI_FIRST + _sse(bad), "openai-chat", bad, "index")
    assert response.content == [TextBlock(text="Hi")]


def test_openai_chat_refusal_not_a_string() -> None:
    bad = b'{"id":"c","model":"g","choices":[{"index":0,"delta":{"refusal":{"a":1}}}]}'
    _refused(_OPENAI_FIRST + _sse(bad), "openai-chat", bad, "refusal")


def test_openai_chat_tool_call_name_not_a_string() -> None:
    bad = (b'{"id":"c","model":"g","choices":[{"index":0,"delta":{"tool_calls":'
           b'[{"index":0,"id":"t","function":{"name":5,"arguments":""}}]}}]}')
    _refused(_OPENAI_FIRST + _sse(bad), "openai-chat", bad, "name")


def test_openai_chat_choices_not_a_list_same_with_the_fast_path_off() -> None:
    # bug class: the fast path took len() of any "choices", the general path skipped a false one
    data = capture("openai/chat-gpt41-nano-text.sse").data
    frames = data.split(b"\n\n")
    frames[40] = frames[40].replace(frames[40][frames[40].index(b'"choices":') :
                                              frames[40].index(b',"usage"')], b'"choices":false')
    body = b"\n\n".join(frames)
    with fast_paths_off():
        slow = outcome([body], "openai-chat")
    assert outcome([body], "openai-chat") == slow


_RESPONSES_START = _sse(b'{"type":"response.created","response":{"id":"r","model":"g"}}')


def test_openai_responses_text_delta_not_a_string() -> None:
    bad = b'{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":[1]}'
    _refused(_RESPONSES_START + _sse(bad), "openai-responses", bad, "delta")


def test_openai_responses_function_call_name_not_a_string() -> None:
    bad = (b'{"type":"response.output_item.added","output_index":0,'
           b'"item":{"type":"function_call","id":"i","call_id":"c","name":{}}}')
    _refused(_RESPONSES_START + _sse(bad), "openai-responses", bad, "name")


# -- Ollama and Bedrock -----------------------------------------------------------------------


def test_ollama_tool_call_name_not_a_string() -> None:
    first = b'{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}\n'
    bad = (b'{"model":"m","message":{"role":"assistant","content":"",'
           b'"tool_calls":[{"function":{"name":[1],"arguments":{}}}]},"done":false}')
    _refused(first + bad + b"\n", "ollama", bad, "name")


def _bedrock(event: str, payload: bytes) -> bytes:
    return encode_message(
        {":event-type": event, ":content-type": "application/json", ":message-type": "event"},
        payload,
    )


def test_bedrock_tool_use_name_not_a_string() -> None:
    bad = b'{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t","name":7}}}'
    body = _bedrock("messageStart", b'{"role":"assistant"}') + _bedrock("contentBlockStart", bad)
    _refused(body, "bedrock-converse", bad, "name")


def test_eventstream_bad_prelude_same_error_in_any_chunking() -> None:
    # bug class: the evidence kept was the rest of the chunk, so it depended on the chunking
    good = _bedrock("messageStart", b'{"role":"assistant"}')
    bad = bytearray(_bedrock("messageStop", b'{"stopReason":"end_turn"}'))
    bad[9] ^= 0x01  # inside the prelude's CRC
    body = good + bytes(bad) + good
    pieces = [body[:len(good) + 20], body[len(good) + 20 :]]
    assert outcome(pieces, "bedrock-converse") == outcome([body], "bedrock-converse")


# -- Any provider ---------------------------------------------------------------------------


def test_sniffing_decides_on_the_same_bytes_in_any_chunking() -> None:
    # bug class: a marker past the sniffing limit counted in one large chunk, not in small ones
    body = b": " + b"x" * (SNIFF_LIMIT + 10_000) + b"\n\n" + _OPENAI_FIRST + b"data: [DONE]\n\n"
    pieces = [body[start : start + 4096] for start in range(0, len(body), 4096)]
    assert outcome(pieces) == outcome([body])


def _deep(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


_DEEP_BODIES = {  # a kept value (metadata, an opaque frame) nested 200 levels deep
    "anthropic": lambda deep: _ANTHROPIC_START + _sse(b'{"type":"x","v":' + deep + b"}"),
    "openai-chat": lambda deep: _OPENAI_FIRST + _sse(
        b'{"id":"c","model":"g","v":' + deep + b',"choices":[]}'),
    "openai-responses": lambda deep: _RESPONSES_START + _sse(b'{"type":"x","v":' + deep + b"}"),
    "gemini": lambda deep: b'[{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]},\n'
                           b'{"v":' + deep + b"}]",
    "ollama": lambda deep: b'{"model":"m","message":{"role":"assistant","content":"Hi"},'
                           b'"done":false}\n{"model":"m","v":' + deep + b',"done":false}\n',
    "bedrock-converse": lambda deep: _bedrock("messageStart", b'{"role":"assistant"}')
    + _bedrock("x", b'{"v":' + deep + b"}"),
}


@pytest.mark.parametrize("provider", sorted(_DEEP_BODIES))
def test_frame_nested_too_deep_is_a_wire_format_error(provider: str) -> None:
    response = llm_rx.reassemble(_DEEP_BODIES[provider](_deep(200)), provider)
    assert response.error is not None
    assert response.error.kind == "wire_format"
    assert "nested deeper" in response.error.message
    assert response.model_dump(mode="json")["complete"] is False
    llm_rx.to_native(response, provider)


@pytest.mark.parametrize("provider", sorted(_DEEP_BODIES))
def test_frame_nested_within_the_limit_is_kept(provider: str) -> None:
    response = llm_rx.reassemble(_DEEP_BODIES[provider](_deep(100)), provider)
    assert response.error is None or "nested" not in response.error.message
    assert "1" in str(response.model_dump(mode="json"))
    llm_rx.to_native(response, provider)


def test_sse_empty_event_name_is_a_message_in_any_chunking() -> None:
    # bug class: the batch path named an event "" where the general rules say "message"
    body = b"event: \ndata: :\n\n"
    decoder = SSEDecoder()
    assert decoder.decode(body) == [SSEEvent("message", b":")]
    single = SSEDecoder()
    assert [e for byte in body for e in single.decode(bytes([byte]))] == [SSEEvent("message", b":")]


@pytest.mark.parametrize(
    ("name", "provider", "field"),
    [("openai/chat-gpt41-nano-text.sse", "openai-chat", b'"obfuscation":"'),
     ("ollama/chat-gemma3-text.ndjson", "ollama", b'"model":"')],
)
def test_dropped_field_nested_deep_same_with_the_fast_path_off(
    name: str, provider: str, field: bytes
) -> None:
    # bug class: the shortcut skipped a field no reply keeps, the general path refused the
    # frame for that field's nesting
    data = capture(name).data
    start = data.index(field, len(data) // 2) + len(field) - 1
    end = data.index(b'"', start + 1) + 1
    body = data[:start] + _deep(200) + data[end:]
    with fast_paths_off():
        slow = outcome([body], provider)
    assert outcome([body], provider) == slow
    assert slow[1] is None  # (nothing kept is nested too deep)


def test_openai_chat_choice_index_false_same_with_the_fast_path_off() -> None:
    # bug class: the shortcut compared the index (false == 0), the general path refused it
    data = capture("openai/chat-gpt41-nano-text.sse").data
    at = data.index(b'"index":0', len(data) // 2)
    body = data[:at] + b'"index":false' + data[at + len(b'"index":0') :]
    with fast_paths_off():
        slow = outcome([body], "openai-chat")
    assert outcome([body], "openai-chat") == slow


def test_openai_chat_tool_call_index_an_object_same_with_the_fast_path_off() -> None:
    # bug class: the shortcut looked an unhashable index up (a TypeError), the general path
    # refused it by name
    data = capture("openai/chat-parallel-tool-calls.sse").data
    marker = b'"tool_calls":[{"index":0,"function":{"arguments":'
    at = data.index(marker, data.index(marker) + 1) + len(b'"tool_calls":[{"index":')
    body = data[:at] + b'{"a":1}' + data[at + 1 :]
    with fast_paths_off():
        slow = outcome([body], "openai-chat")
    assert outcome([body], "openai-chat") == slow
    assert slow[-1] is not None
