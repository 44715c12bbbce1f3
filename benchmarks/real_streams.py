"""Replies as the APIs send them, at any size, for ``benchmarks.sizes``.

Each generator takes the number of text events ``n`` and a ``seed`` that makes the reply's
ids (and its padding) differ from another reply's, as two real replies do. What varies from
frame to frame is what the real services vary (read off the recorded captures): OpenAI chat's
``obfuscation`` string, Anthropic's 0-15 spaces before the last closing brace, Responses'
``sequence_number`` and ``obfuscation``, Bedrock's ``p`` padding.
"""

from __future__ import annotations

import base64
import hashlib
import string
from typing import Any

import orjson

from llm_rx.wire.eventstream import message_encoder

from .streams import _word

_ALPHABET = string.ascii_letters + string.digits


def _noise(i: int, seed: int, low: int = 4, high: int = 15) -> str:
    digest = hashlib.sha256(f"{seed}:{i}".encode()).digest()
    text = base64.b64encode(digest).decode().translate({ord("+"): None, ord("/"): None,
                                                        ord("="): None})
    return text[: low + digest[0] % (high - low + 1)]


def _sse(payload: dict[str, Any], event: str | None = None, pad: int = 0) -> bytes:
    data = orjson.dumps(payload)
    if pad:
        data = data[:-1] + b" " * pad + b"}"
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + data + b"\n\n"


def openai_chat(n: int, seed: int = 0) -> bytes:
    base = {"id": f"chatcmpl-{_noise(-1, seed, 24, 24)}", "object": "chat.completion.chunk",
            "created": 1760000000 + seed, "model": "gpt-5-mini-2025-08-07",
            "service_tier": "default", "system_fingerprint": None}

    def chunk(i: int, choices: list[Any], **extra: Any) -> bytes:
        return _sse({**base, "choices": choices, **extra, "obfuscation": _noise(i, seed)})

    parts = [chunk(-2, [{"index": 0, "delta": {"role": "assistant", "content": "",
                                               "refusal": None}, "finish_reason": None}])]
    parts += [chunk(i, [{"index": 0, "delta": {"content": _word(i)}, "finish_reason": None}])
              for i in range(n)]
    parts.append(chunk(n, [{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    parts.append(chunk(n + 1, [], usage={"prompt_tokens": 14, "completion_tokens": n,
                                         "total_tokens": n + 14}))
    return b"".join(parts) + b"data: [DONE]\n\n"


def anthropic(n: int, seed: int = 0) -> bytes:
    """Text only (the common reply), each frame padded as the API pads it."""
    def frame(i: int, payload: dict[str, Any]) -> bytes:
        return _sse(payload, str(payload["type"]), pad=hashlib.sha256(
            f"{seed}:{i}".encode()).digest()[0] % 16)

    parts = [frame(-3, {"type": "message_start", "message": {
        "id": f"msg_{_noise(-1, seed, 24, 24)}", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": 21, "cache_creation_input_tokens": 0,
                                         "cache_read_input_tokens": 0, "output_tokens": 1}}}),
        frame(-2, {"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}})]
    parts += [frame(i, {"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": _word(i)}}) for i in range(n)]
    parts.append(frame(n, {"type": "content_block_stop", "index": 0}))
    parts.append(frame(n + 1, {"type": "message_delta", "delta": {
        "stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": n}}))
    parts.append(frame(n + 2, {"type": "message_stop"}))
    return b"".join(parts)


def gemini(n: int, seed: int = 0) -> bytes:
    parts = []
    for i in range(n):
        candidate: dict[str, Any] = {"content": {"parts": [{"text": _word(i)}],
                                                 "role": "model"}, "index": 0}
        if i == n - 1:
            candidate["finishReason"] = "STOP"
        parts.append(_sse({"candidates": [candidate], "usageMetadata": {
            "promptTokenCount": 9, "candidatesTokenCount": i + 1, "totalTokenCount": i + 10},
            "modelVersion": "gemini-2.5-flash", "responseId": _noise(-1, seed, 20, 20)}))
    return b"".join(parts)


def ollama(n: int, seed: int = 0) -> bytes:
    lines = [orjson.dumps({"model": "gemma3:1b",
                           "created_at": f"2025-08-20T13:{seed % 60:02d}:{i % 60:02d}.{i:06d}Z",
                           "message": {"role": "assistant", "content": _word(i)},
                           "done": False}) for i in range(n)]
    lines.append(orjson.dumps({"model": "gemma3:1b", "created_at": "2025-08-20T13:49:00Z",
                               "message": {"role": "assistant", "content": ""},
                               "done_reason": "stop", "done": True, "total_duration": 171946792,
                               "prompt_eval_count": 16, "eval_count": n}))
    return b"\n".join(lines) + b"\n"


def responses(n: int, seed: int = 0) -> bytes:
    rid, mid = f"resp_{_noise(-1, seed, 40, 40)}", f"msg_{_noise(-2, seed, 40, 40)}"
    response: dict[str, Any] = {
        "id": rid, "object": "response", "created_at": 1778037177 + seed,
        "status": "in_progress", "background": False, "error": None,
        "incomplete_details": None, "instructions": None, "max_output_tokens": None,
        "model": "gpt-5.5-2026-04-23", "output": [], "parallel_tool_calls": True,
        "previous_response_id": None, "reasoning": {"effort": "low", "summary": None},
        "service_tier": "auto", "store": False, "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"}, "tool_choice": "auto",
        "tools": [], "top_p": 0.98, "truncation": "disabled", "usage": None, "metadata": {}}
    seq = iter(range(n + 100))

    def event(kind: str, **fields: Any) -> bytes:
        return _sse({"type": kind, **fields, "sequence_number": next(seq)}, kind)

    text = "".join(_word(i) for i in range(n))
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    item = {"id": mid, "type": "message", "status": "completed", "content": [part],
            "role": "assistant"}
    where = {"item_id": mid, "output_index": 0, "content_index": 0}
    parts = [event("response.created", response=response),
             event("response.in_progress", response=response),
             event("response.output_item.added", output_index=0, item={
                 **item, "status": "in_progress", "content": []}),
             event("response.content_part.added", **where, part={**part, "text": ""})]
    parts += [_sse({"type": "response.output_text.delta", "content_index": 0,
                    "delta": _word(i), "item_id": mid, "logprobs": [],
                    "obfuscation": _noise(i, seed), "output_index": 0,
                    "sequence_number": next(seq)}, "response.output_text.delta")
              for i in range(n)]
    parts += [event("response.output_text.done", **where, logprobs=[], text=text),
              event("response.content_part.done", **where, part=part),
              event("response.output_item.done", output_index=0, item=item),
              event("response.completed", response={
                  **response, "status": "completed", "output": [item], "usage": {
                      "input_tokens": 11, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": n, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": n + 11}})]
    return b"".join(parts)


_BEDROCK = {name: message_encoder({":event-type": name, ":content-type": "application/json",
                                   ":message-type": "event"})
            for name in ("messageStart", "contentBlockDelta", "contentBlockStop",
                         "messageStop", "metadata")}


def bedrock(n: int, seed: int = 0) -> bytes:
    def message(name: str, i: int, payload: dict[str, Any]) -> bytes:
        pad = _ALPHABET[: 1 + hashlib.sha256(f"{seed}:{i}".encode()).digest()[0] % 60]
        return _BEDROCK[name](orjson.dumps({**payload, "p": pad}))

    parts = [message("messageStart", -1, {"role": "assistant"})]
    parts += [message("contentBlockDelta", i, {"contentBlockIndex": 0,
                                               "delta": {"text": _word(i)}})
              for i in range(n)]
    parts.append(message("contentBlockStop", n, {"contentBlockIndex": 0}))
    parts.append(message("messageStop", n + 1, {"stopReason": "end_turn"}))
    parts.append(message("metadata", n + 2, {"metrics": {"latencyMs": 522}, "usage": {
        "inputTokens": 13, "outputTokens": n, "totalTokens": n + 13}}))
    return b"".join(parts)
