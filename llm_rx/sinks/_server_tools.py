"""What a server-side tool ran, as display lines: the tool, its input, a short result.

The tool comes in the wire layer's neutral shape (:class:`~llm_rx.wire.server_tools.
ServerTool`), whoever ran it; a block that says nothing more is shown by its name alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..response import OpaqueBlock
from ..wire.server_tools import server_tool

__all__ = ["ToolLines", "server_tool_lines"]

#: Lines of a tool's output (and titles of its results) shown at most.
SHOWN = 3
#: Characters of the input's first line shown in the title at most.
TITLE_INPUT = 80


@dataclass(frozen=True)
class ToolLines:
    """A server tool as the displays show it: ``title`` (the tool, and its input's first
    line, shortened), ``code`` (the whole input, when the title could not hold it: shown
    as a code block in the collapsed body), and ``details`` (the result's first lines)."""

    title: str
    code: str | None = None
    details: tuple[str, ...] = ()

    @property
    def has_body(self) -> bool:
        return self.code is not None or bool(self.details)


def server_tool_lines(block: OpaqueBlock) -> ToolLines:
    """``search: today's news``; ``code_execution: import asyncio`` with the program under
    it; ``search: 5 results`` with their titles under it."""
    tool = server_tool(block)
    output = [line for line in tool.output if line.strip()]
    if tool.input is not None:
        code = tool.input.strip("\n")
        lines = [line for line in code.splitlines() if line.strip()]
        head = lines[0].strip() if lines else ""
        shortened = len(head) > TITLE_INPUT
        head = head[: TITLE_INPUT - 1].rstrip() + "…" if shortened else head
        whole = len(lines) <= 1 and not shortened  # (the title says it all)
        return ToolLines(f"{tool.name}: {head}" if head else tool.name,
                         None if whole else code, _first(output))
    if tool.results is not None:
        count = len(tool.results)
        return ToolLines(f"{tool.name}: {count} result{'s' if count != 1 else ''}",
                         None, _first(list(tool.results)))
    if tool.exit_code is not None:
        return ToolLines(f"{tool.name}: exit code {tool.exit_code}", None, _first(output))
    if tool.outcome is not None:
        return ToolLines(f"{tool.name}: {tool.outcome}", None, _first(output))
    if output:
        return ToolLines(f"{tool.name}: output", None, _first(output))
    return ToolLines(tool.name)


def _first(lines: list[str]) -> tuple[str, ...]:
    more = len(lines) - SHOWN
    return (*lines[:SHOWN], *([f"… and {more} more"] if more > 0 else []))
