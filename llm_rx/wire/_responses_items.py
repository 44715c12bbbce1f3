"""The Responses API's wire, as tables: which events carry which parts, which items the
client acts on, and the state of an output item and of each of its blocks while it streams."""

from __future__ import annotations

from typing import Any

from ..events import BlockKind, BlockStart, BlockStop, Event, RefusalDelta, TextDelta, ThinkingDelta
from ..response import StopReason, Usage
from ._approvals import approval_events
from ._boundary import count_of
from ._checks import optional_string

__all__ = [
    "CLIENT_ITEMS", "DELTAS", "INCOMPLETE", "ITEM_CONTENT", "ITEM_STREAMS", "MODELLED", "NEXT",
    "PARTS",
    "SNAPSHOT_FIELDS", "TEXT", "TOOL_ITEMS", "Item", "Part", "Spec", "call_fields",
    "error_message", "pending_block", "usage_from_responses",
]

# Response fields with a canonical place (the rest are metadata, given back by to_native).
SNAPSHOT_FIELDS = frozenset({"id", "model", "output", "usage"})
# Item fields that are block content or the block's own (the rest are kept in its meta;
# ``content`` and ``summary`` as empty lists, which stand for their keys).
ITEM_CONTENT = frozenset({"id", "encrypted_content", "arguments", "input", "call_id", "name"})
TOOL_ITEMS = {"function_call": "arguments", "custom_tool_call": "input"}
MODELLED = frozenset({"message", "reasoning", *TOOL_ITEMS})  # every other item is opaque
CLIENT_ITEMS = frozenset(  # items the client acts on: the stop is tool_use
    {"function_call", "custom_tool_call", "computer_call", "local_shell_call", "shell_call",
     "apply_patch_call", "mcp_approval_request"}
)
INCOMPLETE: dict[str, StopReason] = {"max_output_tokens": "max_tokens",
                                      "content_filter": "content_filter",
                                      "steered": "interrupted"}
# After a terminal event, the events that begin the next response on the same stream (an
# ``error``: the next request refused, WebSocket mode's ``WebSocketErrorEvent``).
NEXT = frozenset({"response.created", "response.queued", "response.in_progress", "error"})
# Text parts: event prefix -> (item type, channel, the frame's part number key, block kind,
# part type). Each has a ``.delta`` and a ``.done`` (the text whole) event.
Spec = tuple[str, str, str, BlockKind, str]
PARTS: dict[str, Spec] = {
    "response.output_text": ("message", "content", "content_index", "text", "output_text"),
    "response.refusal": ("message", "content", "content_index", "refusal", "refusal"),
    "response.reasoning_summary_text": ("reasoning", "summary", "summary_index", "thinking",
                                        "summary_text"),
    "response.reasoning_text": ("reasoning", "content", "content_index", "thinking",
                                "reasoning_text"),
    # (the Open Responses specification's name of the same events; Perplexity's other
    # ``response.reasoning.*`` progress events are none of these: opaque)
    "response.reasoning": ("reasoning", "content", "content_index", "thinking",
                           "reasoning_text"),
}
TEXT = PARTS["response.output_text"]
DELTAS: dict[str, type[Any]] = {"text": TextDelta, "thinking": ThinkingDelta,
                                 "refusal": RefusalDelta}
# Streamed fields of opaque items, applied to one cut before its .done: event -> path.
ITEM_STREAMS = {
    "response.code_interpreter_call_code.delta": ("code",),
    "response.mcp_call_arguments.delta": ("arguments",),
    "response.apply_patch_call_operation_diff.delta": ("operation", "diff"),
}



def usage_from_responses(raw: dict[str, Any]) -> Usage:
    """Canonical usage from a Responses usage object (``input_tokens`` already counts the
    cached ones; ``output_tokens`` the reasoning ones, corrected where a host's does not)."""
    prompt = count_of(raw.get("input_tokens"))
    output = count_of(raw.get("output_tokens"))
    total = count_of(raw.get("total_tokens"))
    in_details = raw.get("input_tokens_details")
    out_details = raw.get("output_tokens_details")
    in_details = in_details if isinstance(in_details, dict) else {}
    reasoning = (
        count_of(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else None
    )
    if (
        output is not None and reasoning and prompt is not None and total is not None
        and prompt + output != total and prompt + output + reasoning == total
    ):
        output += reasoning  # a host whose output_tokens excludes reasoning
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_tokens=count_of(in_details.get("cached_tokens")),
        cache_write_tokens=count_of(in_details.get("cache_write_tokens")),
        reasoning_tokens=reasoning,
        native=raw,
    )


class Part:
    """One block of an item: where it is, whether deltas or citations came for it, and the
    strings its deltas brought (joined once, at its ``.done``)."""

    __slots__ = ("cited", "index", "kind", "open", "streamed", "texts")

    def __init__(self, index: int, kind: BlockKind) -> None:
        self.index = index
        self.kind = kind
        self.open = True
        self.streamed = False
        self.cited = False
        self.texts: list[str] = []


class Item:
    """One output item: its blocks by part, its reserved position, its state."""

    __slots__ = ("done", "fields", "id", "key", "parts", "pending", "reserved", "streams",
                 "type")

    def __init__(self, key: Any, item: dict[str, Any], reserved: int) -> None:
        self.key = key
        self.type = str(item.get("type"))
        self.id = item.get("id")
        self.fields = {
            key: [] if key in ("content", "summary") else value
            for key, value in item.items()
            if key not in ITEM_CONTENT
        }
        self.parts: dict[tuple[str, Any], Part] = {}
        self.reserved: int | None = reserved
        self.done = False
        # An opaque item as it stands, until its .done gives it whole.
        self.pending = dict(item) if self.type not in MODELLED else None
        self.streams: dict[tuple[str, ...], list[str]] = {}  # its streamed fields' deltas

    def as_it_stands(self) -> dict[str, Any] | None:
        """The opaque item with the deltas of its streamed fields (joined once, here)."""
        pending = self.pending
        if pending is not None:
            for path, parts in self.streams.items():
                node = pending
                for name in path[:-1]:
                    child = node.get(name)
                    node[name] = node = dict(child) if isinstance(child, dict) else {}
                previous = node.get(path[-1])
                node[path[-1]] = (previous if isinstance(previous, str) else "") + "".join(parts)
            self.streams = {}
        return pending


def pending_block(index: int, kind: str, body: Any, item_id: Any, *,
                  stop: bool) -> list[Event]:
    """The block of an item the library keeps whole (given at its ``.done``, or as it stood
    when the stream was cut): an ``mcp_approval_request`` is an approval request (its id,
    tool name, arguments and ``server_label``), every other one an ``opaque`` block."""
    if kind == "mcp_approval_request" and isinstance(body, dict):
        return approval_events(index, body.get("id"), body.get("name"), body.get("arguments"),
                               server=body.get("server_label"), raw=body,
                               meta={"item_id": item_id}, stop=stop)
    out: list[Event] = [BlockStart(index, "opaque", name=kind, raw=body,
                                   meta={"item_id": item_id})]
    if stop:
        out.append(BlockStop(index))
    return out


def call_fields(body: dict[str, Any]) -> dict[str, Any]:
    """A tool call item's id and name, checked (strings or absent)."""
    return {"id": optional_string(body.get("call_id"), "a tool call's call_id"),
            "name": optional_string(body.get("name"), "a tool call's name")}


def error_message(error: Any, default: str = "the provider reported an error") -> str:
    if not isinstance(error, dict):
        return default
    code = error.get("code") or error.get("type")
    message = error.get("message")
    if code and message:
        return f"{code}: {message}"
    return str(message or code or default)
