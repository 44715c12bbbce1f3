"""A ``Response`` as a Cohere v2 chat body (``POST /v2/chat`` without ``stream``).

``{"id", "finish_reason", "message": {"role": "assistant", "content": [...], "tool_plan",
"tool_calls": [...], "citations": [...]}, "usage": {"billed_units", "tokens",
"cached_tokens"}}``: text and thinking blocks are ``content`` items (``{"type": "text",
"text"}``, ``{"type": "thinking", "thinking"}``); a thinking block the stream spelled
``tool_plan`` is the message's ``tool_plan``; fields with nothing in them are left out, as
the API does. Another provider's usage is written with only the counts it reported.
"""

from __future__ import annotations

from typing import Any

from ..response import Response, TextBlock, ThinkingBlock, ToolCallBlock
from ._shared import usage_body
from ._tables import BODY_STOP, cohere_usage

__all__ = ["to_cohere"]

_FINISH = BODY_STOP["cohere"]  # (with the values of a failed reply)


def _message(response: Response) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    plan: list[str] = []
    calls: list[dict[str, Any]] = []
    citations: list[Any] = []
    for block in response.content:
        if isinstance(block, TextBlock):
            content.append({"type": "text", "text": block.text})
            citations.extend(block.citations)
        elif isinstance(block, ThinkingBlock):
            if (block.meta or {}).get("field") == "tool_plan":
                plan.append(block.text)
            else:
                content.append({"type": "thinking", "thinking": block.text})
        elif isinstance(block, ToolCallBlock):
            calls.append({
                "id": block.id or "",
                "type": (block.meta or {}).get("type", "function"),
                "function": {"name": block.name or "", "arguments": block.raw_arguments},
            })
    message: dict[str, Any] = {"role": "assistant"}
    if content:
        message["content"] = content
    if plan:
        message["tool_plan"] = "".join(plan)
    if calls:
        message["tool_calls"] = calls
    if citations:
        message["citations"] = citations
    return message


def to_cohere(response: Response) -> dict[str, Any]:
    """The Cohere v2 chat response body."""
    same = response.provider == "cohere"
    native = response.native_stop_reason
    finish = native if same and isinstance(native, str) else _FINISH.get(
        response.stop_reason or "end_turn", "COMPLETE"
    )
    body: dict[str, Any] = {
        "id": response.id or "",
        "finish_reason": finish,
        "message": _message(response),
    }
    usage = usage_body(response.usage, same, cohere_usage)
    if usage is not None:
        body["usage"] = usage
    return body
