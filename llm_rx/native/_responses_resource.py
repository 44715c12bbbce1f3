"""The Responses ``response`` object of a reply of another provider, as the Open Responses
specification requires it (``ResponseResource``: every field present).

The stream encoder (its ``response.created`` / ``in_progress`` / terminal snapshots) and
``to_native`` both build it here, so the streamed final response and the non-stream body of
the same reply are equal. Values the source had are used (its id, served model, creation
time, service tier, the function tools it called); every other field has the
specification's default (sampling ``1.0``, penalties ``0.0``, ``truncation: "disabled"``,
``text.format: {"type": "text"}``, nothing stored, not in the background). Output items of a
foreign reply get ids of their own: ``msg_``, ``rs_``, ``fc_`` and the item's position (after
the response's id when it has one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ..response import ApprovalRequestBlock, Usage
from ..wire._approvals import arguments_text
from ._shared import url_citation

__all__ = ["RESOURCE_FIELDS", "approval_item", "created_at", "item_id", "resource",
           "resource_usage", "responses_citation"]

#: every field of the specification's ``ResponseResource``, in the order written
RESOURCE_FIELDS = (
    "id", "object", "created_at", "status", "background", "completed_at", "error",
    "incomplete_details", "instructions", "max_output_tokens", "max_tool_calls", "model",
    "output", "parallel_tool_calls", "presence_penalty", "frequency_penalty",
    "previous_response_id", "prompt_cache_key", "reasoning",
    "safety_identifier", "service_tier", "store", "temperature", "text", "tool_choice",
    "tools", "top_logprobs", "top_p", "truncation", "usage", "user", "metadata",
)

#: The service tiers a Responses ``response`` names (another provider's, Gemini's
#: ``standard``, is no OpenAI tier: the response says ``default``).
_TIERS = frozenset({"auto", "default", "flex", "scale", "priority", "fast", "ultrafast"})
_PREFIX = {"message": "msg", "reasoning": "rs", "function_call": "fc",
           "custom_tool_call": "ctc", "mcp_approval_request": "mcpr"}


def item_id(kind: str, response_id: str | None, number: int) -> str:
    """The id of a foreign reply's output item ``number`` of type ``kind``."""
    prefix = _PREFIX.get(kind, "item")
    return f"{prefix}_{response_id}_{number}" if response_id else f"{prefix}_{number}"


def approval_item(block: ApprovalRequestBlock, same: bool, own_id: str) -> dict[str, Any]:
    """An approval request as a Responses ``mcp_approval_request`` output item: the item the
    wire gave, verbatim, for a Responses reply; else built from the request's fields (its
    ``arguments`` a JSON string, ``server_label`` empty when no MCP server was named; the
    request's id, or ``own_id`` without one)."""
    raw = block.raw
    if same and isinstance(raw, dict) and raw.get("type") == "mcp_approval_request":
        return dict(raw)
    arguments = block.arguments
    return {"id": block.id or own_id, "type": "mcp_approval_request",
            "arguments": arguments_text({} if arguments is None else arguments),
            "name": block.name or "", "server_label": block.server or ""}


def responses_citation(citation: Any) -> dict[str, Any] | None:
    """Another provider's citation as a Responses ``url_citation`` annotation (the only
    annotation the specification has); ``None`` for one that names no URL."""
    chat = url_citation(citation)
    return None if chat is None else {"type": "url_citation", **chat["url_citation"]}


def _epoch(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):  # (a time a JSON reader reads whole: not NaN, not
        return int(value) if 0 <= value < 2**53 else None  # negative, not past 2**53)
    if isinstance(value, str) and value:
        text = value.strip().replace("Z", "+00:00")
        head, dot, tail = text.partition(".")
        if dot:  # (sub-second digits beyond what fromisoformat reads)
            digits = "".join(c for c in tail if c.isdigit())
            text = head + "." + digits[:6] + tail[len(digits):]
        try:
            return int(datetime.fromisoformat(text).timestamp())
        except ValueError:
            return None
    return None


def created_at(fields: Mapping[str, Any]) -> int:
    """When the source says the reply was created, in seconds since the epoch: OpenAI chat's
    ``created``, Ollama's ``created_at`` and Vertex's ``createTime`` (ISO 8601); ``0`` for a
    source that says nothing (Anthropic, Bedrock, Cohere, Gemini's own API)."""
    for key in ("created_at", "created", "createTime"):
        when = _epoch(fields.get(key))
        if when is not None:
            return when
    return 0


def resource_usage(usage: Usage | None) -> dict[str, Any] | None:
    """Responses' usage object is required whole: written only when the input and output
    counts are known (its detail counts, required too, are then ``0`` when unreported).
    ``cache_write_tokens`` is OpenAI's (its SDK requires it); the specification allows it."""
    if usage is None or usage.input_tokens is None or usage.output_tokens is None:
        return None
    details = {"cached_tokens": usage.cache_read_tokens or 0,
               "cache_write_tokens": usage.cache_write_tokens or 0}
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": details,
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _tools(names: Iterable[str]) -> list[dict[str, Any]]:
    """The function tools the reply called, once each (what it had is not known beyond)."""
    seen: dict[str, None] = {}
    for name in names:
        seen.setdefault(name, None)
    return [{"type": "function", "name": name, "description": None, "parameters": None,
             "strict": None} for name in seen]


def resource(
    *,
    id: str | None,
    model: str | None,
    status: str,
    fields: Mapping[str, Any],
    output: list[dict[str, Any]],
    usage: Usage | None,
    error: dict[str, Any] | None = None,
    incomplete_details: dict[str, Any] | None = None,
    tools: Iterable[str] = (),
) -> dict[str, Any]:
    """The whole ``response`` object; ``fields`` are the source's message-level fields
    (creation time, service tier)."""
    created = created_at(fields)
    tier = fields.get("service_tier")
    values: dict[str, Any] = {
        "id": id or "", "object": "response", "created_at": created, "status": status,
        "background": False, "completed_at": created if status == "completed" else None,
        "error": error, "incomplete_details": incomplete_details, "instructions": None,
        "max_output_tokens": None, "max_tool_calls": None, "model": model or "",
        "output": output, "parallel_tool_calls": True, "presence_penalty": 0.0,
        "frequency_penalty": 0.0, "previous_response_id": None,
        "prompt_cache_key": None, "reasoning": None, "safety_identifier": None,
        "service_tier": tier if tier in _TIERS else "default",
        "store": False, "temperature": 1.0, "text": {"format": {"type": "text"}},
        "tool_choice": "auto", "tools": _tools(tools), "top_logprobs": 0, "top_p": 1.0,
        "truncation": "disabled", "usage": resource_usage(usage), "user": None,
        "metadata": {},
    }
    return {key: values[key] for key in RESOURCE_FIELDS}
