"""Events as a Cohere v2 chat stream (``message-start`` ... ``message-end`` over SSE).

Every frame is an ``event:`` named SSE event whose payload names the same ``type``.
``message-start`` (the id, an empty assistant message) comes first. Text and thinking are
content items (``content-start`` with the item's ``type``, ``content-delta`` for each
fragment, ``content-end``), numbered among the content items; a refusal goes as text. A
thinking block Cohere spelled ``tool_plan`` comes back as ``tool-plan-delta`` frames (the
plan has no start or end of its own). Tool calls are numbered among the calls:
``tool-call-start`` carries the id, type and name (arguments ``""``), each argument fragment
is a ``tool-call-delta`` (a string, so free-text arguments go as they are), then
``tool-call-end``. Cohere's own citations are ``citation-start`` / ``citation-end`` where they
arrived. ``message-end`` (``finish_reason`` by the stop table, and the usage: ``tokens`` with
the counts reported, ``cached_tokens`` the cache read) waits for the reply's end. A provider
error is a ``message-end`` with ``finish_reason: ERROR`` and the error's words; a cut source
ends without ``message-end``. Cohere has no place for signatures, redacted reasoning,
another provider's citations, log-probabilities or server-side blocks: they are dropped and
reported.
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
from ._base import Encoder, raw_data, sse
from ._tables import STOP, cohere_usage

__all__ = ["CohereEncoder"]

_CONTENT, _PLAN, _CALL = "content", "plan", "call"


class CohereEncoder(Encoder):
    provider = "cohere"

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._opened = False
        self._wire: dict[int, tuple[str, int]] = {}  # block -> (its frames, its wire index)
        self._counts = {_CONTENT: 0, _CALL: 0, "citation": 0}
        self._open_blocks: list[int] = []
        self._args: set[int] = set()  # calls that had an argument fragment

    # -- framing -------------------------------------------------------------------------

    def _open(self, out: list[bytes]) -> None:
        if self._opened:
            return
        self._opened = True
        message = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [],
                   "citations": []}
        out.append(sse("message-start", {"id": self.id or "", "type": "message-start",
                                         "delta": {"message": message}}))

    def _number(self, index: int, frames: str, out: list[bytes]) -> int:
        self._open(out)
        wire = self._counts.get(frames, 0)
        if frames in self._counts:
            self._counts[frames] = wire + 1
        self._wire[index] = (frames, wire)
        self._open_blocks.append(index)
        return wire

    def _indexed(self, kind: str, wire: int | None, message: dict[str, Any]) -> bytes:
        frame: dict[str, Any] = {"type": kind}
        if wire is not None:
            frame["index"] = wire
        frame["delta"] = {"message": message}
        return sse(kind, frame)

    def _write(self, event: Any, frames: str, field: str, text: str, out: list[bytes]) -> None:
        """A text-like delta of a block; its next ones are written from its template."""
        index = event.index
        place = self._wire.get(index)
        if place is None or place[0] != frames:
            return
        wire = place[1]
        if frames == _CONTENT:
            def frame(sample: str) -> bytes:
                return self._indexed("content-delta", wire, {"content": {field: sample}})
        elif frames == _PLAN:
            def frame(sample: str) -> bytes:
                return self._indexed("tool-plan-delta", None, {"tool_plan": sample})
        else:
            def frame(sample: str) -> bytes:
                return self._indexed("tool-call-delta", wire,
                                     {"tool_calls": {"function": {"arguments": sample}}})
        out.append(frame(text))
        self.learn(index, event.__class__, frame)

    # -- events --------------------------------------------------------------------------

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        kind = event.kind
        if kind in ("text", "refusal", "thinking"):
            if kind == "thinking" and (event.meta or {}).get("field") == "tool_plan":
                self._number(event.index, _PLAN, out)  # (no frame opens a tool plan)
                return
            field = "thinking" if kind == "thinking" else "text"
            wire = self._number(event.index, _CONTENT, out)
            out.append(self._indexed("content-start", wire,
                                     {"content": {"type": field, field: ""}}))
        elif kind == "tool_call":
            wire = self._number(event.index, _CALL, out)
            call_type = (event.meta or {}).get("type") if self.same else None
            call = {"id": event.id or f"call_{event.index}",
                    "type": call_type if isinstance(call_type, str) else "function",
                    "function": {"name": event.name or "", "arguments": ""}}
            out.append(self._indexed("tool-call-start", wire, {"tool_calls": call}))
        elif kind == "redacted_thinking":
            self.drop("redacted_thinking", event.index, "cohere has no redacted reasoning",
                      event.raw)
        else:
            self.drop(f"opaque:{event.name}", event.index,
                      f"a {self.source} block cohere has no type for", event.raw)

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        self._write(event, _CONTENT, "text", event.text, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._write(event, _CONTENT, "text", event.text, out)  # (as text)

    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None:
        if self.kind(event.index) != "thinking":
            self.drop("thinking", event.index, "reasoning text on a redacted block", event.text)
        elif self._wire.get(event.index, ("",))[0] == _PLAN:
            self._write(event, _PLAN, "tool_plan", event.text, out)
        else:
            self._write(event, _CONTENT, "thinking", event.text, out)

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        self.drop("signature", event.index, "cohere has no place for signatures",
                  event.signature)

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        self._args.add(event.index)
        self._write(event, _CALL, "arguments", event.fragment, out)

    def _on_citation(self, event: CitationDelta, out: list[bytes]) -> None:
        if not self.same or not isinstance(event.citation, dict):
            super()._on_citation(event, out)
            return
        self._open(out)
        wire = self._counts["citation"]
        self._counts["citation"] = wire + 1
        out.append(self._indexed("citation-start", wire, {"citations": event.citation}))
        out.append(sse("citation-end", {"type": "citation-end", "index": wire}))

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        if start.index not in self._open_blocks:
            return
        self._open_blocks.remove(start.index)
        frames, wire = self._wire[start.index]
        if frames == _CONTENT:
            out.append(sse("content-end", {"type": "content-end", "index": wire}))
        elif frames == _CALL:
            if start.index not in self._args and not self.same:
                # a call with no arguments is "{}" (an empty string is no JSON object)
                out.append(self._indexed("tool-call-delta", wire,
                                         {"tool_calls": {"function": {"arguments": "{}"}}}))
            out.append(sse("tool-call-end", {"type": "tool-call-end", "index": wire}))

    def _on_opaque(self, event: Opaque, out: list[bytes]) -> None:
        if self.same and isinstance(event.raw, dict):
            self._open(out)
            out.append(sse(event.kind, event.raw))
            return
        super()._on_opaque(event, out)

    def _usage_body(self) -> dict[str, Any] | None:
        usage = self.usage
        if usage is None:
            return None
        if self.same and isinstance(usage.native, dict):
            return dict(usage.native)
        return cohere_usage(usage)

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        self._open(out)
        for index in list(self._open_blocks):  # (a source that left blocks open)
            self._on_block_stop(self.blocks[index], out)
        native = event.native if self.same else None
        delta: dict[str, Any] = {"finish_reason": native if isinstance(native, str) else
                                 STOP[self.provider].get(event.stop_reason, "COMPLETE")}
        usage = self._usage_body()
        if usage is not None:
            delta["usage"] = usage
        out.append(sse("message-end", {"type": "message-end", "delta": delta}))

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        self._open(out)
        if self.same and error.raw and error.raw.lstrip().startswith("{"):
            out.append(raw_data(error.raw, "message-end"))
            return
        delta: dict[str, Any] = {"finish_reason": "ERROR", "error": error.message}
        usage = self._usage_body()  # (the usage so far: real counts, or none)
        if usage is not None:
            delta["usage"] = usage
        out.append(sse("message-end", {"type": "message-end", "delta": delta}))
