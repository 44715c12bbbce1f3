"""Details a translation or a non-stream body must give back as they came: a Gemini call
without arguments, OpenRouter's plain ``"reasoning": null`` beside an encrypted entry, the
``index`` of DeepSeek's tool calls in its own non-stream body."""

from __future__ import annotations

import orjson
from openai.types.chat import ChatCompletion

import llm_rx


def _gemini(*parts: dict[str, object]) -> bytes:
    chunk = {"candidates": [{"content": {"parts": list(parts), "role": "model"},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1,
                               "totalTokenCount": 4},
             "modelVersion": "gemini-2.5-flash"}
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def test_a_gemini_call_without_arguments_goes_back_without_args() -> None:
    body = _gemini({"functionCall": {"name": "now"}})
    response = llm_rx.reassemble(body)
    assert response.tool_calls[0].raw_arguments == ""
    stream = llm_rx.translate(body, to="gemini")
    assert b'"args"' not in stream
    assert llm_rx.reassemble(stream) == response
    native = llm_rx.to_native(response, "gemini")
    assert native["candidates"][0]["content"]["parts"] == [{"functionCall": {"name": "now"}}]
    assert llm_rx.from_native(native, "gemini").tool_calls[0].raw_arguments == ""


def test_a_gemini_call_with_empty_arguments_keeps_them() -> None:
    body = _gemini({"functionCall": {"name": "now", "args": {}}})
    response = llm_rx.reassemble(body)
    assert response.tool_calls[0].raw_arguments == "{}"
    assert llm_rx.reassemble(llm_rx.translate(body, to="gemini")) == response


def _openrouter(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {"id": "gen-1", "provider": "OpenAI", "model": "openai/gpt-5",
             "object": "chat.completion.chunk", "created": 1,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                          "native_finish_reason": finish}]}
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


ENCRYPTED = {"type": "reasoning.encrypted", "data": "gAAAAB", "id": "rs_1",
             "format": "openai-responses-v1", "index": 0}


def test_openrouter_null_reasoning_beside_an_encrypted_entry_survives() -> None:
    body = b"".join([
        _openrouter({"role": "assistant", "content": "", "reasoning": None,
                     "reasoning_details": [ENCRYPTED]}),
        _openrouter({"role": "assistant", "content": "Hi", "reasoning": None}),
        _openrouter({"role": "assistant", "content": "", "reasoning": None}, "stop"),
        b"data: [DONE]\n\n",
    ])
    response = llm_rx.reassemble(body)
    again = llm_rx.translate(body, to="openai-chat")
    assert b'"reasoning":null,"reasoning_details":[{"type":"reasoning.encrypted"' in again
    assert llm_rx.reassemble(again) == response


def _deepseek(choices: list[dict[str, object]], **fields: object) -> bytes:
    chunk = {"id": "47ddf0a2", "object": "chat.completion.chunk", "created": 1751567181,
             "model": "deepseek-chat", "system_fingerprint": "fp_8802369eaa_prod0623_fp8_kvcache",
             "choices": choices, **fields}
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def test_to_native_keeps_a_deepseek_tool_calls_index() -> None:
    call = {"index": 0, "id": "call_0_85f3", "type": "function",
            "function": {"name": "weather", "arguments": ""}}
    body = b"".join([
        _deepseek([{"index": 0, "delta": {"role": "assistant", "content": ""},
                    "logprobs": None, "finish_reason": None}]),
        _deepseek([{"index": 0, "delta": {"tool_calls": [call]}, "logprobs": None,
                    "finish_reason": None}]),
        _deepseek([{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": '{"city":"Paris"}'}}]},
            "logprobs": None, "finish_reason": None}]),
        _deepseek([{"index": 0, "delta": {"content": ""}, "logprobs": None,
                    "finish_reason": "tool_calls"}],
                  usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                         "prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 10}),
        b"data: [DONE]\n\n",
    ])
    response = llm_rx.reassemble(body)
    native = llm_rx.to_native(response, "openai-chat")
    calls = native["choices"][0]["message"]["tool_calls"]
    assert [(call["index"], call["id"]) for call in calls] == [(0, "call_0_85f3")]
    assert llm_rx.from_native(native, "openai-chat") == response
    ChatCompletion.model_validate(native)
    # (another host's body has no index: OpenAI's own)
    openai = llm_rx.to_native(response.model_copy(update={"model": "gpt-4o", "usage":
                                                          response.usage.model_copy(
                                                              update={"native": None})}),
                              "openai-chat")
    assert "index" not in openai["choices"][0]["message"]["tool_calls"][0]
