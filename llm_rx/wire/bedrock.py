"""AWS Bedrock ConverseStream (``application/vnd.amazon.eventstream`` messages with JSON).

The binary framing (lengths, headers, CRCs) is :mod:`llm_rx.wire.eventstream`; this module
reads the ConverseStream events on it: ``messageStart``, ``contentBlockStart`` (tool use and
server-tool blocks only: text and reasoning blocks open with their first delta),
``contentBlockDelta`` (``text``, ``reasoningContent`` text / ``signature`` /
``redactedContent``, ``toolUse`` input fragments, ``toolResult``, ``citation``),
``contentBlockStop``, ``messageStop`` and ``metadata`` (usage, metrics). Each payload's ``p``
field is AWS padding and is dropped.

End of stream: ``messageStop``, then an optional ``metadata``. The reply ends at the
``metadata`` after ``messageStop`` or at EOF after ``messageStop`` (which is complete, with
usage absent if no ``metadata`` came); a frame of another kind after ``messageStop`` is not
part of the reply. EOF before ``messageStop`` is a truncation, also in the middle of a tool
call's input (PITFALLS 21). A reply that reaches ``messageStop`` without having had its
``messageStart`` (a tail) is not whole: what arrived is kept, then a :class:`ProtocolError`
says the start was not seen. (A ``messageStart`` after content is a protocol error too: it
is another message spliced in, not a late start.) A bad CRC or malformed frame is a
:class:`WireFormatError` carrying the frame; an ``exception`` message
(``throttlingException``, ``modelStreamErrorException``, ...) is a :class:`ProviderError`.

Server-executed tools (a ``toolUse`` of type ``server_tool_use`` and ``toolResult`` blocks)
are ``opaque`` blocks, emitted whole when they end, as the Converse content block they
assemble to (``{"toolUse": {..., "input": {...}}}``). Signatures stay on their block;
``redactedContent`` is a redacted thinking block whose data is its signature.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import (
    IncompleteStreamError,
    LlmRxError,
    ProtocolError,
    WireFormatError,
)
from ..events import (
    BlockKind,
    BlockStart,
    BlockStop,
    ChoiceEnd,
    CitationDelta,
    Event,
    MessageStop,
    MetadataUpdate,
    Opaque,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ._bedrock_blocks import (
    STOP,
    Block,
    Pending,
    join_base64,
    unpadded,
    usage_from_bedrock,
)
from ._checks import MAX_DEPTH, SHALLOW, check_depth, optional_string
from .base import Decoder, new_event
from .eventstream import EventStreamDecoder, EventStreamMessage
from .http import in_band_error
from .sse import DEFAULT_MAX_FRAME

__all__ = ["BedrockDecoder", "usage_from_bedrock"]

_loads = orjson.loads


class BedrockDecoder(Decoder):
    """AWS Bedrock ConverseStream: binary event-stream messages, one JSON payload each."""

    provider = "bedrock-converse"

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        """A decoder at the start of a body.

        Args:
            max_frame: The longest event-stream message read, in bytes; a longer one is a
                `FrameTooLargeError`.
        """
        super().__init__()
        self._frames = EventStreamDecoder(max_frame)
        self._blocks: dict[int, Block] = {}  # wire index -> open block
        self._pending: dict[int, Pending] = {}  # wire index -> open server-tool block
        self._closed: set[int] = set()
        self._next_block = 0
        self._had_tools = False
        self._metadata_seen = False
        self._had_start = False  # messageStart arrived (not only a lenient start)
        self._stop: MessageStop | None = None  # messageStop arrived; MessageStop is deferred
        self._handlers = {
            "contentBlockDelta": self._block_delta,
            "contentBlockStart": self._block_start,
            "contentBlockStop": self._block_stop,
            "messageStart": self._message_start,
            "messageStop": self._message_stop,
            "metadata": self._metadata,
        }

    # -- the decoder contract --------------------------------------------------------------

    def decode(self, chunk: bytes) -> list[Event]:
        return self._run(self._frames.decode, chunk, self._messages)

    def _messages(self, frames: list[EventStreamMessage], out: list[Event]) -> None:
        self._each(frames, out, self._message)

    def flush(self) -> list[Event]:
        out: list[Event] = []
        if self.finished:
            return out
        if self._stop is not None:  # EOF after messageStop, with no metadata: complete
            self._finish(out)
            return out
        try:
            self._frames.flush()
        except WireFormatError as error:  # the bytes left cannot start a message
            raise self._fail(error, out, start=self.started) from None
        cut = self._frames.buffered
        incomplete = IncompleteStreamError(
            "the stream ended before messageStop"
            + (f" ({cut} bytes of an unfinished frame)" if cut else "")
        )
        raise self._fail(incomplete, out, start=True)

    def _fail(self, error: LlmRxError, out: list[Event], *, start: bool) -> LlmRxError:
        if self.started:
            for wire in list(self._pending):
                out.append(self._pending.pop(wire).start())
        return super()._fail(error, out, start=start)

    # -- messages --------------------------------------------------------------------------

    def _message(self, frame: EventStreamMessage, out: list[Event]) -> None:
        headers = frame.headers
        name = headers.get(":event-type")
        if self._stop is not None and name != "metadata":
            self._finish(out)  # the reply ended at messageStop; this frame is not part of it
            self.ignored_frames += 1
            return
        if headers.get(":message-type", "event") != "event":
            raise self._exception(frame, out)
        data = frame.payload
        try:
            payload = _loads(data)
        except orjson.JSONDecodeError:
            payload = None
        if payload.__class__ is not dict or (  # (a frame that may be nested too deep: walked)
            len(data) > SHALLOW and data.count(b"{") + data.count(b"[") > MAX_DEPTH
        ):
            payload = self._json(data)
        if name == "contentBlockDelta" and self.started:  # the usual frame: more text
            wire = payload.get("contentBlockIndex")
            block = self._blocks.get(wire) if wire.__class__ is int else None
            delta = payload.get("delta")
            if (block is not None and block.kind == "text" and delta.__class__ is dict
                    and len(delta) == 1 and (text := delta.get("text")).__class__ is str):
                if text:
                    out.append(new_event(TextDelta, (block.index, text)))
                return
        handler = self._handlers.get(name) if isinstance(name, str) else None
        if handler is None:
            if not self.started:
                self._start(out)
            out.append(Opaque(str(name), unpadded(payload)))
            return
        if not self.started and name != "messageStart":
            self._start(out)
        handler(payload, data, out)

    @staticmethod
    def _json(data: bytes) -> dict[str, Any]:
        try:
            payload = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise WireFormatError("an event's payload is not valid JSON", data) from None
        if not isinstance(payload, dict):
            raise WireFormatError("an event's payload is not a JSON object", data)
        check_depth(payload, data)
        return payload

    def _exception(self, frame: EventStreamMessage, out: list[Event]) -> LlmRxError:
        headers = frame.headers
        kind = str(headers.get(":exception-type") or headers.get(":error-code") or "error")
        message = headers.get(":error-message")
        if not isinstance(message, str):
            try:
                body = orjson.loads(frame.payload)
            except orjson.JSONDecodeError:
                body = None
            found = body.get("message") or body.get("Message") if isinstance(body, dict) else None
            message = found if isinstance(found, str) else ""
        raw = frame.payload or (message.encode() if message else None)
        words = f"{kind}: {message}" if message else kind
        return self._fail(in_band_error(words, raw, kind), out, start=True)

    def _message_start(self, payload: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        if self.started:
            if self._next_block == 0 and not self._closed:
                self._had_start = True  # a repeated (or late) one before any content: harmless
                return
            raise ProtocolError("messageStart while a message is open", raw)
        self._had_start = True
        self._start(out)
        extra = unpadded(payload, "role")
        if extra:
            out.append(MetadataUpdate(extra))

    def _message_stop(self, payload: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        for wire in list(self._pending):
            pending = self._pending.pop(wire)
            out.append(pending.start())
            out.append(BlockStop(pending.index))
        for wire in list(self._blocks):
            out.append(BlockStop(self._blocks.pop(wire).index))
        if not self._had_start:
            raise ProtocolError("the reply ended, but its start (messageStart) was not seen: "
                                "only its tail arrived", raw)
        extra = unpadded(payload, "stopReason")
        if extra:
            out.append(MetadataUpdate(extra))
        native = payload.get("stopReason")
        if isinstance(native, str) and native:
            reason = STOP.get(native, "end_turn")
            if reason == "end_turn" and self._had_tools:
                reason = "tool_use"
            stop = MessageStop(reason, None if reason == native else native, native)
        else:
            stop = MessageStop("end_turn", "inferred: messageStop without a stopReason")
        out.append(ChoiceEnd(0, stop.stop_reason, stop.native))
        self._stop = stop
        if self._metadata_seen:
            self._finish(out)

    def _metadata(self, payload: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        extra = unpadded(payload, "usage")
        if extra:
            out.append(MetadataUpdate(extra))
        usage = payload.get("usage")
        if isinstance(usage, dict):
            out.append(UsageUpdate(usage_from_bedrock(usage)))
        self._metadata_seen = True
        if self._stop is not None:
            self._finish(out)

    def _finish(self, out: list[Event]) -> None:
        assert self._stop is not None
        self.finished = True
        out.append(self._stop)

    # -- blocks ----------------------------------------------------------------------------

    def _wire(self, payload: dict[str, Any], raw: bytes, what: str) -> int:
        wire = payload.get("contentBlockIndex")
        if not isinstance(wire, int) or isinstance(wire, bool):
            raise ProtocolError(f"{what} without a contentBlockIndex", raw)
        return wire

    def _open(self, wire: int, kind: BlockKind, out: list[Event], **fields: Any) -> Block:
        block = self._blocks[wire] = Block(self._next_block, kind)
        self._next_block += 1
        out.append(BlockStart(block.index, kind, **fields))
        return block

    def _block_start(self, payload: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        wire = self._wire(payload, raw, "contentBlockStart")
        start = payload.get("start")
        if not isinstance(start, dict) or not start:
            raise ProtocolError("contentBlockStart without a start", raw)
        if wire in self._blocks or wire in self._pending or wire in self._closed:
            raise ProtocolError(f"contentBlockStart for block {wire}, which already started", raw)
        tool = start.get("toolUse")
        if isinstance(tool, dict) and tool.get("type") in (None, "tool_use"):
            self._had_tools = True
            extra = {key: value for key, value in tool.items()
                     if key not in ("toolUseId", "name", "input")}
            self._open(wire, "tool_call", out,
                       id=optional_string(tool.get("toolUseId"), "a toolUseId"),
                       name=optional_string(tool.get("name"), "a tool's name"),
                       meta={"toolUse": extra} if extra else None)
            given = tool.get("input")
            if given:  # input given whole at the start
                out.append(ToolArgsDelta(self._blocks[wire].index, orjson.dumps(given).decode()))
            return
        member, body = next(iter(start.items()))
        self._pending[wire] = Pending(
            self._next_block, member, dict(body) if isinstance(body, dict) else {"value": body}
        )
        self._next_block += 1

    def _block_delta(self, payload: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        # (the common case, text for an open text block, was read in ``_message``)
        delta = payload.get("delta")
        wire = self._wire(payload, raw, "contentBlockDelta")
        if not isinstance(delta, dict):
            raise ProtocolError("contentBlockDelta without a delta", raw)
        if wire in self._closed:
            raise ProtocolError(f"a delta for block {wire}, which already ended", raw)
        pending = self._pending.get(wire)
        if pending is not None:
            pending.apply(delta)
            return
        for key, value in delta.items():
            if key == "text" and isinstance(value, str):
                index = self._block(wire, "text", raw, out).index
                if value:
                    out.append(TextDelta(index, value))
            elif key == "reasoningContent" and isinstance(value, dict):
                self._reasoning(wire, value, raw, out)
            elif key == "toolUse" and isinstance(value, dict):
                index = self._block(wire, "tool_call", raw, out).index
                fragment = value.get("input")
                if isinstance(fragment, str) and fragment:
                    out.append(ToolArgsDelta(index, fragment))
            elif key == "citation":
                out.append(CitationDelta(self._block(wire, "text", raw, out).index, value))
            else:
                out.append(Opaque(f"delta.{key}", unpadded(payload)))

    def _block(self, wire: int, kind: BlockKind, raw: bytes, out: list[Event]) -> Block:
        """The open block at ``wire`` (opened as ``kind`` if none); another kind is an error."""
        block = self._blocks.get(wire)
        if block is None:
            if kind == "tool_call":
                self._had_tools = True
            return self._open(wire, kind, out)
        if block.kind != kind:
            raise ProtocolError(f"a {kind} delta for block {wire}, a {block.kind} block", raw)
        return block

    def _reasoning(self, wire: int, value: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        text = value.get("text")
        if isinstance(text, str):
            index = self._block(wire, "thinking", raw, out).index
            if text:
                out.append(ThinkingDelta(index, text))
        signature = value.get("signature")
        if isinstance(signature, str):
            block = self._blocks.get(wire) or self._open(wire, "thinking", out)
            block.signature.append(signature)
            out.append(SignatureDelta(block.index, "".join(block.signature)))
        redacted = value.get("redactedContent")
        if isinstance(redacted, str):
            block = self._block(wire, "redacted_thinking", raw, out)
            block.signature.append(redacted)
            parts = block.signature
            out.append(SignatureDelta(block.index, parts[0] if len(parts) == 1
                                      else join_base64(parts)))

    def _block_stop(self, payload: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        wire = self._wire(payload, raw, "contentBlockStop")
        if wire in self._closed:
            raise ProtocolError(f"contentBlockStop for block {wire}, which already ended", raw)
        self._closed.add(wire)
        pending = self._pending.pop(wire, None)
        if pending is not None:
            out.append(pending.start())
            out.append(BlockStop(pending.index))
            return
        block = self._blocks.pop(wire, None)
        if block is not None:  # (a stop for a block that had no delta at all opens nothing)
            out.append(BlockStop(block.index))
