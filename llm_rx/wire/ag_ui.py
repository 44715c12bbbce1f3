"""AG-UI runs (the Agent User Interaction protocol's events over SSE) read as a reply: what
a Python client of an AG-UI server gets from ``from_bytes(body, provider="ag-ui")``.

Every frame is ``data: <event JSON>`` (no ``event:`` line needed), its ``type`` in capitals.
``RUN_STARTED`` opens the reply (``runId`` its id, ``metadata.model`` the served model when an
llm-rx encoder wrote it). Messages and calls become blocks in the order they open:

- ``TEXT_MESSAGE_START`` / ``_CONTENT`` / ``_END`` (and ``TEXT_MESSAGE_CHUNK``, which opens
  its message with its first chunk, a chunk without ``messageId`` going on the latest): a
  ``text`` block.
- ``REASONING_MESSAGE_START`` / ``_CONTENT`` / ``_END`` (and ``REASONING_MESSAGE_CHUNK``):
  a ``thinking`` block; ``REASONING_START`` / ``REASONING_END`` frame a span. A span with an
  encrypted value but no message is a ``redacted_thinking`` block.
  ``REASONING_ENCRYPTED_VALUE`` is the signature of the message or call it names.
- ``TOOL_CALL_START`` / ``_ARGS`` / ``_END`` (and ``TOOL_CALL_CHUNK``): a ``tool_call``
  block, its arguments the fragments verbatim. ``TOOL_CALL_RESULT`` (a tool the agent ran)
  is an ``opaque`` block ``tool_call_result``, the event verbatim.
- ``CUSTOM`` is an application's event (`llm_rx.events.Custom`: ``name``, ``value``), and so
  is the application's state: ``STATE_SNAPSHOT`` is ``Custom("state_snapshot", snapshot)``,
  ``STATE_DELTA`` ``Custom("state_delta", delta)`` (its JSON Patch operations).
- Every other event (``MESSAGES_SNAPSHOT``, ``STEP_*``, ``RAW``, ``ACTIVITY_*``) is an
  `Opaque` of its type, verbatim.

``RUN_FINISHED`` ends the reply: blocks left open are closed, ``usage`` (AG-UI's
``TokenUsage``) is the usage, and the stop reason is ``metadata.stopReason`` when an llm-rx
encoder wrote one, else ``tool_use`` when the outcome names pending tool calls, else
``end_turn``; the outcome is kept as the stop's native value. The ``interrupt`` outcome (a
run waiting for the user) gives, before the stop (``tool_use``), an ``approval_request``
block per interrupt that names a tool call (``toolCallId``): its ``id``, the call's name and
arguments, ``metadata.server`` as its server, ``meta["tool_call_id"]`` the call (which stays
a ``tool_call`` block: AG-UI names the call it waits on only at the run's end), the
interrupt verbatim as ``raw``; any other interrupt is an ``opaque`` block ``interrupt``. The
``cancelled`` outcome is a
cancellation (`CancelledStreamError`). ``RUN_ERROR`` is the provider's error (its
``message`` and ``code``). EOF before ``RUN_FINISHED`` is a truncation: a cut run is never
complete. A ``RUN_STARTED`` after ``RUN_FINISHED`` is the next run on the same connection
(an agent's next turn, the run that resumes an interrupted one): the next reply, read
afresh; steps (``STEP_STARTED`` / ``STEP_FINISHED``) and several messages inside a run are
one reply.
"""

from __future__ import annotations

from typing import Any, Literal

from ..errors import CancelledStreamError, IncompleteStreamError, WireFormatError
from ..events import (
    Custom,
    Event,
    MessageStop,
    Opaque,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ._ui_parts import Parts, stop_reason, ui_usage
from .base import KindInPayload
from .http import in_band_error
from .sniffing import foreign_frame
from .sse import DEFAULT_MAX_FRAME

__all__ = ["AgUIDecoder"]

#: the events read into the algebra (each by its ``_on_<type>`` method); others are opaque
_KNOWN = frozenset({
    "RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "CUSTOM", "STATE_SNAPSHOT", "STATE_DELTA",
    "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TEXT_MESSAGE_CHUNK",
    "REASONING_START", "REASONING_END", "REASONING_ENCRYPTED_VALUE",
    "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END",
    "REASONING_MESSAGE_CHUNK",
    "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK",
    "TOOL_CALL_RESULT",
})


def _key(frame: dict[str, Any], field: str) -> str | None:
    value = frame.get(field)
    return value if isinstance(value, str) and value else None


def _text(frame: dict[str, Any]) -> str:
    delta = frame.get("delta")
    return delta if isinstance(delta, str) else ""


class AgUIDecoder(KindInPayload):
    """An AG-UI run over SSE: typed events of messages, reasoning and tool calls."""

    provider = "ag-ui"
    several = True  # (an agent's runs one after another on one connection)
    next_types = frozenset({"RUN_STARTED"})

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__(max_frame)
        self._fresh()

    def _fresh(self) -> None:
        self._parts = Parts()
        self._chunk: dict[str, str] = {}  # "text"/"reasoning"/"tool" -> the latest chunk id
        self._spans: dict[str, str | None] = {}  # open reasoning span -> its message, if any
        self._calls: dict[str, tuple[Any, list[str]]] = {}  # call -> its name, its fragments

    # -- frames ----------------------------------------------------------------------------

    def _data(self, data: bytes, out: list[Event]) -> None:
        frame = self._parse(data)
        kind = frame.get("type")
        foreign = None if self.started else foreign_frame(data, self.provider)
        if foreign is not None:  # (another wire's first frame: not read as an event)
            raise foreign
        if not isinstance(kind, str) or not kind.isupper():
            raise WireFormatError(
                "an AG-UI event has a type in capitals (RUN_STARTED, TEXT_MESSAGE_CONTENT, "
                "RUN_FINISHED, ...)", data)
        if not self.started and kind != "RUN_STARTED":
            self._start(out)  # (lenient: a run whose start was not seen)
        if kind not in _KNOWN:
            out.append(Opaque(kind, frame))  # (state, steps, raw, activity: verbatim)
            return
        getattr(self, "_on_" + kind.lower())(frame, data, out)

    def _on_run_started(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        run = _key(frame, "runId")
        if self.started:  # (a run's start said again: kept, verbatim)
            out.append(Opaque("RUN_STARTED", frame))
            return
        metadata = frame.get("metadata")
        model = metadata.get("model") if isinstance(metadata, dict) else None
        self._start(out, model, run)

    # -- text ------------------------------------------------------------------------------

    def _on_text_message_start(self, frame: dict[str, Any], raw: bytes,
                               out: list[Event]) -> None:
        self._parts.open("m:" + (_key(frame, "messageId") or ""), "text", out)

    def _on_text_message_content(self, frame: dict[str, Any], raw: bytes,
                                 out: list[Event]) -> None:
        self._content(frame, "text", out)

    def _on_text_message_end(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._parts.close("m:" + (_key(frame, "messageId") or ""), out)

    def _on_text_message_chunk(self, frame: dict[str, Any], raw: bytes,
                               out: list[Event]) -> None:
        self._content(self._chunked(frame, "text"), "text", out)

    def _content(self, frame: dict[str, Any], kind: Literal["text", "thinking"],
                 out: list[Event]) -> None:
        """A message's text (``kind`` ``text`` or ``thinking``), its block opened if need be."""
        index = self._parts.open("m:" + (_key(frame, "messageId") or ""), kind, out)
        if _text(frame):
            out.append((TextDelta if kind == "text" else ThinkingDelta)(index, _text(frame)))

    def _chunked(self, frame: dict[str, Any], channel: str) -> dict[str, Any]:
        """A ``*_CHUNK`` frame as the content frame it stands for: its message, or the last
        chunk's of the same channel when it names none."""
        message = _key(frame, "messageId") or self._chunk.get(channel, "")
        self._chunk[channel] = message
        return {"messageId": message, "delta": frame.get("delta")}

    # -- reasoning -------------------------------------------------------------------------

    def _on_reasoning_start(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._spans[_key(frame, "messageId") or ""] = None

    def _on_reasoning_message_start(self, frame: dict[str, Any], raw: bytes,
                                    out: list[Event]) -> None:
        message = _key(frame, "messageId") or ""
        self._parts.open("m:" + message, "thinking", out)
        for span, held in self._spans.items():  # (the open span this message is in)
            if held is None:
                self._spans[span] = message
                break

    def _on_reasoning_message_content(self, frame: dict[str, Any], raw: bytes,
                                      out: list[Event]) -> None:
        self._content(frame, "thinking", out)

    def _on_reasoning_message_end(self, frame: dict[str, Any], raw: bytes,
                                  out: list[Event]) -> None:
        self._parts.close("m:" + (_key(frame, "messageId") or ""), out)

    def _on_reasoning_message_chunk(self, frame: dict[str, Any], raw: bytes,
                                    out: list[Event]) -> None:
        self._content(self._chunked(frame, "reasoning"), "thinking", out)

    def _on_reasoning_end(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        span = _key(frame, "messageId") or ""
        self._spans.pop(span, None)
        self._parts.close("s:" + span, out)  # (a redacted span's block)

    def _on_reasoning_encrypted_value(self, frame: dict[str, Any], raw: bytes,
                                      out: list[Event]) -> None:
        entity, value = _key(frame, "entityId") or "", frame.get("encryptedValue")
        if not isinstance(value, str):
            out.append(Opaque("REASONING_ENCRYPTED_VALUE", frame))
            return
        key = ("c:" if frame.get("subtype") == "tool-call" else "m:") + entity
        index = self._parts.index(key)
        if index is None and entity in self._spans and self._spans[entity] is None:
            index = self._parts.open("s:" + entity, "redacted_thinking", out)
        if index is None:  # (the message or call it names is not open: kept, verbatim)
            out.append(Opaque("REASONING_ENCRYPTED_VALUE", frame))
            return
        out.append(SignatureDelta(index, value))

    # -- tool calls ------------------------------------------------------------------------

    def _on_tool_call_start(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        call = _key(frame, "toolCallId") or ""
        name = frame.get("toolCallName")
        self._calls.setdefault(call, (name, []))
        self._parts.open("c:" + call, "tool_call", out, id=call or None,
                         name=name if isinstance(name, str) else "")

    def _on_tool_call_args(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        call = _key(frame, "toolCallId") or ""
        index = self._parts.open("c:" + call, "tool_call", out, id=call or None, name="")
        if _text(frame):
            self._calls.setdefault(call, (None, []))[1].append(_text(frame))
            out.append(ToolArgsDelta(index, _text(frame)))

    def _on_tool_call_end(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._parts.close("c:" + (_key(frame, "toolCallId") or ""), out)

    def _on_tool_call_chunk(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        call = _key(frame, "toolCallId") or self._chunk.get("tool", "")
        self._chunk["tool"] = call
        if self._parts.index("c:" + call) is None:
            self._on_tool_call_start({"toolCallId": call,
                                      "toolCallName": frame.get("toolCallName")}, raw, out)
        self._on_tool_call_args({"toolCallId": call, "delta": frame.get("delta")}, raw, out)

    def _on_tool_call_result(self, frame: dict[str, Any], raw: bytes,
                             out: list[Event]) -> None:
        self._parts.block("opaque", out, name="tool_call_result", raw=frame)

    # -- application events and the end ----------------------------------------------------

    def _on_custom(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        name = frame.get("name")
        out.append(Custom(name if isinstance(name, str) else "", frame.get("value")))

    def _on_state_snapshot(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        out.append(Custom("state_snapshot", frame.get("snapshot")))

    def _on_state_delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        out.append(Custom("state_delta", frame.get("delta")))

    def _usage(self, frame: dict[str, Any], out: list[Event]) -> None:
        usage = frame.get("usage")
        for entry in usage if isinstance(usage, list) else [usage]:
            read = ui_usage(entry)
            if read is not None:
                out.append(UsageUpdate(read))

    def _on_run_finished(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._parts.close_all(out)
        outcome = frame.get("outcome")
        outcome = outcome if isinstance(outcome, dict) else {}
        interrupts = outcome.get("interrupts") if outcome.get("type") == "interrupt" else None
        for interrupt in interrupts if isinstance(interrupts, list) else ():
            self._interrupt(interrupt, out)
        self._usage(frame, out)
        if outcome.get("type") == "cancelled":
            raise self._fail(CancelledStreamError("the run was cancelled", raw), out,
                             start=True)
        told = stop_reason(frame.get("metadata"))
        if told is None:
            told = "tool_use" if outcome.get("pendingToolCallIds") or interrupts else "end_turn"
        out.append(MessageStop(told, None, outcome or None))
        self.finished = True

    def _interrupt(self, interrupt: Any, out: list[Event]) -> None:
        """An interrupt of the run's end: an approval request when it names a tool call
        (``toolCallId``), else an ``opaque`` block ``interrupt`` (the run asks for something
        that is no tool's approval), verbatim."""
        call = interrupt.get("toolCallId") if isinstance(interrupt, dict) else None
        if not isinstance(call, str):
            self._parts.block("opaque", out, name="interrupt", raw=interrupt)
            return
        name, fragments = self._calls.get(call, (None, []))
        metadata = interrupt.get("metadata")
        server = metadata.get("server") if isinstance(metadata, dict) else None
        self._parts.approval(out, interrupt.get("id"), name, "".join(fragments),
                             server=server, raw=interrupt, tool_call=call)

    def _on_run_error(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._usage(frame, out)
        message = frame.get("message")
        error = {"message": message, "code": frame.get("code")}
        raise self._fail(in_band_error(str(message), raw, error), out, start=True)

    def _eof(self, out: list[Event]) -> None:
        raise self._fail(IncompleteStreamError("the stream ended before RUN_FINISHED"), out,
                         start=True)
