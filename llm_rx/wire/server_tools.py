"""What a server-side tool ran, in one shape: a derived view of an ``OpaqueBlock``.

Server tools (a web search, code the provider runs, a file search) arrive as ``OpaqueBlock``\\ s
kept verbatim, so ``to_native`` and the encoders give them back as they came. How each
provider spells the tool, its input and its result is wire knowledge, read here:
``server_tool(block)`` gives a :class:`ServerTool` — the tool, what it was given (a query,
code, a command), and a short result (how many results and their titles; an exit code or an
outcome and the output's lines). A block that says none of this is named by its kind alone.

Read: Anthropic ``server_tool_use`` and its ``*_tool_result`` blocks, OpenAI Responses
``web_search_call`` / ``code_interpreter_call`` / ``file_search_call`` / ``mcp_call`` /
``image_generation_call`` / ``apply_patch_call``, Gemini ``executableCode`` /
``codeExecutionResult`` parts, Groq ``executed_tools``, Bedrock ``toolUse`` / ``toolResult``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ..response import OpaqueBlock

__all__ = ["ServerTool", "server_tool"]

#: Input fields worth showing, in this order of preference.
_INPUT_FIELDS = ("query", "queries", "command", "code", "url", "pattern", "path", "snippet",
                 "revised_prompt")


@dataclass(frozen=True, slots=True)
class ServerTool:
    """A server-side tool's call or result, in a provider-neutral shape.

    Args:
        name: The tool (or the block's kind when the block does not name one).
        input: What it was given (a query, code, a command); `None` for a result.
        results: The titles (else URLs) of what a search found; `None` when the block lists
            none.
        exit_code: How code ran: its exit code, where the wire gives one.
        outcome: How code ran: the provider's outcome (`OUTCOME_OK`, say).
        output: The output's lines (all of them: the display shortens).
        raw: The block, verbatim.
    """

    name: str
    input: str | None = None
    results: tuple[str, ...] | None = None
    exit_code: int | None = None
    outcome: str | None = None
    output: tuple[str, ...] = ()
    raw: Any = None


def server_tool(block: OpaqueBlock) -> ServerTool:
    """The tool of an opaque block, its input and its result, as far as the block says.

    Args:
        block: A server tool's block of a reply (an `OpaqueBlock`, kept verbatim).

    Returns:
        The neutral view; a block that says none of it is named by its kind alone.
    """
    raw = block.raw if isinstance(block.raw, Mapping) else {}
    for key, read in _WRAPPED.items():  # (Gemini parts, Bedrock blocks, Groq deltas)
        inner = raw.get(key)
        if isinstance(inner, Mapping) or (key == "executed_tools" and isinstance(inner, list)):
            return read(inner, block)
    name = _text(raw.get("name")) or _tool_name(block.kind)
    given = _input(raw.get("input"), raw.get("action"), raw.get("arguments"), raw.get("operation"),
                   raw)
    if given is not None and not block.kind.endswith("_result"):
        return ServerTool(name, given, _results(raw), *_ran(raw), raw=block.raw)
    content = raw.get("content")
    results = _results(raw)
    if isinstance(content, Mapping):
        code, outcome, output = _ran(content)
        return ServerTool(name, None, results, code, outcome, output, raw=block.raw)
    return ServerTool(name, None, results, *_ran(raw), raw=block.raw)


def _tool_name(kind: str) -> str:
    """``web_search_tool_result``, ``web_search_call`` -> ``web_search``."""
    for suffix in ("_tool_result", "_result", "_call"):
        if kind.endswith(suffix) and len(kind) > len(suffix):
            return kind[: -len(suffix)]
    return kind


def _input(*holders: Any) -> str | None:
    for holder in holders:
        if isinstance(holder, str) and holder.startswith("{"):
            try:
                holder = orjson.loads(holder)
            except orjson.JSONDecodeError:
                continue
        if isinstance(holder, Mapping):
            for field in _INPUT_FIELDS:
                value = holder.get(field)
                if isinstance(value, str) and value:
                    return value
                if isinstance(value, list) and value:
                    return "; ".join(str(item) for item in value)
    return None


def _results(raw: Mapping[str, Any]) -> tuple[str, ...] | None:
    """Titles (else URLs, file names) of a search's results, where the block lists them."""
    for holder in (raw.get("content"), raw.get("results"), _get(raw, "action", "sources"),
                   _get(raw, "search_results", "results")):
        if isinstance(holder, list) and holder and all(isinstance(i, Mapping) for i in holder):
            names = [_text(item.get("title")) or _text(item.get("url"))
                     or _text(item.get("filename")) for item in holder]
            named = tuple(name for name in names if name)
            if named:
                return named
    return None


def _ran(raw: Mapping[str, Any]) -> tuple[int | None, str | None, tuple[str, ...]]:
    """Exit code, outcome and output lines of code a tool ran."""
    code = next((raw[key] for key in ("return_code", "exitCode", "exit_code")
                 if isinstance(raw.get(key), int)), None)
    outcome = _text(raw.get("outcome")) or _text(raw.get("error_code"))
    output = ""
    for key in ("stdout", "stdOut", "output", "text", "logs", "stderr", "stdErr"):
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            output = value
            break
    outputs = raw.get("outputs")
    if not output and isinstance(outputs, list):  # (Responses code interpreter)
        output = "\n".join(item["logs"] for item in outputs
                           if isinstance(item, Mapping) and isinstance(item.get("logs"), str))
    return code, outcome, tuple(output.splitlines())


def _executable(part: Mapping[str, Any], block: OpaqueBlock) -> ServerTool:
    return ServerTool("code_execution", _text(part.get("code")), raw=block.raw)


def _execution_result(part: Mapping[str, Any], block: OpaqueBlock) -> ServerTool:
    return ServerTool("code_execution", None, None, *_ran(part), raw=block.raw)


def _tool_use(use: Mapping[str, Any], block: OpaqueBlock) -> ServerTool:
    name = _text(use.get("name")) or block.kind
    return ServerTool(name, _input(use.get("input")), raw=block.raw)


def _tool_result(result: Mapping[str, Any], block: OpaqueBlock) -> ServerTool:
    name = _tool_name(_text(result.get("type")) or block.kind)
    for item in result.get("content") or ():
        ran = item.get("json") if isinstance(item, Mapping) else None
        if isinstance(ran, Mapping):
            return ServerTool(name, None, None, *_ran(ran), raw=block.raw)
    return ServerTool(name, None, _results(result), outcome=_text(result.get("status")),
                      raw=block.raw)


def _executed(tools: list[Any], block: OpaqueBlock) -> ServerTool:
    tool = next((item for item in reversed(tools) if isinstance(item, Mapping)), {})
    code, outcome, output = _ran(tool)
    return ServerTool(_text(tool.get("type")) or block.kind, _input(tool.get("arguments")),
                      _results(tool), code, outcome, output, raw=block.raw)


_WRAPPED: dict[str, Callable[[Any, OpaqueBlock], ServerTool]] = {
    "executableCode": _executable,
    "codeExecutionResult": _execution_result,
    "toolUse": _tool_use,
    "toolResult": _tool_result,
    "executed_tools": _executed,
}


def _get(raw: Mapping[str, Any], *path: str) -> Any:
    value: Any = raw
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
