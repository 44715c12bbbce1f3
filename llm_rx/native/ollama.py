"""A ``Response`` as an Ollama ``/api/chat`` body, or ``/api/generate`` for a generate reply.

A reply decoded from ``/api/generate`` (its blocks say so, or it carried ``context``) comes
back as a generate body (``response``, ``thinking``, ``context``); anything else as a chat
body (``message`` with ``content``, ``thinking``, ``tool_calls``). Tool-call ``arguments`` are
objects, as Ollama sends them; arguments that never parsed come back as
``{"_raw_arguments": "..."}`` rather than being lost. Timings and ``created_at`` are the
stream's (an Ollama reply's); a reply of another provider has none.
"""

from __future__ import annotations

from typing import Any

from ..response import (
    Block,
    RefusalBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from ._shared import arguments_object
from ._tables import STOP, ollama_usage

__all__ = ["to_ollama"]

_DONE = STOP["ollama"]
#: the done line's counts (the usage) and timings, in Ollama's order
_DONE_FIELDS = ("total_duration", "load_duration", "prompt_eval_count",
                "prompt_eval_duration", "eval_count", "eval_duration")


def _generate(response: Response) -> bool:
    if "context" in response.extra and response.provider == "ollama":
        return True
    return any(
        (block.meta or {}).get("endpoint") == "generate"
        for block in response.content
        if isinstance(block, (TextBlock, ThinkingBlock))
    )


def _tool_call(call: ToolCallBlock, same_provider: bool) -> dict[str, Any]:
    # The wire's extra fields of a call (``function.index``) are Ollama's only if it came
    # from Ollama: ``call.<key>`` and ``function.<key>`` in the block's meta.
    meta = (call.meta or {}) if same_provider else {}
    arguments = arguments_object(call)
    out: dict[str, Any] = {"id": call.id} if call.id else {}
    function: dict[str, Any] = {}
    for key, value in meta.items():
        place, _, name = key.partition(".")
        if place == "call":
            out[name] = value
        elif place == "function":
            function[name] = value
    function["name"] = call.name or ""
    function["arguments"] = arguments
    out["function"] = function
    return out


def _texts(blocks: list[Block]) -> tuple[str, str | None]:
    text = "".join(
        block.text for block in blocks if isinstance(block, (TextBlock, RefusalBlock))
    )
    thinking = [block.text for block in blocks
                if isinstance(block, ThinkingBlock) and not block.redacted]
    return text, "".join(thinking) if thinking else None


def to_ollama(response: Response) -> dict[str, Any]:
    """The body of ``POST /api/chat`` (or ``/api/generate``) with ``"stream": false``."""
    same = response.provider == "ollama"
    extra = dict(response.extra) if same else {}
    body: dict[str, Any] = {"model": response.model or ""}
    if "created_at" in extra:
        body["created_at"] = extra.pop("created_at")
    text, thinking = _texts(response.content)
    if _generate(response):
        body["response"] = text
        if thinking is not None:
            body["thinking"] = thinking
    else:
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if thinking is not None:
            message["thinking"] = thinking
        calls = [block for block in response.content if isinstance(block, ToolCallBlock)]
        if calls:
            message["tool_calls"] = [_tool_call(call, same) for call in calls]
        if same:
            for key, value in response.choice_extra.items():
                message.setdefault(key, value)
        body["message"] = message
    body["done"] = response.complete
    native = response.native_stop_reason if same else None
    if isinstance(native, str):
        body["done_reason"] = native
    elif response.complete and response.stop_reason in _DONE:
        body["done_reason"] = _DONE[response.stop_reason]
    if "context" in extra:
        body["context"] = extra.pop("context")
    counts = ollama_usage(response.usage)  # (the canonical counts, an Ollama reply's too)
    for key in _DONE_FIELDS:
        if key in counts:
            body[key] = counts[key]
        elif key.endswith("_duration") and key in extra:
            body[key] = extra.pop(key)
    if response.logprobs and response.logprobs.get("content"):
        body["logprobs"] = list(response.logprobs["content"])
    for key, value in extra.items():
        body.setdefault(key, value)
    return body
