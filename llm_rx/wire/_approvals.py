"""An approval request as events, whichever wire asked: the block every decoder gives for a
reply that stops to ask the user (see `llm_rx.events`: the ``approval_request`` kind)."""

from __future__ import annotations

from typing import Any

import orjson

from ..events import BlockStart, BlockStop, Event, ToolArgsDelta

__all__ = ["approval_events", "arguments_text"]


def arguments_text(arguments: Any) -> str:
    """The arguments as the string a tool call's fragments carry: a string as it came,
    anything else as compact JSON (nothing for none)."""
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()


def approval_events(index: int, request: Any, name: Any, arguments: Any, *,
                    server: Any = None, raw: Any = None, tool_call: Any = None,
                    meta: dict[str, Any] | None = None, stop: bool = True) -> list[Event]:
    """The ``approval_request`` block at ``index``: ``request`` the request's id, ``name`` the
    tool's, ``arguments`` its arguments (a string verbatim, else as JSON), ``server`` the MCP
    server's label, ``tool_call`` the id of the call it asks about (a UI stream's), ``raw``
    the wire's item verbatim, ``meta`` how the wire spelled it; ended unless ``stop`` is
    false (a cut stream's)."""
    meta = dict(meta or {})
    if isinstance(server, str):
        meta["server"] = server
    if isinstance(tool_call, str):
        meta["tool_call_id"] = tool_call
    out: list[Event] = [BlockStart(
        index, "approval_request", request if isinstance(request, str) else None,
        name if isinstance(name, str) else None, raw=raw, meta=meta or None)]
    text = arguments_text(arguments)
    if text:
        out.append(ToolArgsDelta(index, text))
    if stop:
        out.append(BlockStop(index))
    return out
