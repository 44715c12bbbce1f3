"""Events as a Bedrock ``ConverseStream`` body: AWS event-stream messages (CRCs included).

``messageStart`` opens; blocks are numbered as they are written (``contentBlockIndex``); a
tool call's ``contentBlockStart`` carries ``toolUseId`` and ``name``, its arguments follow as
``toolUse.input`` fragments; text, reasoning text, its signature and redacted reasoning are
``contentBlockDelta`` events, written as they arrive. ``messageStop`` (the stop reason) and
``metadata`` (usage: ``inputTokens`` the uncached part, cache counts beside it) wait for the
reply's end. A provider error is an exception message (``:message-type: exception``, the
error's type in ``:exception-type``); a cut source ends without ``messageStop``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from ..errors import ProviderError
from ..events import (
    BlockStart,
    CitationDelta,
    Dropped,
    MessageStop,
    MetadataUpdate,
    Opaque,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from ..wire.eventstream import encode_message, message_encoder
from ._base import Encoder, ObjectArguments, dumps
from ._tables import STOP, bedrock_usage

__all__ = ["BedrockEncoder"]

_EVENT = {":content-type": "application/json", ":message-type": "event"}
# Message fields that messageStop carries (the rest of the metadata goes with metadata).
_STOP_FIELDS = ("additionalModelResponseFields",)


def _message(name: str, payload: dict[str, Any]) -> bytes:
    return encode_message({":event-type": name, **_EVENT}, dumps(payload))


#: A ``contentBlockDelta`` message around a payload (its headers encoded once).
_delta_message = message_encoder({":event-type": "contentBlockDelta", **_EVENT})


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


class BedrockEncoder(Encoder):
    provider = "bedrock-converse"

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._opened = False
        self._wire: dict[int, int] = {}
        self._open_blocks: list[int] = []
        self._arguments: dict[int, ObjectArguments] = {}

    def _open(self, out: list[bytes]) -> None:
        if not self._opened:
            self._opened = True
            start: dict[str, Any] = {"role": "assistant"}
            if self.same:
                start.update(self.metadata)
            out.append(_message("messageStart", start))

    def _block(self, index: int, out: list[bytes]) -> int:
        """The block's wire index (numbered on its first event)."""
        self._open(out)
        wire = self._wire.get(index)
        if wire is None:
            wire = self._wire[index] = len(self._wire)
            self._open_blocks.append(index)
        return wire

    def _delta(self, index: int, delta: dict[str, Any], out: list[bytes]) -> None:
        wire = self._block(index, out)
        out.append(_message("contentBlockDelta", {"contentBlockIndex": wire, "delta": delta}))

    def _text(self, event: Any, delta: Callable[[str], dict[str, Any]], text: str,
              out: list[bytes]) -> None:
        """A text-like delta; the block's next ones are written from its template."""
        self._delta(event.index, delta(text), out)
        wire = self._wire[event.index]
        self.learn(event.index, event.__class__, lambda sample: dumps(
            {"contentBlockIndex": wire, "delta": delta(sample)}), _delta_message)

    # -- events --------------------------------------------------------------------------

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        if event.kind == "tool_call":
            tool: dict[str, Any] = {"toolUseId": event.id or f"call_{event.index}",
                                    "name": event.name or ""}
            meta = event.meta or {}
            if self.same and isinstance(meta.get("toolUse"), dict):
                tool.update(meta["toolUse"])
            wire = self._block(event.index, out)
            out.append(_message("contentBlockStart",
                                {"contentBlockIndex": wire, "start": {"toolUse": tool}}))
        elif event.kind == "opaque":
            if self.same and isinstance(event.raw, dict):
                wire = self._block(event.index, out)
                out.append(_message("contentBlockStart",
                                    {"contentBlockIndex": wire, "start": event.raw}))
            else:
                self.drop(f"opaque:{event.name}", event.index,
                          f"a {self.source} block bedrock-converse has no block for", event.raw)

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        self._text(event, lambda text: {"text": text}, event.text, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._text(event, lambda text: {"text": text}, event.text, out)  # (as text)

    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None:
        self._text(event, lambda text: {"reasoningContent": {"text": text}}, event.text, out)

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        kind = self.kind(event.index)
        if kind == "redacted_thinking":
            if not _is_base64(event.signature):  # (redactedContent is bytes, as base64)
                self.drop("redacted_thinking", event.index, "redacted data that is no base64 "
                          "(bedrock-converse carries bytes)", event.signature)
                return
            self._delta(event.index, {"reasoningContent": {"redactedContent": event.signature}},
                        out)
        elif kind == "thinking":
            self._delta(event.index, {"reasoningContent": {"signature": event.signature}}, out)
        else:
            self.drop("signature", event.index, "bedrock-converse signs only reasoning",
                      event.signature)

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        shape = self._arguments.setdefault(event.index, ObjectArguments())
        fragment = shape.fragment(event.fragment)
        if shape.text is False:  # (an object's fragments go as they are: a template)
            self._text(event, lambda sample: {"toolUse": {"input": sample}}, fragment, out)
        else:
            self._delta(event.index, {"toolUse": {"input": fragment}}, out)

    def _on_citation(self, event: CitationDelta, out: list[bytes]) -> None:
        if self.same:
            self._delta(event.index, {"citation": event.citation}, out)
            return
        super()._on_citation(event, out)

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        if start.index not in self._wire and start.kind in ("text", "thinking"):
            empty: dict[str, Any] = {"text": ""}  # (a block with no text is still a block)
            self._delta(start.index, empty if start.kind == "text"
                        else {"reasoningContent": empty}, out)
        shape = self._arguments.pop(start.index, None)
        if shape is not None and shape.end():
            self._delta(start.index, {"toolUse": {"input": shape.end()}}, out)
        if start.index in self._open_blocks:
            self._open_blocks.remove(start.index)
            out.append(_message("contentBlockStop",
                                {"contentBlockIndex": self._wire[start.index]}))

    def _on_opaque(self, event: Opaque, out: list[bytes]) -> None:
        if self.same and isinstance(event.raw, dict):
            self._open(out)
            name = "contentBlockDelta" if event.kind.startswith("delta.") else event.kind
            out.append(_message(name, event.raw))
            return
        super()._on_opaque(event, out)

    def _on_metadata(self, event: MetadataUpdate, out: list[bytes]) -> None:
        """(Kept by the base class; written with messageStart, messageStop or metadata.)"""

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        self._open(out)
        for index in list(self._open_blocks):
            self._on_block_stop(self.blocks[index], out)
        native = event.native if self.same else None
        stop: dict[str, Any] = {}
        if isinstance(native, str):
            stop["stopReason"] = native
        elif not self.same or not (event.details or "").startswith("inferred"):
            stop["stopReason"] = STOP[self.provider].get(event.stop_reason, "end_turn")
        metadata: dict[str, Any] = {}
        if self.same:
            for key, value in self.metadata.items():
                (stop if key in _STOP_FIELDS else metadata)[key] = value
        out.append(_message("messageStop", stop))
        usage = self.usage
        body = None if usage is None else (
            usage.native if self.same and usage.native is not None else bedrock_usage(usage))
        if body is not None:
            metadata["usage"] = body
        if metadata:
            out.append(_message("metadata", metadata))

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        usage = bedrock_usage(self.usage) if self.usage is not None else None
        if usage is not None and not self.same:  # (the usage so far, before the exception)
            self._open(out)
            out.append(_message("metadata", {"usage": usage}))
        headers = {":exception-type": error.error_type or "internalServerException",
                   ":content-type": "application/json", ":message-type": "exception"}
        out.append(encode_message(headers, dumps({"message": error.message})))
