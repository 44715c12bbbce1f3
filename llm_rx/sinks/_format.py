"""Words the live displays share: the usage footer, how a reply ended, a tool call's arguments."""

from __future__ import annotations

import orjson

from ..fold.partial import pretty_so_far
from ..response import ApprovalRequestBlock, Response, ThinkingBlock, ToolCallBlock, Usage

__all__ = [
    "FOOTER_WIDTH",
    "answer_json_text",
    "approval_text",
    "arguments_text",
    "ending_text",
    "footer_text",
    "problem_text",
    "thinking_title",
    "usage_text",
]

#: The footer is broken into lines no longer than this (a terminal of 100 columns).
FOOTER_WIDTH = 100

_USAGE_LABELS = (
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("reasoning_tokens", "reasoning"),
    ("cache_read_tokens", "cache read"),
    ("cache_write_tokens", "cache write"),
)


#: Counts that only mean something once the reply is over: while it streams, a provider may
#: report a placeholder (an output count of 1 at the start) that is no count of the reply.
_FINAL_ONLY = frozenset({"output_tokens", "reasoning_tokens"})


def usage_text(usage: Usage, final: bool = True) -> str | None:
    """``"usage: input 43 · output 282"``: only the counts that were reported (absent is not 0);
    not ``final`` (streaming), only the counts known before the reply (input, cache)."""
    counts = [
        f"{label} {value:,}"
        for name, label in _USAGE_LABELS
        if (value := getattr(usage, name)) is not None and (final or name not in _FINAL_ONLY)
    ]
    return "usage: " + " · ".join(counts) if counts else None


def footer_text(
    response: Response, final: bool, width: int = FOOTER_WIDTH, notes: tuple[str, ...] = ()
) -> str:
    """The line under the reply: model, usage counts, and streaming or the stop reason, then
    the ``notes`` of the operators after the display (the price); broken between its parts
    into lines no wider than ``width`` (a part is never split)."""
    usage = usage_text(response.usage, final)
    state = "streaming…" if not final else (
        None if response.stop_reason is None else f"stop: {response.stop_reason}")
    parts = [response.model] if response.model else []
    if usage:
        label, _, counts = usage.partition(" ")
        first, *others = counts.split(" · ")
        parts += [f"{label} {first}", *others]
    if state:
        parts.append(state)
    parts.extend(notes)
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return "\n".join(lines)


def thinking_title(block: ThinkingBlock, streaming: bool) -> str:
    """``"thinking (202 characters)"``; ``"thinking…"`` before any text arrived; a redacted
    block (its text sent only encrypted) says so, with the size of its data, and one that
    ended with no text (only its signature) says that no text was sent."""
    if block.redacted:
        size = len(block.signature or "")
        return f"thinking (redacted: {size:,} bytes of encrypted data)"
    if streaming:
        return f"thinking… ({len(block.text):,} characters)" if block.text else "thinking…"
    if not block.text:  # (a provider that signs its thinking without sending the text)
        return "thinking (no text sent)"
    return f"thinking ({len(block.text):,} characters)"


def problem_text(response: Response) -> str | None:
    """How a reply that did not finish ended (``None`` for a complete one, or in progress)."""
    error = response.error
    return None if error is None else ending_text(error.kind, error.message)


def ending_text(kind: str, message: str) -> str:
    """``"Interrupted: …"`` for a stream cut short, ``"Cancelled: …"``, else ``"Error (kind): …"``
    (a provider's error is an error, not an interruption)."""
    if kind == "cancelled":
        return f"Cancelled: {message}"
    if kind == "incomplete":
        return f"Interrupted: {message}"
    return f"Error ({kind}): {message}"


def arguments_text(block: ToolCallBlock, final: bool = False) -> str:
    """A finished call's parsed arguments as indented JSON; in progress, the object parsed
    so far, indented too; else (arguments that never parsed: the evidence) the raw string."""
    if block.arguments is not None and block.raw_arguments:
        return orjson.dumps(block.arguments, option=orjson.OPT_INDENT_2).decode()
    if final and not block.raw_arguments:  # (a call with no arguments at all: {})
        return orjson.dumps(block.arguments if block.arguments is not None else {}).decode()
    so_far = None if final else pretty_so_far(block.raw_arguments)
    return block.raw_arguments if so_far is None else so_far


def approval_text(block: ApprovalRequestBlock) -> tuple[str, str]:
    """A request to approve a tool's call, in words: ``approval requested: <tool>`` (and the
    MCP server's label), and the arguments the tool would get (indented JSON; the string as
    it came when it is no JSON; nothing while they are not whole)."""
    title = f"approval requested: {block.name or '?'}"
    if block.server:
        title += f" (MCP server {block.server})"
    arguments = block.arguments
    if arguments is None:
        return title, ""
    if isinstance(arguments, str):
        return title, arguments
    return title, orjson.dumps(arguments, option=orjson.OPT_INDENT_2).decode()


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
