"""What a server-side tool ran, from its opaque block: the tool, its input, a short result.

Server tools (a search, code run by the provider) arrive as ``OpaqueBlock``s kept verbatim.
They are read here by what their fields say (an ``input`` or ``action`` with a query, code
or command; results with titles; an exit code and output), whoever sent them; a block that
says none of this is shown by its kind alone.
"""

from __future__ import annotations

from typing import Any

from ..response import OpaqueBlock

__all__ = ["server_tool_lines"]

#: Input fields worth showing, in this order of preference.
_INPUT_FIELDS = ("query", "queries", "command", "code", "url", "pattern")
#: Lines of a tool's output (and titles of its results) shown at most.
SHOWN = 3


def server_tool_lines(block: OpaqueBlock) -> tuple[str, list[str]]:
    """``("web_search: top world news today", [])``, ``("result: 5 results", [titles…])``:
    a title line, and the detail lines under it (shown collapsed)."""
    raw = block.raw if isinstance(block.raw, dict) else {}
    name = raw.get("name") if isinstance(raw.get("name"), str) else block.kind
    given = _input(raw)
    if given is not None:
        return f"{name}: {given}", []
    content = raw.get("content")
    if isinstance(content, list):
        titles = [item["title"] for item in content
                  if isinstance(item, dict) and isinstance(item.get("title"), str)]
        if titles:
            return f"{block.kind}: {len(titles)} results", _first(titles)
    if isinstance(content, dict) and "return_code" in content:
        lines = str(content.get("stdout") or content.get("stderr") or "").splitlines()
        return f"{block.kind}: exit code {content['return_code']}", _first(lines)
    return block.kind, []


def _first(lines: list[str]) -> list[str]:
    more = len(lines) - SHOWN
    return lines[:SHOWN] + ([f"… and {more} more"] if more > 0 else [])


def _input(raw: dict[str, Any]) -> str | None:
    for holder in (raw.get("input"), raw.get("action"), raw.get("arguments")):
        if isinstance(holder, dict):
            for field in _INPUT_FIELDS:
                value = holder.get(field)
                if isinstance(value, str) and value:
                    return value
                if isinstance(value, list) and value:
                    return "; ".join(str(item) for item in value)
    return None
