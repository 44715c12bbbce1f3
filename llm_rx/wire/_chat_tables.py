"""OpenAI Chat Completions' wire, as tables: the fields each level of a chunk reads, the
finish reasons, the usage of every dialect, and the state of a choice while it streams."""

from __future__ import annotations

from typing import Any

from ..response import StopReason, Usage
from ._boundary import count_of
from .changed import ChangedFields

__all__ = [
    "CHOICE_FIELDS", "CHOICE_NEVER_KEPT", "CHUNK_FIELDS", "FINISH", "KNOWN_DELTA", "NEVER_KEPT",
    "OPENING_DELTA", "SKIPPED_DELTA", "Choice", "finish_reason", "usage_from_openai",
]

# Chunk fields that are per-chunk framing, not message metadata.
CHUNK_FIELDS = frozenset({"id", "object", "created", "model", "choices", "usage", "obfuscation"})
# Delta fields that carry nothing a reply keeps.
SKIPPED_DELTA = frozenset({"role", "channel", "token_id"})
# Choice fields read elsewhere, or per-token values that are not the choice's metadata.
CHOICE_FIELDS = frozenset(
    {"index", "delta", "finish_reason", "logprobs", "usage", "token_ids", "text"}
)
OPENING_DELTA = SKIPPED_DELTA | {"content", "refusal"}
KNOWN_DELTA = SKIPPED_DELTA | {
    "content", "refusal", "tool_calls", "reasoning", "reasoning_content", "reasoning_details",
    "annotations", "function_call",
}
FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "end": "end_turn",
    "eos": "end_turn",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
    "error": "error",
}


def finish_reason(native: str, *, tool_calls: bool, refusal: bool) -> StopReason:
    """The canonical stop reason for an OpenAI-style ``finish_reason``."""
    reason = FINISH.get(native, "end_turn")
    if reason == "end_turn":
        if tool_calls:
            return "tool_use"
        if refusal:
            return "refusal"
    return reason


def usage_from_openai(raw: dict[str, Any]) -> Usage:
    """Canonical usage from an OpenAI-style usage object (and its dialects)."""
    prompt = count_of(raw.get("prompt_tokens"))
    completion = count_of(raw.get("completion_tokens"))
    total = count_of(raw.get("total_tokens"))
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    cache_read = count_of(prompt_details.get("cached_tokens"))
    if cache_read is None:
        cache_read = count_of(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
    reasoning = count_of(completion_details.get("reasoning_tokens"))
    if reasoning is None:
        reasoning = count_of(raw.get("reasoning_tokens"))
    output = completion
    if (
        completion is not None
        and reasoning
        and prompt is not None
        and total is not None
        and prompt + completion != total
        and prompt + completion + reasoning == total
    ):
        output = completion + reasoning  # xAI: completion_tokens excludes reasoning
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_tokens=cache_read,
        cache_write_tokens=count_of(prompt_details.get("cache_write_tokens")),
        reasoning_tokens=reasoning,
        native=raw,
    )


class Choice:
    """Per-choice decoding state: the open block of each kind, the tool calls."""

    __slots__ = (
        "details",
        "early",
        "fields",
        "finished",
        "had_refusal",
        "had_tools",
        "index",
        "last_tool",
        "native",
        "open",
        "reason",
        "refusal",
        "text",
        "thinking",
        "tools",
    )

    def __init__(self, index: int) -> None:
        self.index = index
        self.text: int | None = None
        self.thinking: int | None = None
        self.refusal: int | None = None
        self.tools: dict[Any, tuple[int, str | None]] = {}  # wire key -> (block, call id)
        self.early: dict[Any, list[str]] = {}  # wire key -> fragments before the id and name
        self.details: dict[Any, int] = {}  # reasoning_details index -> block
        self.last_tool: int | None = None
        self.had_tools = False
        self.had_refusal = False
        self.finished = False
        self.open: dict[int, None] = {}  # the open blocks, in order (a set closed in O(1))
        self.reason: StopReason = "end_turn"
        self.native: Any = None
        self.fields = ChangedFields(CHOICE_FIELDS)


# Fields no part of a reply keeps whole (the served model and id are kept only as strings).
NEVER_KEPT = frozenset({"id", "object", "model", "obfuscation"})
CHOICE_NEVER_KEPT = frozenset({"token_ids", "text"})
