"""Words the live displays share: the usage footer, how a reply ended, a tool call's arguments."""

from __future__ import annotations

import orjson

from .._partial import pretty_so_far
from ..response import Response, ToolCallBlock, Usage

__all__ = ["answer_json_text", "arguments_text", "footer_text", "problem_text", "usage_text"]

_USAGE_LABELS = (
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("reasoning_tokens", "reasoning"),
    ("cache_read_tokens", "cache read"),
    ("cache_write_tokens", "cache write"),
)


def usage_text(usage: Usage) -> str | None:
    """``"usage: input 43 · output 282"``: only the counts that were reported (absent is not 0)."""
    counts = [
        f"{label} {value:,}"
        for name, label in _USAGE_LABELS
        if (value := getattr(usage, name)) is not None
    ]
    return "usage: " + " · ".join(counts) if counts else None


def footer_text(response: Response, final: bool) -> str:
    """The line under the reply: model, usage, and streaming or the stop reason."""
    parts = [response.model] if response.model else []
    usage = usage_text(response.usage)
    if usage:
        parts.append(usage)
    if not final:
        parts.append("streaming…")
    elif response.stop_reason is not None:
        parts.append(f"stop: {response.stop_reason}")
    return " · ".join(parts)


def problem_text(response: Response) -> str | None:
    """How a reply that did not finish ended (``None`` for a complete one, or in progress)."""
    error = response.error
    if error is None:
        return None
    if error.kind == "cancelled":
        return f"Cancelled: {error.message}"
    if error.kind == "incomplete":
        return f"Interrupted: {error.message}"
    return f"Error ({error.kind}): {error.message}"


def arguments_text(block: ToolCallBlock, final: bool = False) -> str:
    """A finished call's parsed arguments as indented JSON; in progress, the object parsed
    so far, indented too; else (arguments that never parsed: the evidence) the raw string."""
    if block.arguments is not None and block.raw_arguments:
        return orjson.dumps(block.arguments, option=orjson.OPT_INDENT_2).decode()
    so_far = None if final else pretty_so_far(block.raw_arguments)
    return block.raw_arguments if so_far is None else so_far


def answer_json_text(text: str, final: bool = False) -> str | None:
    """A JSON answer (a text that is a JSON object or array: so far, or whole when ``final``)
    as indented JSON; ``None`` for any other text, shown as it is."""
    if not final:
        return pretty_so_far(text)
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return orjson.dumps(orjson.loads(text), option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONDecodeError:  # (a cut or broken answer: shown as it arrived)
        return None
