"""What a server-side tool ran, as display lines: the tool, its input, a short result.

The tool comes in the wire layer's neutral shape (:class:`~llm_rx.wire.server_tools.
ServerTool`), whoever ran it; a block that says nothing more is shown by its name alone.
"""

from __future__ import annotations

from ..response import OpaqueBlock
from ..wire.server_tools import server_tool

__all__ = ["server_tool_lines"]

#: Lines of a tool's output (and titles of its results) shown at most.
SHOWN = 3
#: Characters of a one-line input shown at most.
_WIDE = 200


def server_tool_lines(block: OpaqueBlock) -> tuple[str, list[str]]:
    """``("search: today's news", [])``, ``("search: 5 results", [titles…])``: a title
    line, and the detail lines under it (shown collapsed)."""
    tool = server_tool(block)
    output = [line for line in tool.output if line.strip()]
    if tool.input is not None:
        lines = [line for line in tool.input.splitlines() if line.strip()]
        head = lines[0] if lines else ""
        head = head if len(head) <= _WIDE else head[: _WIDE - 1] + "…"
        return f"{tool.name}: {head}".rstrip(), _first(lines[1:]) + _first(output)
    if tool.results is not None:
        count = len(tool.results)
        return f"{tool.name}: {count} result{'s' if count != 1 else ''}", _first(list(tool.results))
    if tool.exit_code is not None:
        return f"{tool.name}: exit code {tool.exit_code}", _first(output)
    if tool.outcome is not None:
        return f"{tool.name}: {tool.outcome}", _first(output)
    if output:
        return f"{tool.name}: output", _first(output)
    return tool.name, []


def _first(lines: list[str]) -> list[str]:
    more = len(lines) - SHOWN
    return lines[:SHOWN] + ([f"… and {more} more"] if more > 0 else [])
