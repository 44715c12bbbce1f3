"""Anthropic Messages streams (``message_start`` ... ``message_stop`` over SSE).

Usage in ``message_start`` and ``message_delta`` is cumulative: each becomes a snapshot that
overlays the last, never a sum. Signatures (``signature_delta``, a ``redacted_thinking``
block's ``data``) stay on their block. Server-tool blocks (``server_tool_use``, ``*_result``)
and block types this library does not model are passed through as ``opaque`` blocks, emitted
whole when they end (their ``input_json_delta`` / string deltas applied), in their place.

Lenient where the meaning is clear: a delta before ``message_start`` opens the message and
the block; a repeated ``message_start`` for the same message before any content is ignored.
A frame whose ``type`` is missing or empty is passed through as an opaque ``unknown`` item
(its SSE event name is not read: only ``error`` is).
Strict where it is not: a delta for a block that already ended is a :class:`ProtocolError`.
The terminal frame is ``message_stop``; a stream that ends without it (even after
``message_delta``) is truncated. A stream that ends properly but never had its
``message_start`` (the tail of a file, a late subscriber to a live bus) is not the whole
reply: what arrived is kept, then a :class:`ProtocolError` says the start was not seen (a
start that comes late, after a first delta, is fine). Several messages on one stream: a
``message_start`` after ``message_stop`` starts the next message, decoded afresh (any other
frame there is ignored); one with another id, or the same id after content, while a message
is open starts the next one there, the open one not complete (its open blocks never end);
one without an id then is a :class:`ProtocolError`.

A ``fallback`` block (the server moved to another model) stays an opaque block with both
models; its ``to`` model is the reply's from there on (a second ``MessageStart``), as the
non-stream body's ``model`` is the one that served the end. A ``message_start`` whose
message came whole (its ``content`` and ``stop_reason`` given) is the reply and its end.
"""

from __future__ import annotations

from typing import Any

import orjson
from orjson import JSONDecodeError

from ..errors import (
    IncompleteStreamError,
    LlmRxError,
    ProtocolError,
    WireFormatError,
)
from ..events import (
    BlockStart,
    BlockStop,
    ChoiceEnd,
    CitationDelta,
    Event,
    MessageStart,
    MessageStop,
    MetadataUpdate,
    Opaque,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ..response import StopReason
from ._anthropic_opaque import OpaqueBlock, opaque_delta, opaque_start
from ._anthropic_tables import (
    MESSAGE_DELTA_FIELDS,
    MESSAGE_FIELDS,
    STOP,
    TEXT_FIELDS,
    THINKING_FIELDS,
    TOOL_FIELDS,
    extras,
)
from ._checks import MAX_DEPTH, SHALLOW, array, mapping, optional_string, string
from .anthropic_usage import usage_from_anthropic
from .base import SSEPayloadDecoder, new_event
from .http import in_band_error
from .sniffing import foreign_frame
from .sse import SSEEvent

__all__ = ["AnthropicDecoder", "usage_from_anthropic"]

_loads = orjson.loads


# delta type -> (event, the delta's string field): the deltas the hot path decodes directly
_FAST_DELTAS: dict[Any, tuple[type[Any], str]] = {
    "text_delta": (TextDelta, "text"),
    "thinking_delta": (ThinkingDelta, "thinking"),
    "input_json_delta": (ToolArgsDelta, "partial_json"),
}

class AnthropicDecoder(SSEPayloadDecoder):
    """Anthropic Messages (`stream: true`): SSE events, one JSON payload each."""

    provider = "anthropic"
    several = True  # (a second message_start: the next message)
    next_types = frozenset({"message_start"})

    def __init__(self, max_frame: int = 16 * 1024 * 1024) -> None:
        super().__init__(max_frame)
        self._fresh()
        self._handlers = {
            "content_block_delta": self._block_delta,
            "content_block_start": self._block_start,
            "content_block_stop": self._block_stop,
            "message_start": self._message_start,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
            "ping": self._ping,
            "error": self._error,
        }

    def _fresh(self) -> None:
        """The state of one message, at its start."""
        self._id: str | None = None
        self._had_start = False  # a message_start frame arrived (not only a lenient start)
        self._blocks: dict[int, int] = {}  # wire index -> block index, while open
        self._closed: set[int] = set()  # wire indexes that ended
        self._next_block = 0
        self._opaque: dict[int, OpaqueBlock] = {}
        self._stop: tuple[StopReason, Any, str | None] | None = None

    payload_names_kind = True  # every payload has its "type" (only ``error`` needs the name)

    def _data(self, data: bytes, out: list[Event]) -> None:
        try:
            frame = _loads(data)
        except JSONDecodeError:
            frame = None
        if frame.__class__ is not dict or (  # (a frame that may be nested too deep: walked)
            len(data) > SHALLOW and data.count(b"{") + data.count(b"[") > MAX_DEPTH
        ):
            frame = self._parse(data)  # (the typed error, or the depth walked)
        if frame.get("type") == "content_block_delta":
            # The hot path: a text, thinking or argument delta for an open block.
            wire = frame.get("index")
            index = self._blocks.get(wire) if wire.__class__ is int else None
            delta = frame.get("delta")
            if index is not None and delta.__class__ is dict and wire not in self._opaque:
                kind = delta.get("type")  # (a str: an object there is no key, but opaque)
                fast = _FAST_DELTAS.get(kind) if kind.__class__ is str else None
                value = delta.get(fast[1]) if fast is not None else None
                if value.__class__ is str:
                    event_type = fast[0]  # type: ignore[index]  # (value is a str: fast is set)
                    if value or event_type is not ToolArgsDelta:
                        out.append(new_event(event_type, (index, value)))
                    return
        self._frame(frame, "message", data, out)

    def _event(self, event: SSEEvent, out: list[Event]) -> None:
        if event.event != "error":  # (the payload names its kind: see ``payload_names_kind``)
            self._data(event.data, out)
        else:
            self._frame(self._parse(event.data), "error", event.data, out)

    def _frame(self, frame: dict[str, Any], name: str, data: bytes, out: list[Event]) -> None:
        kind = frame.get("type")
        if name == "error":
            kind = "error"
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            if not self.started:
                if not isinstance(kind, str):  # no "type": not an Anthropic stream at all
                    raise WireFormatError("the body is not an anthropic event stream", data)
                foreign = foreign_frame(data, self.provider)
                if foreign is not None:
                    raise foreign
                self._start(out)
            # Named by its payload alone: the SSE event name may not reach here (the framer
            # drops names of payloads that name their own kind), so it cannot decide.
            out.append(Opaque(str(kind) if kind else "unknown", frame))
            return
        if not self.started and kind != "message_start":
            self._start(out)
        handler(frame, data, out)

    def _eof(self, out: list[Event]) -> None:
        self._emit_pending_opaque(out)
        raise IncompleteStreamError("the stream ended before message_stop")

    def _fail(self, error: LlmRxError, out: list[Event], *, start: bool) -> LlmRxError:
        if self.started:
            self._emit_pending_opaque(out)
        return super()._fail(error, out, start=start)

    # -- message level ---------------------------------------------------------------------

    def _ping(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        pass

    def _error(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        error = frame.get("error")
        message = "the provider reported an error"
        if isinstance(error, dict):
            message = f"{error.get('type', 'error')}: {error.get('message', '')}".strip(": ")
        raise in_band_error(message, raw, error)

    def _message_start(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        message = mapping(frame.get("message") or {}, "message_start's message")
        message_id = message.get("id")
        if not self.started:
            self._start(out, message.get("model"), message_id)
        elif self._had_start:
            if message_id == self._id and self._next_block == 0:
                return  # the same message_start again, before any content: harmless
            if not isinstance(message_id, str) or not message_id:
                raise ProtocolError("message_start without an id while a message is open", raw)
            self._emit_pending_opaque(out)  # (the open message ends here, not complete)
            self._fresh()
            self._start(out, message.get("model"), message_id)
        else:  # the message opened leniently on an early frame: this fills in what it lacked
            model = message.get("model")
            out.append(MessageStart(
                self.provider,
                model if isinstance(model, str) and model else None,
                message_id if isinstance(message_id, str) and message_id else None,
            ))
        self._had_start = True
        self._id = message_id
        extra = extras(message, MESSAGE_FIELDS)
        if extra:
            out.append(MetadataUpdate(extra))
        usage = message.get("usage")
        if isinstance(usage, dict):
            out.append(UsageUpdate(usage_from_anthropic(usage)))
        for position, block in enumerate(array(message.get("content") or [], "content")):
            self._block_start({"index": -1 - position, "content_block": block}, raw, out)
            self._block_stop({"index": -1 - position}, raw, out)
        if message.get("stop_reason"):  # (a message given whole at its start: its end too)
            self._stopped(message, out)

    def _message_delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        delta = mapping(frame.get("delta") or {}, "message_delta's delta")
        extra = {
            key: value
            for key, value in delta.items()
            if key not in ("stop_reason", "stop_details") and value is not None
        }
        # Fields beside the delta (``context_management``) belong to the message too.
        extra.update(extras(frame, MESSAGE_DELTA_FIELDS) or {})
        if extra:
            out.append(MetadataUpdate(extra))
        self._stopped(delta, out)
        usage = frame.get("usage")
        if isinstance(usage, dict):
            out.append(UsageUpdate(usage_from_anthropic(usage)))

    def _stopped(self, fields: dict[str, Any], out: list[Event]) -> None:
        """A ``message_delta``'s ``stop_reason`` and ``stop_details`` (or a whole message's)."""
        native = optional_string(fields.get("stop_reason") or None, "stop_reason")
        if native:
            reason, details = STOP.get(native, "end_turn"), fields.get("stop_details")
            words = optional_string(
                details.get("explanation") or details.get("type") or None,
                "stop_details' explanation") if isinstance(details, dict) else None
            self._stop = (reason, {"stop_reason": native, "stop_details": details}, words)
            out.append(ChoiceEnd(0, reason, native))

    def _message_stop(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._emit_pending_opaque(out, close=True)
        for wire in list(self._blocks):
            out.append(BlockStop(self._blocks.pop(wire)))
        if not self._had_start:
            raise ProtocolError("the reply ended, but its start (message_start) was not seen: "
                                "only its tail arrived", raw)
        self.finished = True
        if self._stop is None:
            out.append(MessageStop("end_turn", "inferred: message_stop without a stop_reason"))
        else:
            reason, native, words = self._stop
            out.append(MessageStop(reason, words, native))

    # -- blocks ----------------------------------------------------------------------------

    def _block_start(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        wire = frame.get("index")
        block = frame.get("content_block")
        if not isinstance(wire, int) or not isinstance(block, dict):
            raise ProtocolError("content_block_start without an index or a block", raw)
        if wire in self._blocks or wire in self._closed:
            raise ProtocolError(f"content_block_start for block {wire}, which already started", raw)
        index = self._next_block
        self._next_block += 1
        self._blocks[wire] = index
        kind = block.get("type")
        if kind == "text":
            out.append(BlockStart(index, "text", meta=extras(block, TEXT_FIELDS)))
            if block.get("text"):
                out.append(TextDelta(index, string(block["text"], "a text block's text")))
            for citation in array(block.get("citations") or [], "citations"):
                out.append(CitationDelta(index, citation))
        elif kind == "thinking":
            out.append(BlockStart(index, "thinking", meta=extras(block, THINKING_FIELDS)))
            if block.get("thinking"):
                out.append(ThinkingDelta(index, string(block["thinking"], "thinking")))
            if block.get("signature"):
                out.append(SignatureDelta(index, string(block["signature"], "signature")))
        elif kind == "redacted_thinking":
            out.append(BlockStart(index, "redacted_thinking"))
            if isinstance(block.get("data"), str):
                out.append(SignatureDelta(index, block["data"]))
        elif kind == "tool_use":
            out.append(
                BlockStart(
                    index,
                    "tool_call",
                    id=optional_string(block.get("id"), "a tool_use id"),
                    name=optional_string(block.get("name"), "a tool_use name"),
                    meta=extras(block, TOOL_FIELDS),
                )
            )
            given = block.get("input")
            if given:  # input given whole at the start (no deltas follow)
                out.append(ToolArgsDelta(index, orjson.dumps(given).decode()))
        else:
            served = block.get("to") if kind == "fallback" else None  # (it serves the rest)
            model = served.get("model") if isinstance(served, dict) else None
            if isinstance(model, str) and model:
                out.append(MessageStart(self.provider, model, None))
            self._opaque[wire] = (index, dict(block), [], {})

    def _block_delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        wire = frame.get("index")
        delta = frame.get("delta")
        if not isinstance(delta, dict):
            raise ProtocolError("content_block_delta without a delta", raw)
        if wire in self._closed:
            raise ProtocolError(f"a delta for block {wire}, which already ended", raw)
        kind = delta.get("type")
        opaque = self._opaque.get(wire) if isinstance(wire, int) else None
        if opaque is not None:
            opaque_delta(opaque, delta)
            return
        index = self._blocks.get(wire) if isinstance(wire, int) else None
        if index is None:  # a delta before its block started: open one of the delta's kind
            if not isinstance(wire, int):
                raise ProtocolError("content_block_delta without an index", raw)
            implied = {"thinking_delta": "thinking", "signature_delta": "thinking",
                       "input_json_delta": "tool_use"}.get(str(kind), "text")
            self._block_start({"index": wire, "content_block": {"type": implied}}, raw, out)
            index = self._blocks[wire]
        if kind == "text_delta":
            out.append(TextDelta(index, string(delta.get("text", ""), "text_delta's text")))
        elif kind == "thinking_delta":
            out.append(ThinkingDelta(index, string(delta.get("thinking", ""), "thinking")))
        elif kind == "input_json_delta":
            fragment = string(delta.get("partial_json", ""), "partial_json")
            if fragment:
                out.append(ToolArgsDelta(index, fragment))
        elif kind == "signature_delta":
            out.append(SignatureDelta(index, string(delta.get("signature", ""), "signature")))
        elif kind == "citations_delta":
            out.append(CitationDelta(index, delta.get("citation")))
        else:
            out.append(Opaque(str(kind), frame))

    def _block_stop(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        wire = frame.get("index")
        if not isinstance(wire, int) or wire in self._closed:
            raise ProtocolError(f"content_block_stop for block {wire}, which is not open", raw)
        self._closed.add(wire)
        opaque = self._opaque.pop(wire, None)
        if opaque is not None:
            self._blocks.pop(wire, None)
            out.append(opaque_start(opaque))
            out.append(BlockStop(opaque[0]))
            return
        index = self._blocks.pop(wire, None)
        if index is None:
            raise ProtocolError(f"content_block_stop for block {wire}, which never started", raw)
        out.append(BlockStop(index))

    def _emit_pending_opaque(self, out: list[Event], *, close: bool = False) -> None:
        """Emit the server-tool blocks still open; ``close`` them when the message ended
        (a cut stream leaves them open: they never ended)."""
        for wire in list(self._opaque):
            opaque = self._opaque.pop(wire)
            self._blocks.pop(wire, None)
            out.append(opaque_start(opaque))
            if close:
                out.append(BlockStop(opaque[0]))
