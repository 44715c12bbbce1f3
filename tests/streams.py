"""Builders for small hand-made streams, for cases no capture has."""

from __future__ import annotations

from typing import Any

import orjson


def sse(*payloads: Any, event: str | None = None) -> bytes:
    """SSE events, one per payload (a dict is JSON-encoded, bytes and str are sent as is)."""
    out = []
    for payload in payloads:
        if isinstance(payload, dict):
            data = orjson.dumps(payload)
        elif isinstance(payload, str):
            data = payload.encode()
        else:
            data = payload
        head = f"event: {event}\n".encode() if event else b""
        out.append(head + b"data: " + data + b"\n\n")
    return b"".join(out)


def chat_chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    *,
    index: int = 0,
    model: str = "gpt-test",
    usage: Any = ...,
    choices: list[Any] | None = None,
    **top: Any,
) -> dict[str, Any]:
    """An OpenAI ``chat.completion.chunk``."""
    chunk: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": choices
        if choices is not None
        else [{"index": index, "delta": delta or {}, "finish_reason": finish}],
    }
    if usage is not ...:
        chunk["usage"] = usage
    chunk.update(top)
    return chunk


def anthropic_events(*frames: dict[str, Any]) -> bytes:
    """Anthropic SSE: each frame sent with its ``event:`` name."""
    return b"".join(sse(frame, event=frame["type"]) for frame in frames)


def message_start(
    id: str = "msg_1", model: str = "claude-test", usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": usage if usage is not None else {"input_tokens": 10, "output_tokens": 1},
        },
    }


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def block_delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str = "end_turn", **usage: int) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": usage or {"output_tokens": 5},
    }


MESSAGE_STOP: dict[str, Any] = {"type": "message_stop"}
DONE = b"data: [DONE]\n\n"
