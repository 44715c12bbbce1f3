"""Scripted replies: a canonical ``Response`` written in a test, and the events it is made of.

``reply(...)`` builds the reply (``llm_rx.testing.reply``); ``response_events(response)``
gives back the events a stream of it carries, in the order a provider sends them, so any
stream encoder (``llm_rx.encoders``) writes it in its own wire. No provider knowledge here:
the encoders decide what each wire carries.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from ..events import (
    BlockStart,
    BlockStop,
    Event,
    MessageStart,
    MessageStop,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ..response import (
    Block,
    RefusalBlock,
    Response,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)

__all__ = ["SCRIPTED", "reply", "response_events"]

#: the ``provider`` of a scripted reply (no provider's: every wire re-encodes it)
SCRIPTED = "scripted"

ToolCallSpec = ToolCallBlock | Mapping[str, Any] | tuple[str, Any]


def _signature(text: str) -> str:
    """A stable stand-in for a provider's reasoning signature (the same text, the same one)."""
    return "llm-rx-scripted-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _tool_call(spec: ToolCallSpec, number: int) -> ToolCallBlock:
    if isinstance(spec, ToolCallBlock):
        return spec if spec.id else spec.model_copy(update={"id": f"call_scripted_{number}"})
    if isinstance(spec, tuple):
        name, arguments = spec
        spec = {"name": name, "arguments": arguments}
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise TypeError(f"a tool call is a ToolCallBlock, a (name, arguments) pair or a dict "
                        f"with a 'name', not {spec!r}")
    arguments = spec.get("arguments", {})
    raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    try:
        parsed = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        parsed = None
    return ToolCallBlock(id=spec.get("id") or f"call_scripted_{number}", name=spec["name"],
                         arguments=parsed, raw_arguments=raw)


def reply(
    text: str | None = None,
    *,
    thinking: str | None = None,
    tool_calls: Iterable[ToolCallSpec] = (),
    usage: Usage | Mapping[str, int | None] | None = None,
    stop: StopReason = "end_turn",
    model: str = "scripted",
) -> Response:
    """A reply written in a test: what the emulator's ``queue()`` answers the next request with.

    The blocks come in the order a model writes them: the reasoning, the text, then the tool
    calls. A reasoning text gets a stable stand-in signature (the wires that require one,
    Anthropic's and Bedrock's, then read it as signed; those with no place for it leave it out).

    Args:
        text: The answer's text (``None``: no text block).
        thinking: The reasoning's text (``None``: no reasoning block).
        tool_calls: Calls for the client to run: each a ``(name, arguments)`` pair, a dict
            with ``name``, ``arguments`` (an object, or the raw JSON string) and an optional
            ``id``, or a ``ToolCallBlock``. A call without an id gets ``call_scripted_N``.
        usage: The token counts (a ``Usage`` or a dict of its fields); ``None``: none reported.
        stop: The canonical stop reason (pass ``"tool_use"`` for a turn that ends in calls).
        model: The served model's id.

    Returns:
        A complete ``Response`` (its ``provider`` is ``"scripted"``).
    """
    content: list[Block] = []
    if thinking is not None:
        content.append(ThinkingBlock(text=thinking, signature=_signature(thinking)))
    if text is not None:
        content.append(TextBlock(text=text))
    content.extend(_tool_call(spec, number) for number, spec in enumerate(tool_calls, 1))
    counts = usage if isinstance(usage, Usage) else Usage.model_validate(dict(usage or {}))
    digest = hashlib.sha256(orjson.dumps([b.model_dump(mode="json") for b in content]))
    return Response(provider=SCRIPTED, model=model, id="scripted-" + digest.hexdigest()[:24],
                    content=content, stop_reason=stop, complete=True, usage=counts)


def _block_events(index: int, block: Block) -> list[Event]:
    if isinstance(block, TextBlock):
        events: list[Event] = [BlockStart(index, "text", meta=block.meta)]
        events += [TextDelta(index, block.text)] if block.text else []
    elif isinstance(block, ThinkingBlock):
        events = [BlockStart(index, "redacted_thinking" if block.redacted else "thinking",
                             meta=block.meta)]
        events += [ThinkingDelta(index, block.text)] if block.text else []
    elif isinstance(block, ToolCallBlock):
        events = [BlockStart(index, "tool_call", block.id, block.name, meta=block.meta)]
        half = len(block.raw_arguments) // 2  # (in two fragments, as providers stream them)
        events += [ToolArgsDelta(index, part) for part in (block.raw_arguments[:half],
                                                           block.raw_arguments[half:]) if part]
    elif isinstance(block, RefusalBlock):
        events = [BlockStart(index, "refusal", meta=block.meta)]
        events += [RefusalDelta(index, block.text)] if block.text else []
    else:
        events = [BlockStart(index, "opaque", name=block.kind, raw=block.raw, meta=block.meta)]
    signature = getattr(block, "signature", None)
    if signature is not None:
        events.append(SignatureDelta(index, signature))
    events.append(BlockStop(index))
    return events


def response_events(response: Response) -> list[Event]:
    """The events of a stream that reassembles to ``response`` (its first choice): the
    message's start, each block's start, deltas, signature and stop, the usage, the stop."""
    events: list[Event] = [MessageStart(response.provider, response.model, response.id)]
    for index, block in enumerate(response.content):
        events += _block_events(index, block)
    if response.usage.reported:
        events.append(UsageUpdate(response.usage))
    if response.complete and response.stop_reason not in (None, "interrupted", "error"):
        events.append(MessageStop(response.stop_reason, response.stop_details))
    return events
