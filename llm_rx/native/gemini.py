"""A ``Response`` as a Gemini ``GenerateContentResponse`` body (camelCase, as REST returns it).

Each block is one part, in order: a signed block keeps its ``thoughtSignature`` on its own part
(an empty-text one too), a tool call is a ``functionCall`` with its arguments as ``args``, a
Gemini ``opaque`` block is its part verbatim. Candidate and top-level fields the stream carried
(``safetyRatings``, ``groundingMetadata``, ``finishMessage``, ``createTime`` ...) come back where
they were. Enums are given by name, as the API does by default and as every client reads them:
a stream read with ``enum-encoding=int`` gets its numbers back as names. Another provider's
response is re-encoded from its canonical fields; its signatures are not Gemini's and are left
out.
"""

from __future__ import annotations

from typing import Any

from ..response import (
    ApprovalRequestBlock,
    Block,
    OpaqueBlock,
    RefusalBlock,
    Response,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from ..wire.gemini import FINISH_REASONS, finish_name
from ._shared import arguments_object, usage_body
from ._tables import BODY_STOP, gemini_body_usage

__all__ = ["to_gemini"]

_FINISH = BODY_STOP["gemini"]  # (with the value of a failed reply)

# Enum numbers of the Gemini API (enum-encoding=int), by the field that carries them.
_HARM_CATEGORY = {0: "HARM_CATEGORY_UNSPECIFIED", 7: "HARM_CATEGORY_HARASSMENT",
                  8: "HARM_CATEGORY_HATE_SPEECH", 9: "HARM_CATEGORY_SEXUALLY_EXPLICIT",
                  10: "HARM_CATEGORY_DANGEROUS_CONTENT", 11: "HARM_CATEGORY_CIVIC_INTEGRITY"}
_ENUMS: dict[str, dict[int, str]] = {
    "finishReason": FINISH_REASONS,
    "blockReason": {0: "BLOCK_REASON_UNSPECIFIED", 1: "SAFETY", 2: "OTHER", 3: "BLOCKLIST",
                    4: "PROHIBITED_CONTENT", 5: "IMAGE_SAFETY"},
    "category": _HARM_CATEGORY,
    "probability": {0: "HARM_PROBABILITY_UNSPECIFIED", 1: "NEGLIGIBLE", 2: "LOW", 3: "MEDIUM",
                    4: "HIGH"},
    "modality": {0: "MODALITY_UNSPECIFIED", 1: "TEXT", 2: "IMAGE", 3: "VIDEO", 4: "AUDIO",
                 5: "DOCUMENT"},
    "outcome": {0: "OUTCOME_UNSPECIFIED", 1: "OUTCOME_OK", 2: "OUTCOME_FAILED",
                3: "OUTCOME_DEADLINE_EXCEEDED"},
    "language": {0: "LANGUAGE_UNSPECIFIED", 1: "PYTHON"},
    "urlRetrievalStatus": {0: "URL_RETRIEVAL_STATUS_UNSPECIFIED",
                           1: "URL_RETRIEVAL_STATUS_SUCCESS", 2: "URL_RETRIEVAL_STATUS_ERROR",
                           3: "URL_RETRIEVAL_STATUS_PAYWALL", 4: "URL_RETRIEVAL_STATUS_UNSAFE"},
}


def _named(node: Any, key: str = "") -> Any:
    """A copy of ``node`` with the enum numbers of known enum fields as their names."""
    if isinstance(node, dict):
        return {name: _named(value, name) for name, value in node.items()}
    if isinstance(node, list):
        return [_named(item, key) for item in node]
    if isinstance(node, int) and not isinstance(node, bool) and key in _ENUMS:
        return _ENUMS[key].get(node, node)
    return node


def _part(block: Block, same_provider: bool) -> dict[str, Any] | None:
    signature = block.signature if same_provider and not isinstance(
        block, (RefusalBlock, OpaqueBlock, ApprovalRequestBlock)
    ) else None
    extra = (block.meta or {}).get("part") if same_provider else None
    out: dict[str, Any]
    if isinstance(block, TextBlock | RefusalBlock):
        out = {"text": block.text}
    elif isinstance(block, ThinkingBlock):
        if block.redacted and not same_provider:
            return None  # another provider's encrypted reasoning: nothing Gemini can read
        out = {"text": block.text, "thought": True}
    elif isinstance(block, ToolCallBlock):
        call: dict[str, Any] = {"name": block.name or ""}
        if block.raw_arguments:  # (a call that came without arguments goes back without)
            call["args"] = arguments_object(block)
        if block.id is not None:
            call = {"id": block.id, **call}
        out = {"functionCall": call}
    elif same_provider and isinstance(block.raw, dict):
        return _named(block.raw)  # type: ignore[no-any-return]
    else:
        return None  # another provider's server-side block has no Gemini part
    if signature is not None:
        out["thoughtSignature"] = signature
    if isinstance(extra, dict):
        out.update(extra)
    return out


def _candidate(
    index: int,
    blocks: list[Block],
    reason: StopReason | None,
    native: Any,
    extra: dict[str, Any],
    same_provider: bool,
    ended: bool,
) -> dict[str, Any]:
    parts = [part for block in blocks if (part := _part(block, same_provider)) is not None]
    out: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    finish = finish_name(native)
    if not (same_provider and isinstance(finish, str)):  # (a cut reply has no finish reason)
        finish = _FINISH.get(reason) if reason is not None and ended else None
    if finish is not None:
        out["finishReason"] = finish
    if same_provider:
        out.update(_named(extra))
    else:
        out["index"] = index
    return out


def _prompt_blocked(response: Response) -> bool:
    """A reply to a blocked prompt: no candidate at all, only ``promptFeedback``."""
    return not (response.content or response.choice_extra or response.native_stop_reason) and (
        "promptFeedback" in response.extra
    )


def to_gemini(response: Response) -> dict[str, Any]:
    """The ``GenerateContentResponse`` body (what ``:generateContent`` returns)."""
    same = response.provider == "gemini"
    body: dict[str, Any] = {}
    if response.choices:
        body["candidates"] = [
            _candidate(choice.index, choice.content, choice.stop_reason,
                       choice.native_stop_reason, choice.extra, same, response.complete)
            for choice in response.choices
        ]
    elif not (same and _prompt_blocked(response)):
        body["candidates"] = [
            _candidate(0, response.content, response.stop_reason, response.native_stop_reason,
                       response.choice_extra, same, response.complete)
        ]
    usage = usage_body(response.usage, same, gemini_body_usage)
    if usage is not None:
        body["usageMetadata"] = _named(usage)
    if response.model is not None:
        body["modelVersion"] = response.model
    if response.id is not None:
        body["responseId"] = response.id
    if same:
        for key, value in response.extra.items():
            body.setdefault(key, _named(value))
    return body
