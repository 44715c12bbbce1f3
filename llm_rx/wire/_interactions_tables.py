"""What the Gemini Interactions wire's names mean: event names (the current schema and the
early-2026 one), step kinds, the interaction's statuses and its usage object."""

from __future__ import annotations

from typing import Any, Final

from ..response import StopReason, Usage
from ._boundary import count_of

__all__ = [
    "CALL_STEPS",
    "EVENTS",
    "FIELDS",
    "LEGACY_EVENTS",
    "STATUS_STOP",
    "TEXT_STEPS",
    "THOUGHT_STEPS",
    "UNFINISHED",
    "usage_from_interactions",
]

#: The event names of the current schema (since 26 May 2026) -> what each does.
EVENTS: Final[dict[str, str]] = {
    "interaction.created": "created",
    "interaction.status_update": "status",
    "step.start": "start",
    "step.delta": "delta",
    "step.stop": "stop",
    "interaction.completed": "completed",
    "interaction.cancelled": "cancelled",
    "error": "error",
}

#: The early-2026 schema's names (``content.*`` events whose payload is under ``content``).
LEGACY_EVENTS: Final[dict[str, str]] = {
    "interaction.start": "created",
    "content.start": "start",
    "content.delta": "delta",
    "content.stop": "stop",
    "interaction.complete": "completed",
}

#: Step (or legacy content) types read as text, as reasoning, as a call the client runs.
TEXT_STEPS: Final = frozenset({"model_output", "text"})
THOUGHT_STEPS: Final = frozenset({"thought"})
CALL_STEPS: Final = frozenset({"function_call"})

#: The interaction's fields llm-rx reads itself (the others are metadata, kept).
FIELDS: Final = frozenset({"id", "model", "status", "usage", "steps", "outputs"})

#: The statuses of an interaction that ended, as a stop reason (a ``failed`` one is the
#: provider's error, a ``cancelled`` one a cancellation).
STATUS_STOP: Final[dict[str, StopReason]] = {
    "completed": "end_turn",
    "requires_action": "tool_use",
    "incomplete": "max_tokens",
    "budget_exceeded": "max_tokens",
    "requires_continuation": "pause_turn",
    "idle": "end_turn",
}

#: The statuses of an interaction still running (a body read with one is the reply so far).
UNFINISHED: Final = frozenset({"queued", "in_progress"})


def _sum(*counts: int | None) -> int | None:
    known = [count for count in counts if count is not None]
    return sum(known) if known else None


def usage_from_interactions(raw: dict[str, Any]) -> Usage:
    """Canonical usage from an interaction's ``usage``, counted as the ``gemini`` provider
    counts ``usageMetadata``: input adds the tool-use prompt (``total_tool_use_tokens``, what
    a search or code execution added, billed as input; PITFALLS 45), output the thoughts
    (``total_thought_tokens``, also the reasoning part), ``total_cached_tokens`` is the part
    read from cache. ``native`` is the wire's object."""
    get = raw.get
    thoughts = count_of(get("total_thought_tokens"))
    return Usage(
        input_tokens=_sum(count_of(get("total_input_tokens")),
                          count_of(get("total_tool_use_tokens"))),
        output_tokens=_sum(count_of(get("total_output_tokens")), thoughts),
        cache_read_tokens=count_of(get("total_cached_tokens")),
        reasoning_tokens=thoughts,
        native=raw,
    )
