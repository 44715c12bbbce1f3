"""A non-stream JSON body (a request with ``stream: false``) read by a streaming source: the
events that fold to the same ``Response`` as ``from_native(body)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..events import (
    BlockKind,
    BlockStart,
    BlockStop,
    ChoiceEnd,
    CitationDelta,
    Event,
    MessageStart,
    MessageStop,
    MetadataUpdate,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ..response import Block, Response
from ..wire.http import is_nonstream_path
from ._engine import decode_all, new_decoder

__all__ = ["nonstream_events", "response_events", "wants_body"]

_JSON = "application/json"


def wants_body(content_type: str | None, path: str | None) -> bool:
    """Whether a reply is read whole: a JSON body that is no stream (a stream is SSE, NDJSON,
    an event stream, or Gemini's JSON array from ``:streamGenerateContent``)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != _JSON:
        return False
    return is_nonstream_path(path) or "streamGenerateContent" not in (path or "")


def nonstream_events(body: bytes, provider: str | None) -> list[Event]:
    """The events of a whole JSON body: ``from_native``'s ``Response`` as events when it is
    one JSON object, else (a stream after all, under a JSON content type) its decoded events."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        return _decoded(body, provider)
    from_native = _from_native()
    if from_native is None:
        return _decoded(body, provider)
    return response_events(from_native(body, provider))


def _from_native() -> Callable[[bytes, str | None], Response] | None:
    from .. import native

    found: Callable[[bytes, str | None], Response] | None = getattr(native, "from_native", None)
    return found


def _decoded(body: bytes, provider: str | None) -> list[Event]:
    events: list[Event] = []
    decode_all(new_decoder(provider), (body,), events.extend)
    return events


def response_events(response: Response) -> list[Event]:
    """Events that fold back to ``response``: its start, extras, blocks, usage and end."""
    events: list[Event] = [MessageStart(response.provider, response.model, response.id)]
    if response.extra:
        events.append(MetadataUpdate(dict(response.extra)))
    index = 0
    choices = response.choices or None
    for number, content in (
        [(choice.index, choice.content) for choice in choices] if choices
        else [(0, response.content)]
    ):
        for block in content:
            events += _block_events(block, index, number)
            index += 1
    for choice in choices or ():
        if choice.extra:
            events.append(MetadataUpdate(dict(choice.extra), choice.index))
        if choice.stop_reason is not None:
            events.append(ChoiceEnd(choice.index, choice.stop_reason, choice.native_stop_reason))
    if not choices and response.choice_extra:
        events.append(MetadataUpdate(dict(response.choice_extra), 0))
    events.append(UsageUpdate(response.usage))
    if response.complete and response.stop_reason is not None:
        events.append(
            MessageStop(response.stop_reason, response.stop_details, response.native_stop_reason)
        )
    return events


def _block_events(block: Block, index: int, choice: int) -> list[Event]:
    meta = dict(block.meta) if block.meta else None
    kind: BlockKind
    body: list[Event] = []
    name = raw = id_ = None
    signature: str | None = getattr(block, "signature", None)
    if block.type == "text":
        kind = "text"
        body.append(TextDelta(index, block.text))
        body += [CitationDelta(index, citation) for citation in block.citations]
    elif block.type == "thinking":
        kind = "redacted_thinking" if block.redacted else "thinking"
        body.append(ThinkingDelta(index, block.text))
    elif block.type == "tool_call":
        kind, id_, name = "tool_call", block.id, block.name
        body.append(ToolArgsDelta(index, _raw_arguments(block.raw_arguments, block.arguments)))
    elif block.type == "refusal":
        kind = "refusal"
        body.append(RefusalDelta(index, block.text))
    else:
        kind, name, raw = "opaque", block.kind, block.raw
    body = [event for event in body if event[1:2] != ("",)]  # (no empty deltas)
    if signature is not None:
        body.append(SignatureDelta(index, signature))
    start = BlockStart(index, kind, id_, name, choice, raw, meta)
    return [start, *body, BlockStop(index)]


def _raw_arguments(raw: str, arguments: Any) -> str:
    if raw or arguments in ({}, None):
        return raw
    return orjson.dumps(arguments).decode()
