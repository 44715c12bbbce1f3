"""Events as an Anthropic Messages stream (``message_start`` ... ``message_stop`` over SSE).

``message_start`` always comes first (also when the reply opens with a tool call), carrying
the usage known by then (the source's own object from Anthropic; else only the counts that
were reported). Blocks are numbered as they are written; a tool call's ``content_block_start``
carries its id and name, its arguments follow as ``input_json_delta``. Reasoning keeps its
signature (``signature_delta``); redacted reasoning is a ``redacted_thinking`` block, written
whole once its data is known. ``message_delta`` (stop reason and the final usage, input split
back into uncached + cache read + cache write) waits for the reply's end, so it is never sent
before the real usage arrived; then ``message_stop``. A provider error is ``event: error``; a
cut source ends without ``message_delta`` or ``message_stop``.
"""

from __future__ import annotations

from typing import Any

from ..errors import ProviderError
from ..events import (
    BlockStart,
    CitationDelta,
    Dropped,
    MessageStop,
    Opaque,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from ..native._tables import ANTHROPIC_CITATIONS
from ..response import Usage
from ._base import Encoder, ObjectArguments, raw_data, sse
from ._tables import STOP, anthropic_body_usage, anthropic_usage

__all__ = ["AnthropicEncoder"]


class AnthropicEncoder(Encoder):
    provider = "anthropic"
    several = True  # (its decoder reads one message after another)

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._opened = False
        self._wire: dict[int, int] = {}  # block index -> its index on the wire
        self._open_blocks: list[int] = []
        self._redacted: dict[int, str] = {}  # redacted blocks waiting for their data
        self._later: dict[str, Any] = {}  # metadata that arrived after message_start
        self._first_usage: Usage | None = None
        self._arguments: dict[int, ObjectArguments] = {}

    # -- framing -------------------------------------------------------------------------

    def _open(self, out: list[bytes]) -> None:
        if self._opened:
            return
        self._opened = True
        usage = self._first_usage
        if usage is not None and self.same and usage.native is not None:
            body = dict(usage.native)
            for count in ("input_tokens", "output_tokens"):  # (the SDK reads both)
                body.setdefault(count, 0)
        else:  # the counts known at the start; the two the SDK requires are 0 until known
            body = anthropic_body_usage(usage if usage is not None else Usage())
        message: dict[str, Any] = {
            "id": self.id or "", "type": "message", "role": "assistant",
            "model": self.model or "", "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": body,
        }
        if self.same:
            message.update(self.metadata)
        out.append(sse("message_start", {"type": "message_start", "message": message}))

    def _start_block(self, index: int, block: dict[str, Any], out: list[bytes]) -> None:
        self._open(out)
        wire = self._wire[index] = len(self._wire)
        self._open_blocks.append(index)
        out.append(sse("content_block_start",
                       {"type": "content_block_start", "index": wire, "content_block": block}))

    def _delta(self, index: int, delta: dict[str, Any], out: list[bytes]) -> None:
        wire = self._wire.get(index)
        if wire is not None:
            out.append(sse("content_block_delta",
                           {"type": "content_block_delta", "index": wire, "delta": delta}))

    def _text(self, event: Any, kind: str, field: str, text: str, out: list[bytes]) -> None:
        """A text-like delta; the block's next ones are written from its template."""
        index = event.index
        self._delta(index, {"type": kind, field: text}, out)
        wire = self._wire.get(index)
        if wire is not None:
            self.learn(index, event.__class__, lambda sample: sse("content_block_delta", {
                "type": "content_block_delta", "index": wire,
                "delta": {"type": kind, field: sample}}))

    # -- events --------------------------------------------------------------------------

    def _on_metadata(self, event: Any, out: list[bytes]) -> None:
        if self._opened and event.choice is None and self.same:
            self._later.update(event.fields)

    def _on_usage(self, usage: Usage, out: list[bytes]) -> None:
        if self._first_usage is None and not self._opened:
            self._first_usage = usage

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        meta = dict(event.meta or {}) if self.same else {}
        kind = event.kind
        if kind in ("text", "refusal"):
            self._start_block(event.index, {"type": "text", "text": "", **meta}, out)
        elif kind == "thinking":
            block = {"type": "thinking", "thinking": "", "signature": "", **meta}
            self._start_block(event.index, block, out)
        elif kind == "redacted_thinking":
            self._redacted[event.index] = ""  # (written whole when its data is known)
        elif kind == "tool_call":
            block = {"type": "tool_use", "id": event.id or f"call_{event.index}",
                     "name": event.name or "", "input": {}, **meta}
            self._start_block(event.index, block, out)
        elif self.same and isinstance(event.raw, dict):
            self._start_block(event.index, dict(event.raw), out)
        else:
            self.drop(f"opaque:{event.name}", event.index,
                      f"a {self.source} block anthropic has no type for", event.raw)

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        self._text(event, "text_delta", "text", event.text, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._text(event, "text_delta", "text", event.text, out)

    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None:
        if self.kind(event.index) == "thinking":
            self._text(event, "thinking_delta", "thinking", event.text, out)
        else:
            self.drop("thinking", event.index, "reasoning text on a redacted block", event.text)

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        if event.index in self._redacted:
            self._redacted[event.index] = event.signature
            self._flush_redacted(event.index, out)
        elif self.kind(event.index) == "thinking":
            self._delta(event.index, {"type": "signature_delta", "signature": event.signature},
                        out)
        else:
            self.drop("signature", event.index, "anthropic signs only reasoning blocks",
                      event.signature)

    def _flush_redacted(self, index: int, out: list[bytes]) -> None:
        data = self._redacted.pop(index)
        self._start_block(index, {"type": "redacted_thinking", "data": data}, out)

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        shape = self._arguments.setdefault(event.index, ObjectArguments())
        fragment = shape.fragment(event.fragment)
        if shape.text is False:  # (an object's fragments go as they are: a template)
            self._text(event, "input_json_delta", "partial_json", fragment, out)
        else:
            self._delta(event.index, {"type": "input_json_delta", "partial_json": fragment},
                        out)

    def _on_citation(self, event: CitationDelta, out: list[bytes]) -> None:
        citation = event.citation
        if isinstance(citation, dict) and citation.get("type") in ANTHROPIC_CITATIONS:
            self._delta(event.index, {"type": "citations_delta", "citation": citation}, out)
            return
        super()._on_citation(event, out)

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        if start.index in self._redacted:
            self._flush_redacted(start.index, out)
        shape = self._arguments.pop(start.index, None)
        if shape is not None and shape.end():
            self._delta(start.index, {"type": "input_json_delta", "partial_json": shape.end()},
                        out)
        if start.index in self._open_blocks:
            self._open_blocks.remove(start.index)
            out.append(sse("content_block_stop",
                           {"type": "content_block_stop", "index": self._wire[start.index]}))

    def _on_opaque(self, event: Opaque, out: list[bytes]) -> None:
        if self.same and isinstance(event.raw, dict):
            self._open(out)
            out.append(sse(event.kind, event.raw))
            return
        super()._on_opaque(event, out)

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        self._open(out)
        for index in list(self._redacted):
            self._flush_redacted(index, out)
        for index in list(self._open_blocks):  # (a source that left blocks open)
            self._on_block_stop(self.blocks[index], out)
        native = event.native if self.same else None
        delta: dict[str, Any]
        if isinstance(native, dict):
            delta = {"stop_reason": native.get("stop_reason"), "stop_sequence": None}
            if native.get("stop_details") is not None:
                delta["stop_details"] = native["stop_details"]
        elif self.same and event.details and event.details.startswith("inferred"):
            delta = {"stop_reason": None, "stop_sequence": None}
        else:
            delta = {"stop_reason": STOP[self.provider].get(event.stop_reason, "end_turn"),
                     "stop_sequence": None}
        delta.update(self._later)
        usage = self.usage
        if usage is not None and self.same and usage.native is not None:
            body = dict(usage.native)
        else:
            body = anthropic_usage(usage) if usage is not None else {}
        body.setdefault("output_tokens", 0)  # (required by the SDK's message_delta)
        out.append(sse("message_delta", {"type": "message_delta", "delta": delta,
                                         "usage": body}))
        out.append(sse("message_stop", {"type": "message_stop"}))

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        self._open(out)
        if self.same and error.raw and error.raw.lstrip().startswith("{"):
            out.append(raw_data(error.raw, "error"))
            return
        if self.usage is not None and self.usage.reported:  # (the usage so far: real counts)
            delta = {"stop_reason": None, "stop_sequence": None}
            counts = {"output_tokens": 0, **anthropic_usage(self.usage)}
            out.append(sse("message_delta", {"type": "message_delta", "delta": delta,
                                             "usage": counts}))
        body = {"type": error.error_type or "api_error", "message": error.message}
        out.append(sse("error", {"type": "error", "error": body}))
