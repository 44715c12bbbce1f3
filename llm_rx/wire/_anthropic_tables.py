"""The Anthropic decoder's tables: stop reasons, and the fields each frame's reader models
(the others are kept as the frame's extras)."""

from __future__ import annotations

from typing import Any

from ..response import StopReason

__all__ = [
    "MESSAGE_DELTA_FIELDS",
    "MESSAGE_FIELDS",
    "STOP",
    "TEXT_FIELDS",
    "THINKING_FIELDS",
    "TOOL_FIELDS",
    "extras",
]

STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_use",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "model_context_window_exceeded": "max_tokens",
}
MESSAGE_FIELDS = frozenset(
    {"type", "role", "content", "model", "id", "stop_reason", "stop_sequence", "usage"}
)
MESSAGE_DELTA_FIELDS = frozenset({"type", "delta", "usage"})
TEXT_FIELDS = frozenset({"type", "text", "citations"})
THINKING_FIELDS = frozenset({"type", "thinking", "signature"})
TOOL_FIELDS = frozenset({"type", "id", "name", "input"})


def extras(block: dict[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    extra = {key: value for key, value in block.items() if key not in known}
    return extra or None
