"""Bedrock ConverseStream's wire, as tables and pieces: its stop reasons, its usage, its
padding, and the state of a content block (a server tool's block is kept whole until its end)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from ..events import BlockKind, BlockStart
from ..response import StopReason, Usage
from ._boundary import count_of

__all__ = ["PADDING", "STOP", "Block", "Pending", "join_base64", "unpadded", "usage_from_bedrock"]


STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "model_context_window_exceeded": "max_tokens",
}
PADDING = "p"


def usage_from_bedrock(raw: dict[str, Any]) -> Usage:
    """Canonical usage from a Converse ``usage`` object: ``inputTokens`` excludes the cache
    reads and writes, so ``input_tokens`` adds them (a total, as everywhere)."""
    fresh = count_of(raw.get("inputTokens"))
    read = count_of(raw.get("cacheReadInputTokens"))
    write = count_of(raw.get("cacheWriteInputTokens"))
    return Usage(
        input_tokens=fresh + (read or 0) + (write or 0) if fresh is not None else None,
        output_tokens=count_of(raw.get("outputTokens")),
        cache_read_tokens=read,
        cache_write_tokens=write,
        native=raw,
    )


def unpadded(payload: dict[str, Any], *skip: str) -> dict[str, Any]:
    return {key: value for key, value in payload.items() if key != PADDING and key not in skip}


def join_base64(parts: list[str]) -> str:
    """Redacted data sent in several pieces: the base64 of the joined bytes."""
    try:
        return base64.b64encode(b"".join(base64.b64decode(part) for part in parts)).decode()
    except (binascii.Error, ValueError):
        return "".join(parts)


class Block:
    """An open content block: its index, kind and (for signatures) the pieces so far."""

    __slots__ = ("index", "kind", "signature")

    def __init__(self, index: int, kind: BlockKind) -> None:
        self.index = index
        self.kind = kind
        self.signature: list[str] = []


class Pending:
    """A server-tool (opaque) block, emitted whole at its end with its deltas applied."""

    __slots__ = ("body", "index", "inputs", "member")

    def __init__(self, index: int, member: str, body: dict[str, Any]) -> None:
        self.index = index
        self.member = member
        self.body = body
        self.inputs: list[str] = []

    def apply(self, delta: dict[str, Any]) -> None:
        body = self.body
        for key, value in delta.items():
            if key == "toolUse" and isinstance(value, dict) and isinstance(value.get("input"), str):
                self.inputs.append(value["input"])
            elif isinstance(value, list):
                body.setdefault("content", []).extend(value)
            elif isinstance(value, dict):
                for name, item in value.items():
                    previous = body.get(name)
                    if isinstance(previous, str) and isinstance(item, str):
                        body[name] = previous + item
                    elif isinstance(previous, list) and isinstance(item, list):
                        body[name] = [*previous, *item]
                    else:
                        body[name] = item
            else:
                body[key] = value

    def start(self) -> BlockStart:
        body = self.body
        if self.member == "toolUse":
            joined = "".join(self.inputs)
            if joined:
                try:
                    body["input"] = orjson.loads(joined)
                except orjson.JSONDecodeError:
                    body["input"] = joined
            else:
                body.setdefault("input", {})
        kind = body.get("type")
        name = kind if isinstance(kind, str) and kind else self.member
        return BlockStart(self.index, "opaque", name=name, raw={self.member: body})
