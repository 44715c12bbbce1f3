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
from ..fold.blocks import approval_arguments
from ..response import (
    ApprovalRequestBlock,
    Block,
    RefusalBlock,
    Response,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from ..wire._approvals import approval_events

__all__ = ["SCRIPTED", "SIGNATURE_PREFIX", "reply", "response_events", "settled"]

#: the ``provider`` of a scripted reply (no provider's: every wire re-encodes it)
SCRIPTED = "scripted"

ToolCallSpec = ToolCallBlock | Mapping[str, Any] | tuple[str, Any]
ApprovalSpec = ApprovalRequestBlock | Mapping[str, Any] | tuple[str, Any]


#: the stand-in signature's fixed start: letters only, as all of it (see ``_signature``)
SIGNATURE_PREFIX = "LlmRxScripted"


def _signature(text: str) -> str:
    """A stable stand-in for a provider's reasoning signature (the same text, the same one).

    It is valid base64 that reads back the same in either alphabet: letters and digits only
    (no ``+/`` nor ``-_``), 48 characters (whole bytes, no padding). Real signatures are
    base64, and google-genai holds ``thoughtSignature`` as the bytes it decodes to and writes
    them back in its own alphabet: a ``-`` came back ``+``, a signature the next turn lost.
    """
    digest = hashlib.sha256(text.encode()).hexdigest()
    return (SIGNATURE_PREFIX + digest)[:48]


def _parsed(raw: str) -> Any:
    try:
        return orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        return None


def _whole_call(block: ToolCallBlock, number: int) -> ToolCallBlock:
    """``block`` with an id (``call_scripted_N``) and both forms of its arguments: the one a
    test gave (``arguments``, or the ``raw_arguments`` string) makes the other, so every wire
    carries them (some write the string, some the object)."""
    update: dict[str, Any] = {} if block.id else {"id": f"call_scripted_{number}"}
    given = block.model_fields_set
    if isinstance(block.arguments, str) and not block.raw_arguments:
        update |= {"arguments": _parsed(block.arguments), "raw_arguments": block.arguments}
    elif block.raw_arguments and "arguments" not in given:
        update["arguments"] = _parsed(block.raw_arguments)
    elif not block.raw_arguments and block.arguments not in ({}, None):
        update["raw_arguments"] = orjson.dumps(block.arguments).decode()
    return block.model_copy(update=update) if update else block


def _tool_call(spec: ToolCallSpec, number: int) -> ToolCallBlock:
    if isinstance(spec, ToolCallBlock):
        return _whole_call(spec, number)
    if isinstance(spec, tuple):
        name, arguments = spec
        spec = {"name": name, "arguments": arguments}
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise TypeError(f"a tool call is a ToolCallBlock, a (name, arguments) pair or a dict "
                        f"with a 'name', not {spec!r}")
    arguments = spec.get("arguments", {})
    raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    return ToolCallBlock(id=spec.get("id") or f"call_scripted_{number}", name=spec["name"],
                         arguments=_parsed(raw), raw_arguments=raw)


def _approval(spec: ApprovalSpec, number: int) -> ApprovalRequestBlock:
    if isinstance(spec, tuple):
        name, arguments = spec
        spec = {"name": name, "arguments": arguments}
    if isinstance(spec, Mapping):
        if not isinstance(spec.get("name"), str):
            raise TypeError(f"an approval request names its tool ('name'), not {spec!r}")
        arguments = spec.get("arguments", {})
        if isinstance(arguments, str):  # (the raw JSON, as a tool call's may be given)
            arguments = approval_arguments(arguments)
        spec = ApprovalRequestBlock(id=spec.get("id"), name=spec["name"], arguments=arguments,
                                    server=spec.get("server"))
    if not isinstance(spec, ApprovalRequestBlock):
        raise TypeError(f"an approval request is an ApprovalRequestBlock, a (name, arguments) "
                        f"pair or a dict with a 'name', not {spec!r}")
    return spec if spec.id else spec.model_copy(update={"id": f"mcpr_scripted_{number}"})


def settled(response: Response) -> Response:
    """``response`` as the emulator writes it: each tool call with an id and both forms of
    its arguments (a reply queued as JSON may give only one; see ``_whole_call``), each
    approval request with an id (what the decision names)."""
    content: list[Block] = []
    number = asked = 0
    for block in response.content:
        if isinstance(block, ToolCallBlock):
            number += 1
            block = _whole_call(block, number)
        elif isinstance(block, ApprovalRequestBlock):
            asked += 1
            block = _approval(block, asked)
        content.append(block)
    if all(new is old for new, old in zip(content, response.content, strict=True)):
        return response
    return response.model_copy(update={"content": content})


def _usage(usage: Usage | Mapping[str, int | None] | None) -> Usage:
    if isinstance(usage, Usage):
        return usage
    counts = [name for name in Usage.model_fields if name != "native"]
    unknown = sorted(set(usage or {}) - {*counts, "native"})
    if unknown:  # (a provider's own name would be a reply with no usage, silently)
        raise ValueError(f"usage has no field {', '.join(map(repr, unknown))}; its fields "
                         f"are {', '.join(counts)}")
    return Usage.model_validate(dict(usage or {}))


def reply(
    text: str | None = None,
    *,
    thinking: str | None = None,
    tool_calls: Iterable[ToolCallSpec] = (),
    approval_requests: Iterable[ApprovalSpec] = (),
    usage: Usage | Mapping[str, int | None] | None = None,
    stop: StopReason = "end_turn",
    model: str = "scripted",
) -> Response:
    """A reply written in a test: what the emulator's ``queue()`` answers the next request with.

    The blocks come in the order a model writes them: the reasoning, the text, the tool
    calls, then the approval requests. A reasoning text gets a stable stand-in signature,
    valid base64 as real ones are (the wires that require one, Anthropic's and Bedrock's,
    then read it as signed; those with no place for it leave it out).

    Args:
        text: The answer's text (``None``: no text block).
        thinking: The reasoning's text (``None``: no reasoning block).
        tool_calls: Calls for the client to run: each a ``(name, arguments)`` pair, a dict
            with ``name``, ``arguments`` (an object, or the raw JSON string) and an optional
            ``id``, or a ``ToolCallBlock``. A call without an id gets ``call_scripted_N``.
        approval_requests: Tools the reply asks the user to approve before they run (a
            remote MCP server's): each a ``(name, arguments)`` pair, a dict with ``name``,
            ``arguments`` (an object, or the raw JSON string) and an optional ``server``
            and ``id``, or an
            ``ApprovalRequestBlock``. A request without an id gets ``mcpr_scripted_N``.
        usage: The token counts (a ``Usage`` or a dict of its fields: another key, such as a
            provider's ``prompt_tokens``, is a ``ValueError``); ``None``: none reported.
        stop: The canonical stop reason (pass ``"tool_use"`` for a turn that ends in calls
            or approval requests).
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
    content.extend(_approval(spec, number)
                   for number, spec in enumerate(approval_requests, 1))
    counts = _usage(usage)
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
    elif isinstance(block, ApprovalRequestBlock):
        events = approval_events(index, block.id, block.name, block.arguments,
                                 server=block.server, raw=block.raw, meta=block.meta,
                                 stop=False)
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
