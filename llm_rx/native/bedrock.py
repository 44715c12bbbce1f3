"""A ``Response`` as an AWS Bedrock ``Converse`` body.

``{"output": {"message": {"role": "assistant", "content": [...]}}, "stopReason": ...,
"usage": {...}, "metrics": {...}}``, content blocks in Converse spelling: ``{"text"}``,
``{"reasoningContent": {"reasoningText": {"text", "signature"}}}`` or
``{"reasoningContent": {"redactedContent"}}``, ``{"toolUse": {"toolUseId", "name",
"input"}}``, a Bedrock reply's cited text as ``{"citationsContent": {"content": [{"text"}],
"citations": [...]}}`` (no ``content`` for citations that came without text), and a Bedrock
reply's server-tool blocks verbatim. Usage, metrics and the other
fields a Bedrock stream carried come back as they were; a reply of another provider is
re-encoded from its canonical fields (``inputTokens`` then excludes the cached tokens, as
Bedrock counts them). What nobody reported is left out (``usage`` when no count arrived,
``metrics`` for another provider's reply), never made up as zeros.
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
from ._tables import STOP, bedrock_usage

__all__ = ["to_bedrock"]

_STOP = STOP["bedrock-converse"]


def _block(block: Block, same_provider: bool) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        if block.citations and same_provider:  # (a block of citations alone has no text)
            cited: dict[str, Any] = {"content": [{"text": block.text}]} if block.text else {}
            cited["citations"] = list(block.citations)
            return {"citationsContent": cited}
        return {"text": block.text}
    if isinstance(block, ThinkingBlock):
        if block.redacted:
            return {"reasoningContent": {"redactedContent": block.signature or ""}}
        reasoning: dict[str, Any] = {"text": block.text}
        if block.signature is not None:
            reasoning["signature"] = block.signature
        return {"reasoningContent": {"reasoningText": reasoning}}
    if isinstance(block, ToolCallBlock):
        tool: dict[str, Any] = {"toolUseId": block.id or "", "name": block.name or "",
                                "input": arguments_object(block)}
        fields = (block.meta or {}).get("toolUse") if same_provider else None
        if isinstance(fields, dict):  # the wire's other toolUse fields (``type``)
            tool.update(fields)
        return {"toolUse": tool}
    if isinstance(block, RefusalBlock):
        return {"text": block.text}
    if same_provider and isinstance(block, OpaqueBlock) and isinstance(block.raw, dict):
        return dict(block.raw)
    return None  # an opaque block of another provider has no Converse form


def to_bedrock(response: Response) -> dict[str, Any]:
    """The body of ``POST /model/{modelId}/converse``."""
    same = response.provider == "bedrock-converse"
    extra = dict(response.extra) if same else {}
    content = [out for block in response.content if (out := _block(block, same)) is not None]
    native = response.native_stop_reason if same else None
    stop = native if isinstance(native, str) else (
        _STOP.get(response.stop_reason) if response.stop_reason is not None else None
    )
    body: dict[str, Any] = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
    }
    usage = usage_body(response.usage, same, bedrock_usage)
    if usage is not None:
        body["usage"] = usage
    if "metrics" in extra:
        body["metrics"] = extra.pop("metrics")
    for key, value in extra.items():
        body.setdefault(key, value)
    return body
