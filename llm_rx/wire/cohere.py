"""Cohere v2 chat streams (``message-start`` ... ``message-end`` over SSE).

Every payload names its own ``type``. Content (``content-start`` / ``-delta`` / ``-end``,
text or thinking) and tool calls (``tool-call-start`` / ``-delta`` / ``-end``) are indexed
each on their own, so both map to one run of block indexes here. The ``tool-plan-delta``
text (what the model says it will do before its calls) is a thinking block spelled
``tool_plan``, so ``to_native`` gives it back there. Citations attach to the text block
they follow.

``message-end`` is the terminal frame: its ``finish_reason`` gives the stop reason
(``COMPLETE`` end_turn, ``MAX_TOKENS`` max_tokens, ``TOOL_CALL`` tool_use, ``STOP_SEQUENCE``
stop_sequence; ``ERROR`` and ``TIMEOUT`` are in-band provider errors), and its usage the
counts: ``tokens`` (every token) before ``billed_units``, ``cached_tokens`` the cache read.
A stream that ends without ``message-end`` is truncated.
"""

from __future__ import annotations

from typing import Any

from ..errors import IncompleteStreamError, ProviderError, WireFormatError
from ..events import (
    BlockStart,
    BlockStop,
    ChoiceEnd,
    CitationDelta,
    Event,
    MessageStop,
    Opaque,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ..response import StopReason, Usage
from .base import SSEPayloadDecoder, count_of
from .sse import SSEEvent

__all__ = ["CohereDecoder", "usage_from_cohere"]

_STOP: dict[str, StopReason] = {
    "COMPLETE": "end_turn",
    "STOP_SEQUENCE": "stop_sequence",
    "MAX_TOKENS": "max_tokens",
    "TOOL_CALL": "tool_use",
}
_FAILED = frozenset({"ERROR", "TIMEOUT"})
_KINDS = frozenset({
    "message-start", "content-start", "content-delta", "content-end", "tool-plan-delta",
    "tool-call-start", "tool-call-delta", "tool-call-end", "citation-start", "citation-end",
    "message-end", "debug",
})


def _count(value: Any) -> int | None:
    """A count as Cohere gives it: an ``int``, or a whole ``float`` (billed units)."""
    if value.__class__ is float and value.is_integer():
        return int(value)
    return count_of(value)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def usage_from_cohere(raw: dict[str, Any]) -> Usage:
    """Canonical usage from a ``message-end`` usage object."""
    tokens = _dict(raw.get("tokens"))
    billed = _dict(raw.get("billed_units"))
    input_tokens = _count(tokens.get("input_tokens"))
    output_tokens = _count(tokens.get("output_tokens"))
    return Usage(
        input_tokens=input_tokens if input_tokens is not None
        else _count(billed.get("input_tokens")),
        output_tokens=output_tokens if output_tokens is not None
        else _count(billed.get("output_tokens")),
        cache_read_tokens=_count(raw.get("cached_tokens")),
        native=raw,
    )


def _message(frame: dict[str, Any]) -> dict[str, Any]:
    """The ``delta.message`` object of a frame (``{}`` when absent)."""
    return _dict(_dict(frame.get("delta")).get("message"))


class CohereDecoder(SSEPayloadDecoder):
    """Cohere v2 chat (`stream: true`): SSE events whose payloads name their own kind."""

    provider = "cohere"
    payload_names_kind = True

    def __init__(self, max_frame: int = 16 * 1024 * 1024) -> None:
        super().__init__(max_frame)
        self._next_block = 0
        self._content: dict[Any, tuple[int, str]] = {}  # wire index -> (block, its field)
        self._tools: dict[Any, int] = {}  # wire index -> block
        self._plan: int | None = None  # the tool plan's block, while open
        self._last_text: int | None = None
        self._open: list[int] = []
        self._handlers = {
            "message-start": self._message_start,
            "content-start": self._content_start,
            "content-delta": self._content_delta,
            "content-end": self._content_end,
            "tool-plan-delta": self._tool_plan,
            "tool-call-start": self._tool_start,
            "tool-call-delta": self._tool_delta,
            "tool-call-end": self._tool_end,
            "citation-start": self._citation,
            "message-end": self._message_end,
        }

    def _data(self, data: bytes, out: list[Event]) -> None:
        self._frame(self._parse(data), data, out)

    def _event(self, event: SSEEvent, out: list[Event]) -> None:
        self._frame(self._parse(event.data), event.data, out)

    def _frame(self, frame: dict[str, Any], data: bytes, out: list[Event]) -> None:
        kind = frame.get("type")
        if not self.started:
            if kind not in _KINDS:  # (before any frame of its own: another provider's)
                raise WireFormatError("the body is not a cohere event stream", data)
            if kind != "message-start":
                self._start(out)
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            if kind != "citation-end":
                out.append(Opaque(str(kind), frame))
            return
        handler(frame, data, out)

    def _eof(self, out: list[Event]) -> None:
        raise IncompleteStreamError("the stream ended before message-end")

    # -- blocks ----------------------------------------------------------------------------

    def _open_block(self, out: list[Event], kind: Any, **fields: Any) -> int:
        index = self._next_block
        self._next_block += 1
        out.append(BlockStart(index, kind, **fields))
        self._open.append(index)
        return index

    def _close(self, index: int | None, out: list[Event]) -> None:
        if index is not None and index in self._open:
            self._open.remove(index)
            out.append(BlockStop(index))

    def _close_plan(self, out: list[Event]) -> None:
        self._close(self._plan, out)
        self._plan = None

    def _message_start(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        if not self.started:
            self._start(out, None, frame.get("id"))

    def _content_start(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        content = _dict(_message(frame).get("content"))
        field = "thinking" if content.get("type") == "thinking" else "text"
        self._content_block(frame.get("index"), field, out)
        self._content_delta(frame, raw, out)

    def _content_block(self, wire: Any, field: str, out: list[Event]) -> tuple[int, str]:
        self._close_plan(out)
        kind = "thinking" if field == "thinking" else "text"
        entry = self._content[wire] = (self._open_block(out, kind), field)
        if kind == "text":
            self._last_text = entry[0]
        return entry

    def _content_delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        content = _message(frame).get("content")
        if not isinstance(content, dict):
            return
        wire = frame.get("index")
        entry = self._content.get(wire)
        for field in ("text", "thinking"):
            text = content.get(field)
            if isinstance(text, str) and text:
                if entry is None or entry[0] not in self._open:  # (no content-start: lenient)
                    entry = self._content_block(wire, field, out)
                event = TextDelta if entry[1] == "text" else ThinkingDelta
                out.append(event(entry[0], text))

    def _content_end(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        entry = self._content.get(frame.get("index"))
        if entry is not None:
            self._close(entry[0], out)

    def _tool_plan(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        text = _message(frame).get("tool_plan")
        if isinstance(text, str) and text:
            if self._plan is None:
                self._plan = self._open_block(out, "thinking", meta={"field": "tool_plan"})
            out.append(ThinkingDelta(self._plan, text))

    def _tool_start(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._close_plan(out)
        call = _dict(_message(frame).get("tool_calls"))
        function = _dict(call.get("function"))
        name = function.get("name")
        meta = {"type": call["type"]} if isinstance(call.get("type"), str) else None
        self._tools[frame.get("index")] = self._open_block(
            out, "tool_call", id=call.get("id") or None,
            name=name if isinstance(name, str) else None, meta=meta,
        )
        self._tool_delta(frame, raw, out)

    def _tool_delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        arguments = _dict(_dict(_message(frame).get("tool_calls")).get("function")).get("arguments")
        if not isinstance(arguments, str) or not arguments:
            return
        index = self._tools.get(frame.get("index"))
        if index is None or index not in self._open:  # (no tool-call-start: lenient)
            index = self._tools[frame.get("index")] = self._open_block(out, "tool_call")
        out.append(ToolArgsDelta(index, arguments))

    def _tool_end(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._close(self._tools.get(frame.get("index")), out)

    def _citation(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        citation = _message(frame).get("citations")
        if self._last_text is not None and citation is not None:
            out.append(CitationDelta(self._last_text, citation))
        else:
            out.append(Opaque("citation-start", frame))

    # -- the end ---------------------------------------------------------------------------

    def _message_end(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        delta = _dict(frame.get("delta"))
        for index in list(self._open):
            self._close(index, out)
        usage = delta.get("usage")
        if isinstance(usage, dict):
            out.append(UsageUpdate(usage_from_cohere(usage)))
        native = delta.get("finish_reason")
        if native in _FAILED:
            error = delta.get("error")
            raise ProviderError(
                str(error) if error else f"the reply ended with finish_reason {native}", raw
            )
        reason = _STOP.get(native, "end_turn") if isinstance(native, str) else "end_turn"
        if reason == "end_turn" and self._tools:
            reason = "tool_use"  # a normal stop after client tool calls
        details = None if native in _STOP else f"inferred: finish_reason {native!r}"
        self.finished = True
        out.append(ChoiceEnd(0, reason, native))
        out.append(MessageStop(reason, details, native))
