"""Generated provider streams for the benchmarks: realistic shapes, deterministic content."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import orjson

_WORDS = ("the", " quick", " brown", " fox", " jumps", " over", " lazy", " dog", ",", " and",
          " then", " some", " more", " tokens", " arrive", " here", ".", "\n", " é", " 😀")


def _word(i: int) -> str:
    return _WORDS[(i * 7 + i // 3) % len(_WORDS)]


def _sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + orjson.dumps(payload) + b"\n\n"


def _obfuscation(i: int) -> str:
    """A chunk's ``obfuscation`` padding: letters and digits, of a length that varies."""
    return base64.b64encode(hashlib.sha256(str(i).encode()).digest()).decode().translate(
        {ord("+"): None, ord("/"): None, ord("="): None})[: 4 + i % 11]


def openai_chat(n: int = 20_000, obfuscation: bool = False) -> bytes:
    """``n`` text chunks, the finish chunk, the usage chunk and ``[DONE]``, as OpenAI sends;
    with ``obfuscation``, each chunk also ends with its random ``"obfuscation"`` string, as
    OpenAI now sends them by default."""
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1727346168,
            "model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_5050236cbd"}

    def chunk(i: int, payload: dict[str, Any]) -> bytes:
        return _sse({**base, **payload, "obfuscation": _obfuscation(i)} if obfuscation
                    else {**base, **payload})

    parts = [chunk(-1, {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "",
                                                           "refusal": None},
                                     "logprobs": None, "finish_reason": None}]})]
    for i in range(n):
        parts.append(chunk(i, {"choices": [{"index": 0, "delta": {"content": _word(i)},
                                            "logprobs": None, "finish_reason": None}]}))
    parts.append(chunk(n, {"choices": [{"index": 0, "delta": {}, "logprobs": None,
                                        "finish_reason": "stop"}]}))
    parts.append(chunk(n + 1, {"choices": [], "usage": {
        "prompt_tokens": 14, "completion_tokens": n, "total_tokens": n + 14,
        "completion_tokens_details": {"reasoning_tokens": 0}}}))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def openai_tool_calls(calls: int = 8, fragments: int = 2_500) -> bytes:
    """Parallel tool calls whose arguments arrive in 5-character fragments, interleaved."""
    base = {"id": "chatcmpl-tools", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-4o-mini"}
    parts = [_sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                              "content": None},
                                        "finish_reason": None}]})]
    arguments = [orjson.dumps({"query": "".join(_word(i + c) for i in range(fragments))})
                 .decode() for c in range(calls)]
    for c in range(calls):
        parts.append(_sse({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": c, "id": f"call_{c}", "type": "function",
             "function": {"name": f"tool_{c}", "arguments": ""}}]}, "finish_reason": None}]}))
    longest = max(len(a) for a in arguments)
    for start in range(0, longest, 5):
        for c in range(calls):
            piece = arguments[c][start : start + 5]
            if piece:
                parts.append(_sse({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": c, "function": {"arguments": piece}}]}, "finish_reason": None}]}))
    parts.append(_sse({**base, "choices": [{"index": 0, "delta": {},
                                            "finish_reason": "tool_calls"}]}))
    parts.append(_sse({**base, "choices": [], "usage": {"prompt_tokens": 50,
                                                        "completion_tokens": 999,
                                                        "total_tokens": 1049}}))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def anthropic(n: int = 20_000) -> bytes:
    """About ``n`` events: thinking with its signature, text, then a tool call."""
    thinking, text, tool = n * 3 // 10, n * 6 // 10, n // 10
    signature = base64.b64encode(hashlib.sha512(b"bench").digest() * 6).decode()
    parts = [_sse({"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-20250514", "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": 43, "cache_creation_input_tokens": 0,
                                         "cache_read_input_tokens": 0, "output_tokens": 1}}},
        "message_start")]
    parts.append(_sse({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                      "content_block_start"))
    for i in range(thinking):
        parts.append(_sse({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "thinking_delta", "thinking": _word(i)}},
                          "content_block_delta"))
    parts.append(_sse({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "signature_delta", "signature": signature}},
                      "content_block_delta"))
    parts.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    parts.append(_sse({"type": "content_block_start", "index": 1,
                       "content_block": {"type": "text", "text": ""}}, "content_block_start"))
    for i in range(text):
        parts.append(_sse({"type": "content_block_delta", "index": 1,
                           "delta": {"type": "text_delta", "text": _word(i)}},
                          "content_block_delta"))
        if i % 2000 == 0:
            parts.append(_sse({"type": "ping"}, "ping"))
    parts.append(_sse({"type": "content_block_stop", "index": 1}, "content_block_stop"))
    parts.append(_sse({"type": "content_block_start", "index": 2, "content_block": {
        "type": "tool_use", "id": "toolu_bench", "name": "search", "input": {}}},
        "content_block_start"))
    args = orjson.dumps({"q": "".join(_word(i) for i in range(tool * 5))}).decode()
    step = max(1, len(args) // tool)
    for start in range(0, len(args), step):
        parts.append(_sse({"type": "content_block_delta", "index": 2, "delta": {
            "type": "input_json_delta", "partial_json": args[start : start + step]}},
            "content_block_delta"))
    parts.append(_sse({"type": "content_block_stop", "index": 2}, "content_block_stop"))
    parts.append(_sse({"type": "message_delta", "delta": {"stop_reason": "tool_use",
                                                          "stop_sequence": None},
                       "usage": {"input_tokens": 43, "cache_creation_input_tokens": 0,
                                 "cache_read_input_tokens": 0, "output_tokens": n}},
                      "message_delta"))
    parts.append(_sse({"type": "message_stop"}, "message_stop"))
    return b"".join(parts)


def chunked(body: bytes, size: int = 64 * 1024) -> list[bytes]:
    """The body as a transport delivers it: reads of ``size`` bytes."""
    return [body[i : i + size] for i in range(0, len(body), size)]


def gemini(n: int = 20_000) -> bytes:
    """``n`` SSE chunks of one text part each, with the cumulative ``usageMetadata`` Gemini
    repeats on every chunk, the last with ``finishReason``."""
    parts = []
    for i in range(n):
        candidate: dict[str, Any] = {"content": {"parts": [{"text": _word(i)}], "role": "model"},
                                     "index": 0}
        if i == n - 1:
            candidate["finishReason"] = "STOP"
        parts.append(_sse({"candidates": [candidate], "usageMetadata": {
            "promptTokenCount": 9, "candidatesTokenCount": i + 1, "totalTokenCount": i + 10},
            "modelVersion": "gemini-2.5-flash", "responseId": "bench-gemini"}))
    return b"".join(parts)


def ollama(n: int = 20_000) -> bytes:
    """``n`` ``/api/chat`` NDJSON lines, then the ``done`` line with counts and timings."""
    lines = [orjson.dumps({"model": "gemma3:1b", "created_at": f"2025-08-20T13:48:{i % 60:02d}Z",
                           "message": {"role": "assistant", "content": _word(i)}, "done": False})
             for i in range(n)]
    lines.append(orjson.dumps({"model": "gemma3:1b", "created_at": "2025-08-20T13:49:00Z",
                               "message": {"role": "assistant", "content": ""},
                               "done_reason": "stop", "done": True, "total_duration": 171946792,
                               "prompt_eval_count": 16, "eval_count": n}))
    return b"\n".join(lines) + b"\n"
