"""The AI SDK's UI message stream (protocol v1, what ``useChat`` reads) read as a reply: what
a Python client of an AI SDK server gets from ``from_bytes(body, provider="vercel-ui")``.

Every frame is ``data: <chunk JSON>``, its ``type`` in lower case with dashes. ``start``
opens the reply (``messageId`` its id, ``messageMetadata.model`` the served model when an
llm-rx encoder wrote it). Parts become blocks in the order they open:

- ``text-start`` / ``text-delta`` / ``text-end``: a ``text`` block; ``reasoning-start`` /
  ``-delta`` / ``-end`` a ``thinking`` block. A signature rides in a part's
  ``providerMetadata`` (the AI SDK's providers' places: ``signature``, ``thoughtSignature``,
  ``reasoningEncryptedContent``, ``redactedData``). A reasoning part whose first content is
  redacted data or encrypted reasoning (``redactedData``, ``reasoningEncryptedContent``)
  with no text is a ``redacted_thinking`` block, as its source's was.
- ``tool-input-start`` / ``tool-input-delta`` / ``tool-input-available``: a ``tool_call``
  block, its arguments the fragments verbatim (or, with none, the compact JSON of the
  ``input``); ``tool-input-error`` ends the call with the arguments as they came. A call the
  provider ran (``providerExecuted``) and every ``tool-output-*`` chunk (a denial,
  ``tool-output-denied``, too) are ``opaque`` blocks (``kind`` the chunk's type, the chunk
  verbatim): the client must not run them.
- ``tool-approval-request`` is an ``approval_request`` block (its ``approvalId``; the tool's
  name and input; ``meta["tool_call_id"]`` the call it asks about; the chunk verbatim as
  ``raw``). A call the provider runs once approved (an MCP tool: ``providerExecuted``, the
  approval right after its ``tool-input-available``) is that request alone, its server the
  ``llm-rx`` ``server`` of its ``providerMetadata`` when an llm-rx encoder wrote one; a
  client's call stays a ``tool_call`` block, the request after it names it (the request's
  arguments the call's input, or the fragments that came when no ``tool-input-available``
  did).
- ``data-<name>`` is an application's event (`llm_rx.events.Custom`: ``name``, ``data``).
- ``start-step`` / ``finish-step`` say nothing of the reply; every other chunk (sources,
  files, ``message-metadata``) is an `Opaque` of its type, verbatim.

``finish`` ends the reply: parts left open are closed, ``messageMetadata.usage`` is the
usage, the stop reason is ``messageMetadata.stopReason`` when an llm-rx encoder wrote one,
else the ``finishReason`` read back by the AI SDK's table (``stop`` ``end_turn``, ``length``
``max_tokens``, ``tool-calls`` ``tool_use``, ``content-filter`` ``content_filter``,
``error`` ``error``; none at all after an approval request: ``tool_use``, the reply waits
for the user); the finish reason is kept as the stop's native value. ``data: [DONE]``
after it changes nothing. An ``error`` chunk is the provider's error (its ``errorText``),
``abort`` a cancellation (`CancelledStreamError`). EOF (or ``[DONE]``) before ``finish`` is
a truncation: a cut stream is never complete. A ``start`` after ``finish`` is the next UI
message on the same stream: the next reply, read afresh (``start-step`` / ``finish-step``
inside a message are steps of one reply).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import CancelledStreamError, IncompleteStreamError, WireFormatError
from ..events import (
    BlockKind,
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
from ..response import StopReason
from ._approvals import arguments_text
from ._ui_parts import Parts, stop_reason, ui_usage
from .base import KindInPayload
from .http import in_band_error
from .sniffing import foreign_frame
from .sse import DEFAULT_MAX_FRAME

__all__ = ["VercelUIDecoder"]

#: the AI SDK's finish reasons, read back
_FINISH: dict[str, StopReason] = {"stop": "end_turn", "length": "max_tokens",
                                  "tool-calls": "tool_use", "content-filter": "content_filter",
                                  "error": "error", "other": "end_turn"}
#: where the AI SDK's providers keep a signature in ``providerMetadata``
_SIGNED = ("signature", "thoughtSignature", "reasoningEncryptedContent", "redactedData")
#: the places that hold what a redacted block carries (redacted data; reasoning that is only
#: encrypted), when no text came before them
_REDACTED = frozenset({"redactedData", "reasoningEncryptedContent"})
#: the parts that open a block, and the block's kind
_OPENS: dict[str, tuple[str, BlockKind]] = {
    "text-start": ("t:", "text"), "text-delta": ("t:", "text"), "text-end": ("t:", "text"),
    "reasoning-start": ("r:", "thinking"), "reasoning-delta": ("r:", "thinking"),
    "reasoning-end": ("r:", "thinking"),
}


def _signature(metadata: Any) -> tuple[str, bool] | None:
    """The signature a part's ``providerMetadata`` carries, and whether its place is one of
    a redacted block's."""
    if not isinstance(metadata, Mapping):
        return None
    for inner in metadata.values():
        if isinstance(inner, Mapping):
            for field in _SIGNED:
                value = inner.get(field)
                if isinstance(value, str) and value:
                    return value, field in _REDACTED
    return None


class VercelUIDecoder(KindInPayload):
    """The AI SDK's UI message stream over SSE: typed chunks of text, reasoning, tool parts."""

    provider = "vercel-ui"
    several = True  # (one UI message after another on one stream)
    next_types = frozenset({"start"})

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__(max_frame)
        self._fresh()

    def _fresh(self) -> None:
        self._parts = Parts()
        self._args: set[str] = set()  # calls whose arguments came as fragments
        self._held: str | None = None  # a reasoning part started, not opened yet
        self._ran: set[str] = set()  # calls the provider runs (``providerExecuted``)
        self._asked: dict[str, Any] | None = None  # a provider's call, held: approval next?
        # a client's call -> its name, its argument fragments, its whole input (once given)
        self._calls: dict[str, list[Any]] = {}
        self._approvals = False  # whether the reply asked for an approval

    def _data(self, data: bytes, out: list[Event]) -> None:
        if data.strip() == b"[DONE]":
            self._release(out)
            raise self._fail(IncompleteStreamError("[DONE] before finish", data), out,
                             start=True)
        frame = self._parse(data)
        kind = frame.get("type")
        foreign = None if self.started else foreign_frame(data, self.provider)
        if foreign is not None:  # (another wire's first frame: not read as a chunk)
            raise foreign
        if not isinstance(kind, str) or not kind or kind != kind.lower():
            raise WireFormatError(
                "an AI SDK UI message stream chunk has a type in lower case (start, "
                "text-delta, finish, ...)", data)
        if self._held is not None and not (kind.startswith("reasoning-")
                                           and self._held == "r:" + str(frame.get("id"))):
            self._parts.open(self._held, "thinking", out)  # (something else came first)
            self._held = None
        if self._asked is not None and not (kind == "tool-approval-request"
                                            and frame.get("toolCallId")
                                            == self._asked.get("toolCallId")):
            self._release(out)  # (no approval for it: the call the provider ran)
        if not self.started:
            if kind == "start":
                metadata = frame.get("messageMetadata")
                model = metadata.get("model") if isinstance(metadata, Mapping) else None
                self._start(out, model, frame.get("messageId"))
                return
            self._start(out)  # (lenient: a stream whose start was not seen)
        if kind in _OPENS:
            self._part(kind, frame, out)
        elif kind.startswith("tool-"):
            self._tool(kind, frame, out)
        elif kind.startswith("data-"):
            out.append(Custom(kind[5:], frame.get("data")))
        elif kind == "finish":
            self._finish(frame, out)
        elif kind == "error":
            text = frame.get("errorText")
            raise self._fail(in_band_error(str(text), data, {"message": text}), out,
                             start=True)
        elif kind == "abort":
            raise self._fail(CancelledStreamError("the stream was aborted", data), out,
                             start=True)
        elif kind not in ("start-step", "finish-step"):
            out.append(Opaque(kind, frame))  # (sources, files, metadata: verbatim)

    def _part(self, kind: str, frame: dict[str, Any], out: list[Event]) -> None:
        prefix, block = _OPENS[kind]
        key = prefix + str(frame.get("id"))
        signed = _signature(frame.get("providerMetadata"))
        delta = frame.get("delta")
        text = delta if isinstance(delta, str) else ""
        if kind == "reasoning-start" and self._parts.index(key) is None:
            self._held = key  # (its first delta tells whether it is redacted)
            return
        if self._held == key:
            self._held = None
            if signed is not None and signed[1] and not text:
                block = "redacted_thinking"  # (redacted data, or reasoning only encrypted)
        if kind.endswith("-end") and self._parts.index(key) is None and signed is None:
            self._parts.block(block, out)  # (a part with nothing in it)
            return
        index = self._parts.open(key, block, out)
        if text:
            out.append((TextDelta if prefix == "t:" else ThinkingDelta)(index, text))
        if signed is not None:
            out.append(SignatureDelta(index, signed[0]))
        if kind.endswith("-end"):
            self._parts.close(key, out)

    def _tool(self, kind: str, frame: dict[str, Any], out: list[Event]) -> None:
        call = str(frame.get("toolCallId") or "")
        key = "c:" + call
        if kind == "tool-approval-request":
            self._approval(call, frame, out)
            return
        if frame.get("providerExecuted") or call in self._ran or kind.startswith("tool-output"):
            if kind == "tool-input-start":
                self._ran.add(call)  # (its deltas do not say so again)
            elif kind == "tool-input-available":
                self._asked = frame  # (held for one chunk: an approval may ask about it)
            elif kind != "tool-input-delta":  # (the whole input comes with -available)
                self._parts.block("opaque", out, name=kind, raw=frame)
            return
        name = frame.get("toolName")
        if kind == "tool-input-start" or self._parts.index(key) is None:
            if kind not in ("tool-input-start", "tool-input-delta", "tool-input-available",
                            "tool-input-error"):
                out.append(Opaque(kind, frame))  # (approvals and newer tool chunks)
                return
            self._parts.open(key, "tool_call", out, id=call or None,
                             name=name if isinstance(name, str) else "")
            self._calls[call] = [name, [], None]
        index = self._parts.index(key)
        assert index is not None
        if kind == "tool-input-delta":
            fragment = frame.get("inputTextDelta")
            if isinstance(fragment, str) and fragment:
                self._args.add(call)
                self._calls[call][1].append(fragment)
                out.append(ToolArgsDelta(index, fragment))
        elif kind in ("tool-input-available", "tool-input-error"):
            given = frame.get("input")
            seen = self._calls[call]
            seen[0], seen[2] = name if isinstance(name, str) else seen[0], given
            if call not in self._args and given not in (None, {}):
                out.append(ToolArgsDelta(index, arguments_text(given)))
            signed = _signature(frame.get("providerMetadata"))
            if signed is not None:
                out.append(SignatureDelta(index, signed[0]))
            self._args.discard(call)
            self._parts.close(key, out)
        elif kind != "tool-input-start":  # (its block is open: nothing more to say)
            out.append(Opaque(kind, frame))

    def _release(self, out: list[Event]) -> None:
        """The held call the provider ran, as the ``opaque`` block it is."""
        held, self._asked = self._asked, None
        if held is not None:
            self._parts.block("opaque", out, name="tool-input-available", raw=held)

    def _approval(self, call: str, frame: dict[str, Any], out: list[Event]) -> None:
        held, self._asked = self._asked, None
        server = None
        if held is not None:  # (the call the provider runs once approved: the request alone)
            name, given = held.get("toolName"), held.get("input")
            metadata = held.get("providerMetadata")
            own = metadata.get("llm-rx") if isinstance(metadata, Mapping) else None
            server = own.get("server") if isinstance(own, Mapping) else None
        else:  # (a client's call: its input, else the fragments that came)
            name, fragments, given = self._calls.get(call, (None, [], None))
            given = "".join(fragments) if given is None else given
        self._approvals = True
        self._parts.approval(out, frame.get("approvalId"), name, given, server=server,
                             raw=frame, tool_call=call or None)

    def _finish(self, frame: dict[str, Any], out: list[Event]) -> None:
        self._parts.close_all(out)
        metadata = frame.get("messageMetadata")
        usage = ui_usage(metadata.get("usage")) if isinstance(metadata, Mapping) else None
        if usage is not None:
            out.append(UsageUpdate(usage))
        native = frame.get("finishReason")
        told = stop_reason(metadata) or _FINISH.get(
            str(native), "tool_use" if native is None and self._approvals else "end_turn")
        out.append(MessageStop(told, None, native))
        self.finished = True

    def _eof(self, out: list[Event]) -> None:
        self._release(out)
        raise self._fail(IncompleteStreamError("the stream ended before finish"), out,
                         start=True)
