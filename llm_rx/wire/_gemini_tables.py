"""Gemini's wire, as tables: its finish reasons (by name and by number), the fields each
level of a chunk reads, its usage, and the state of a candidate while it streams."""

from __future__ import annotations

from typing import Any

from ..response import StopReason, Usage
from ._boundary import count_of
from ._gemini_args import PartialArgs
from .changed import ChangedFields

__all__ = [
    "CALL_FIELDS", "CANDIDATE_FIELDS", "CHUNK_FIELDS", "FINISH_REASONS", "PART_META", "STOP",
    "TEXT_FIELDS", "Candidate", "finish_name", "usage_from_gemini",
]

#: ``finishReason`` names by their number (Gemini API ``Candidate.FinishReason``).
FINISH_REASONS: dict[int, str] = {
    0: "FINISH_REASON_UNSPECIFIED", 1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY", 4: "RECITATION",
    5: "OTHER", 6: "LANGUAGE", 7: "BLOCKLIST", 8: "PROHIBITED_CONTENT", 9: "SPII",
    10: "MALFORMED_FUNCTION_CALL", 11: "IMAGE_SAFETY", 12: "UNEXPECTED_TOOL_CALL",
    13: "TOO_MANY_TOOL_CALLS", 14: "IMAGE_PROHIBITED_CONTENT", 15: "IMAGE_OTHER",
    16: "NO_IMAGE", 17: "IMAGE_RECITATION",
}
FILTERED = ("SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
             "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR")
FAILED = ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS",
           "MISSING_THOUGHT_SIGNATURE", "MALFORMED_RESPONSE")
STOP: dict[str, StopReason] = {
    "STOP": "end_turn", "MAX_TOKENS": "max_tokens",
    **dict.fromkeys(FILTERED, "content_filter"), **dict.fromkeys(FAILED, "error"),
}
CHUNK_FIELDS = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId"})
CANDIDATE_FIELDS = frozenset({"content", "finishReason"})
TEXT_FIELDS = frozenset({"text", "thought", "thoughtSignature"})
CALL_FIELDS = frozenset({"functionCall", "thoughtSignature"})
PART_META = frozenset({"thought", "thoughtSignature", "partMetadata", "videoMetadata",
                        "mediaResolution"})


def usage_from_gemini(raw: dict[str, Any]) -> Usage:
    """Canonical usage from ``usageMetadata``: output counts the thoughts too, and input the
    tool-use prompt (``toolUsePromptTokenCount``: what a file search, grounding or code
    execution added to the prompt, billed as input; PITFALLS 45). ``native`` is the wire's."""
    get = raw.get
    candidates = count_of(get("candidatesTokenCount"))
    thoughts = count_of(get("thoughtsTokenCount"))
    if thoughts is None:
        output = candidates
    else:
        output = thoughts if candidates is None else candidates + thoughts
    prompt = count_of(get("promptTokenCount"))
    tool_use = count_of(get("toolUsePromptTokenCount"))
    if tool_use is not None:
        prompt = tool_use if prompt is None else prompt + tool_use
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_tokens=count_of(get("cachedContentTokenCount")),
        reasoning_tokens=thoughts,
        native=raw,
    )


def finish_name(native: Any) -> Any:
    """A ``finishReason`` (or a number standing for one) as its name."""
    return FINISH_REASONS.get(native, native) if isinstance(native, int) else native


class Candidate:
    """Per-candidate state: the one block open for more parts, and how the candidate ended."""

    __slots__ = ("args", "block", "fields", "finished", "had_calls", "index", "kind", "native",
                 "reason", "words")

    def __init__(self, index: int) -> None:
        self.index = index
        self.block: int | None = None  # the open block: unsigned text or thinking, or a call
        self.kind: str | None = None  # "text" | "thinking" | "tool_call"
        self.args: PartialArgs | None = None  # a call streaming its partialArgs
        self.had_calls = False
        self.finished = False
        self.reason: StopReason = "end_turn"
        self.native: Any = None
        self.words: str | None = None
        self.fields = ChangedFields(CANDIDATE_FIELDS)
