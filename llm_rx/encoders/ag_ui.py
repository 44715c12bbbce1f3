"""Events as an AG-UI 1.0 run (the Agent User Interaction protocol's events), over SSE, from
any provider's reply.

Every frame is ``data: <event JSON>`` and a blank line (AG-UI's SSE encoding; no ``event:``
line), each event's ``type`` in capitals and its fields in camelCase. ``RUN_STARTED``
(``threadId`` and ``runId``: the reply's id, or ``run`` without one; the served model and the
source provider in ``metadata``) is written before the first frame that needs it. A text or
refusal block is one assistant message, ``TEXT_MESSAGE_START`` / ``_CONTENT`` / ``_END``; a
thinking block is a reasoning span holding one reasoning message (``REASONING_START``,
``REASONING_MESSAGE_START`` / ``_CONTENT`` / ``_END``, ``REASONING_END``, both under one id);
a redacted block a span with no message. Ids are the reply's id and the block's index
(``<id>-<index>``), unique in the run. A signature (or a redacted block's data, or encrypted
reasoning) is ``REASONING_ENCRYPTED_VALUE`` for the message (``subtype: message``) or the
call (``subtype: tool-call``) it belongs to, at once. A client tool call is
``TOOL_CALL_START`` (its id, name, and the last text message as ``parentMessageId``), a
``TOOL_CALL_ARGS`` per fragment (arguments that are no JSON object go as
``{"_raw_arguments": "..."}``; a call with none gets ``{}``), ``TOOL_CALL_END``; a call whose
arguments never became JSON (cut by a limit) gets no ``TOOL_CALL_END``, is no pending call,
and the run ends ``RUN_ERROR`` (code ``invalid_tool_arguments``). A server-side
tool is a call with its ``TOOL_CALL_RESULT`` (the provider's block as JSON text). The end:
blocks left open are closed, then ``RUN_FINISHED`` with the outcome (``success``, the client
calls left for the application in ``pendingToolCallIds``), the usage (one ``TokenUsage``) and
the stop reason in ``metadata``. A reply that stops to ask (approval requests) ends with the
``interrupt`` outcome instead: one interrupt per request (``id`` the request's, ``reason``
``tool_approval``, ``toolCallId`` the call it asks about, an MCP server's label as
``metadata.server``; an AG-UI run's own interrupt verbatim); the call is the reply's own
that the request's ``meta["tool_call_id"]`` names, else written before as a call of its own
(its id the request's). A provider error is ``RUN_ERROR`` (its words, its code, the usage
so far); a cut source is ``RUN_ERROR`` with code ``incomplete`` (or the error's kind), and a
cut run never reads as finished (its open messages stay open). A cancelled source (a user's
stop, `stop_on`) is no error: its open messages are closed, then ``RUN_FINISHED`` with AG-UI
1.0's ``cancelled`` outcome (the usage so far, ``stopReason: interrupted``) — unless it was
cut inside a tool call's arguments, which can never end: then ``RUN_ERROR`` with code
``cancelled``.
An application's event (`llm_rx.events.Custom`) is a ``CUSTOM`` event (``name``, ``value``);
its state is AG-UI's own: ``Custom("state_snapshot", snapshot)`` a ``STATE_SNAPSHOT``,
``Custom("state_delta", [JSON Patch operations])`` a ``STATE_DELTA``.
Citations, log-probabilities and choices after the first have no place: dropped and reported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..errors import LlmRxError, ProviderError
from ..events import (
    BlockStart,
    Custom,
    Dropped,
    MessageStart,
    MessageStop,
    SignatureDelta,
    ToolArgsDelta,
)
from ._base import ObjectArguments, dumps
from ._tables import ag_ui_usage
from ._ui import REASONING, TEXT, TOOL, UIEncoder, part_signature

__all__ = ["AgUIEncoder"]

_TEXT, _REASONING, _REDACTED, _TOOL = TEXT, REASONING, "redacted", TOOL


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + dumps(payload) + b"\n\n"


def _json(text: str) -> bool:
    """Whether a call's arguments, as sent, are JSON (what AG-UI requires of a call that
    ends)."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


class AgUIEncoder(UIEncoder):
    provider = "ag-ui"
    several = True  # (its decoder reads one run after another)
    unit = "message"

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._args: dict[int, ObjectArguments] = {}  # open tool call -> its arguments
        self._had_args: set[int] = set()
        self._sent: dict[int, list[str]] = {}  # a call's JSON argument fragments, as sent
        self._calls: list[str] = []  # the client calls, in order
        self._unusable: list[str] = []  # calls whose arguments never became JSON
        self._text: str | None = None  # the latest text message
        self._interrupts: list[dict[str, Any]] = []  # the approval requests, in order

    # -- ids and framing -----------------------------------------------------------------

    @property
    def _run(self) -> str:
        return self.id or "run"

    def _id(self, index: int) -> str:
        return f"{self._run}-{index}"

    def _open(self, out: list[bytes]) -> None:
        if self._opened:
            return
        self._opened = True
        metadata: dict[str, Any] = {}
        if self.source:
            metadata["provider"] = self.source
        if self.model:
            metadata["model"] = self.model
        start: dict[str, Any] = {"type": "RUN_STARTED", "threadId": self._run,
                                 "runId": self._run, "protocolVersion": "1.0"}
        if metadata:
            start["metadata"] = metadata
        out.append(_event(start))

    def _delta_frame(self, kind: str, index: int) -> Callable[[str], bytes]:
        name = "TEXT_MESSAGE_CONTENT" if kind == _TEXT else "REASONING_MESSAGE_CONTENT"
        message = self._id(index)

        def frame(sample: str) -> bytes:
            return _event({"type": name, "messageId": message, "delta": sample})

        return frame

    # -- events --------------------------------------------------------------------------

    def _on_start(self, event: MessageStart, out: list[bytes]) -> None:
        pass  # (written lazily: the metadata that follows the start goes with it)

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        index, kind = event.index, event.kind
        self._open(out)
        message = self._id(index)
        if kind in ("text", "refusal"):
            self._parts[index] = _TEXT
            self._text = message
            out.append(_event({"type": "TEXT_MESSAGE_START", "messageId": message,
                               "role": "assistant"}))
        elif kind == "thinking":
            self._parts[index] = _REASONING
            out.append(_event({"type": "REASONING_START", "messageId": message}))
            out.append(_event({"type": "REASONING_MESSAGE_START", "messageId": message,
                               "role": "reasoning"}))
        elif kind == "redacted_thinking":
            self._parts[index] = _REDACTED
            out.append(_event({"type": "REASONING_START", "messageId": message}))
        elif kind == "tool_call":
            self._parts[index] = _TOOL
            self._args[index] = ObjectArguments()
            call = self._call_id(event)
            self._calls.append(call)
            out.append(_event(self._call_start(call, event.name or "")))
        else:
            self._server_tool(event, out)

    def _call_start(self, call: str, name: str) -> dict[str, Any]:
        frame: dict[str, Any] = {"type": "TOOL_CALL_START", "toolCallId": call,
                                 "toolCallName": name}
        if self._text is not None:
            frame["parentMessageId"] = self._text
        return frame

    def _server_frames(self, start: BlockStart, call: str, name: str, given: Any,
                       output: Any, out: list[bytes]) -> None:
        if given is not None:
            out.append(_event(self._call_start(call, name)))
            out.append(_event({"type": "TOOL_CALL_ARGS", "toolCallId": call,
                               "delta": dumps(given).decode()}))
            signature = part_signature(start)
            if signature is not None:
                out.append(_event({"type": "REASONING_ENCRYPTED_VALUE", "subtype": "tool-call",
                                   "entityId": call, "encryptedValue": signature}))
            out.append(_event({"type": "TOOL_CALL_END", "toolCallId": call}))
        if output is not None:
            out.append(_event({"type": "TOOL_CALL_RESULT", "messageId": self._id(start.index),
                               "toolCallId": call, "content": dumps(output).decode(),
                               "role": "tool"}))

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        index = event.index
        arguments = self._args.get(index)
        if arguments is None:
            self.drop("arguments", index, "argument fragments of no open tool call",
                      event.fragment)
            return
        fragment = arguments.fragment(event.fragment)
        if arguments.text is not None:
            self._had_args.add(index)
        call = self._call_id(self.blocks[index])

        def frame(sample: str) -> bytes:
            return _event({"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": sample})

        out.append(frame(fragment))
        if arguments.text is False:  # (JSON arguments: the next fragments go as they come)
            sent = self._sent.setdefault(index, [])
            sent.append(fragment)
            self.learn(index, ToolArgsDelta, frame, texts=sent)

    def _on_approval(self, start: BlockStart, arguments: Any, out: list[bytes]) -> None:
        """The call the request asks about (written here when the reply's own is not), and
        an interrupt naming it for the run's end."""
        self._open(out)
        call, own = self._asked_call(start, out)
        if own is None:
            out.append(_event(self._call_start(call, start.name or "")))
            out.append(_event({"type": "TOOL_CALL_ARGS", "toolCallId": call,
                               "delta": dumps(arguments).decode()}))
            out.append(_event({"type": "TOOL_CALL_END", "toolCallId": call}))
        raw = start.raw
        if self.same and isinstance(raw, dict) and raw.get("toolCallId") == call:
            self._interrupts.append(dict(raw))  # (an AG-UI run's own interrupt, verbatim)
            return
        interrupt: dict[str, Any] = {"id": start.id or call, "reason": "tool_approval",
                                     "toolCallId": call}
        server = (start.meta or {}).get("server")
        if isinstance(server, str):
            interrupt["metadata"] = {"server": server}
        self._interrupts.append(interrupt)

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        index = event.index
        kind = self._parts.get(index)
        if kind is None:
            self.drop("signature", index, "a signature of no open message or call",
                      event.signature)
            return
        if kind == _TOOL:
            subtype, entity = "tool-call", self._call_id(self.blocks[index])
        else:
            subtype, entity = "message", self._id(index)
        out.append(_event({"type": "REASONING_ENCRYPTED_VALUE", "subtype": subtype,
                           "entityId": entity, "encryptedValue": event.signature}))

    def _on_custom(self, event: Custom, out: list[bytes]) -> None:
        self._open(out)
        name, data = event.name, event.data
        if name == "state_snapshot":
            out.append(_event({"type": "STATE_SNAPSHOT", "snapshot": data}))
        elif name == "state_delta" and isinstance(data, list):  # (JSON Patch operations)
            out.append(_event({"type": "STATE_DELTA", "delta": data}))
        else:
            out.append(_event({"type": "CUSTOM", "name": name, "value": data}))

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        index = start.index
        kind = self._parts.pop(index, None)
        message = self._id(index)
        if kind == _TEXT:
            out.append(_event({"type": "TEXT_MESSAGE_END", "messageId": message}))
        elif kind == _REASONING:
            out.append(_event({"type": "REASONING_MESSAGE_END", "messageId": message}))
            out.append(_event({"type": "REASONING_END", "messageId": message}))
        elif kind == _REDACTED:
            out.append(_event({"type": "REASONING_END", "messageId": message}))
        elif kind == _TOOL:
            call = self._call_id(start)
            arguments = self._args.pop(index)
            closing = arguments.end() if index in self._had_args else "{}"
            if closing:
                out.append(_event({"type": "TOOL_CALL_ARGS", "toolCallId": call,
                                   "delta": closing}))
            sent = "".join(self._sent.pop(index, ()))  # (kept for JSON arguments only)
            if arguments.text is False and not _json(sent + closing):
                # arguments cut short (a limit): the call never ends, and is no pending call
                # (free text is sent as a JSON string, whole: a custom tool's call ends)
                self._calls.remove(call)
                self._unusable.append(call)
                return
            out.append(_event({"type": "TOOL_CALL_END", "toolCallId": call}))

    def _usage_list(self) -> list[dict[str, Any]] | None:
        usage = ag_ui_usage(self.usage, self.source, self.model) if self.usage else None
        return [usage] if usage else None

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        self._open(out)
        for index in list(self._parts):  # (a source that left blocks open)
            self._on_block_stop(self.blocks[index], out)
        if self._unusable:  # (a call to run with arguments cut short: never a finished run)
            self._run_error(f"the arguments of tool call {', '.join(self._unusable)} never "
                            f"became JSON (the reply ended: {event.stop_reason})",
                            "invalid_tool_arguments", out)
            return
        outcome: dict[str, Any] = {"type": "success"}
        if self._interrupts:  # (the run waits for the user's decisions)
            outcome = {"type": "interrupt", "interrupts": self._interrupts}
        elif self._calls:
            outcome["pendingToolCallIds"] = list(self._calls)
        self._finished(outcome, event.stop_reason, out)

    def _finished(self, outcome: dict[str, Any], stop_reason: str, out: list[bytes]) -> None:
        finished: dict[str, Any] = {"type": "RUN_FINISHED", "threadId": self._run,
                                    "runId": self._run, "outcome": outcome}
        usage = self._usage_list()
        if usage is not None:
            finished["usage"] = usage
        finished["metadata"] = {"stopReason": stop_reason}
        out.append(_event(finished))

    def _run_error(self, message: str, code: str | None, out: list[bytes]) -> None:
        self._open(out)
        frame: dict[str, Any] = {"type": "RUN_ERROR", "message": message}
        if code:
            frame["code"] = code
        usage = self._usage_list()
        if usage is not None:
            frame["usage"] = usage
        out.append(_event(frame))

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        self._run_error(error.message, error.code or error.error_type, out)

    def _on_cut(self, error: LlmRxError, out: list[bytes]) -> None:
        if error.kind == "cancelled":  # (a user's stop: the run's cancelled outcome)
            self._open(out)
            for index in list(self._parts):
                self._on_block_stop(self.blocks[index], out)
            if self._unusable:  # (a call cut inside its arguments can never end: no run
                # that ends RUN_FINISHED may leave one open)
                self._run_error("the reply was cancelled inside the arguments of tool call "
                                f"{', '.join(self._unusable)}", "cancelled", out)
                return
            self._finished({"type": "cancelled"}, "interrupted", out)
            return
        # (a cut run never reads as finished: its open messages stay open)
        self._run_error(f"the reply was cut before its end ({error.kind})", error.kind, out)
