"""A ``Response`` as an Anthropic ``message`` body.

An Anthropic reply's fields come back as the stream carried them. Another provider's reply
is re-encoded from its canonical fields; as the ``message`` body requires both
``input_tokens`` and ``output_tokens``, a count nobody reported is written ``0`` there (the
canonical ``Response`` keeps it ``None``), and cached tokens are taken out of
``input_tokens``, as Anthropic counts them.
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
from ._tables import ANTHROPIC_CITATIONS, STOP, anthropic_body_usage

__all__ = ["to_anthropic"]

_STOP = STOP["anthropic"]


def _block(block: Block, same_provider: bool) -> dict[str, Any] | None:
    # A block's own extra fields (a tool call's ``caller``) are Anthropic's only if it came
    # from Anthropic; another provider's spelling notes mean nothing here.
    extra = dict(block.meta or {}) if same_provider and not isinstance(block, OpaqueBlock) else {}
    if isinstance(block, TextBlock):
        out: dict[str, Any] = {"type": "text", "text": block.text}
        citations = [c for c in block.citations or ()
                     if isinstance(c, dict) and isinstance(c.get("type"), str)
                     and c["type"] in ANTHROPIC_CITATIONS]
        if citations:  # (another provider's citation objects are none of Anthropic's)
            out["citations"] = citations
        return {**out, **extra}
    if isinstance(block, ThinkingBlock):
        if block.redacted:
            return {"type": "redacted_thinking", "data": block.signature or ""}
        return {"type": "thinking", "thinking": block.text, "signature": block.signature or ""}
    if isinstance(block, ToolCallBlock):
        return {"type": "tool_use", "id": block.id or "", "name": block.name or "",
                "input": arguments_object(block), **extra}
    if isinstance(block, RefusalBlock):
        return {"type": "text", "text": block.text}
    if same_provider and isinstance(block.raw, dict) and "type" in block.raw:
        return dict(block.raw)
    return None  # another provider's opaque item (a server tool) has no Anthropic block


def to_anthropic(response: Response) -> dict[str, Any]:
    """The ``message`` body (what ``POST /v1/messages`` without ``stream`` returns)."""
    same = response.provider == "anthropic"
    extra = dict(response.extra) if same else {}
    native = response.native_stop_reason if same else None
    stop_reason = native.get("stop_reason") if isinstance(native, dict) else None
    if stop_reason is None and response.stop_reason is not None:
        stop_reason = _STOP.get(response.stop_reason)
    body: dict[str, Any] = {
        "id": response.id or "",
        "type": "message",
        "role": "assistant",
        "model": response.model or "",
        "content": [
            out for block in response.content if (out := _block(block, same)) is not None
        ],
        "stop_reason": stop_reason,
        "stop_sequence": extra.pop("stop_sequence", None),
    }
    if isinstance(native, dict) and "stop_details" in native:
        body["stop_details"] = native["stop_details"]
    body["usage"] = usage_body(response.usage, same, anthropic_body_usage, required=True)
    for key, value in extra.items():
        body.setdefault(key, value)
    return body


