"""A ``Response`` as a Gemini Interactions body (what ``POST /v1beta/interactions`` with
``stream: false`` returns, and a retrieve ``GET``): the interaction with its ``steps``.

Each block is one step, in order: a ``thinking`` block is a ``thought`` step (its text as a
text ``summary``, its ``signature``), a ``text`` block a ``model_output`` step (its citations
as the text's ``annotations``), a tool call a ``function_call`` step (``arguments`` the
object), an ``opaque`` block of this wire (a built-in tool's call or result, an image) its
step verbatim. The ``status`` is the stop's native one when the reply came from this wire,
else the one the stop reason names (``requires_action`` for ``tool_use`` with a call; a
reply that did not end is ``in_progress``). Usage is the interaction's own object when it
came from this wire, else the canonical counts in its spelling. A refusal is the answer's
text. Another provider's signatures are not Gemini's and are left out.
"""

from __future__ import annotations

from typing import Any

from ..response import (
    Block,
    OpaqueBlock,
    RefusalBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from ._shared import arguments_object, usage_body
from ._tables import gemini_interactions_usage, interactions_status

__all__ = ["interaction_steps", "to_gemini_interactions"]

_MEDIA = frozenset({"image", "audio", "video", "document"})


def _step(block: Block, same: bool) -> dict[str, Any] | None:
    if isinstance(block, ThinkingBlock):
        if block.redacted and not same:
            return None
        step: dict[str, Any] = {"type": "thought"}
        if block.text:
            step["summary"] = [{"type": "text", "text": block.text}]
        step["signature"] = block.signature if same and block.signature else ""
        return step
    if isinstance(block, RefusalBlock):  # (a refusal is the answer's text here)
        return {"type": "model_output", "content": [{"type": "text", "text": block.text}]}
    if isinstance(block, TextBlock):
        content: dict[str, Any] = {"type": "text", "text": block.text}
        if same and block.citations:
            content["annotations"] = list(block.citations)
        return {"type": "model_output", "content": [content]}
    if isinstance(block, ToolCallBlock):
        call: dict[str, Any] = {"type": "function_call", "id": block.id or "",
                                "name": block.name or "", "arguments": arguments_object(block)}
        extra = (block.meta or {}).get("step") if same else None
        if isinstance(extra, dict):
            call.update(extra)
        if same and block.signature:
            call["signature"] = block.signature
        return call
    if same and isinstance(block, OpaqueBlock) and isinstance(block.raw, dict):
        if block.kind in _MEDIA:
            return {"type": "model_output", "content": [dict(block.raw)]}
        return dict(block.raw)
    return None  # another provider's server-side block: no step


def interaction_steps(response: Response) -> list[dict[str, Any]]:
    """The reply's ``steps``, one per block (see the module's rules)."""
    same = response.provider == "gemini-interactions"
    return [step for block in response.content if (step := _step(block, same)) is not None]


def to_gemini_interactions(response: Response) -> dict[str, Any]:
    """The interaction body, with its ``steps``."""
    same = response.provider == "gemini-interactions"
    body: dict[str, Any] = {"id": response.id or "",
                            "status": interactions_status(response, same)}
    usage = usage_body(response.usage, same, gemini_interactions_usage)
    if usage is not None:
        body["usage"] = usage
    if same:
        for key, value in response.extra.items():
            body.setdefault(key, value)
    body["steps"] = interaction_steps(response)
    body.setdefault("object", "interaction")
    if response.model is not None:
        body["model"] = response.model
    return body
