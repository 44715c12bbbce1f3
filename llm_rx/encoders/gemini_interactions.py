"""Events as a Gemini Interactions stream (SSE events whose payload names its
``event_type``), as ``POST /v1beta/interactions`` with ``stream: true`` sends it.

``interaction.created`` and ``interaction.status_update`` (``in_progress``) open; each block
is a step, numbered in the order the blocks start, between its ``step.start`` and
``step.stop``: text a ``model_output`` step (``text`` deltas, citations as
``text_annotation_delta``), reasoning a ``thought`` step (``thought_summary`` deltas, the
signature as its ``thought_signature`` delta), a tool call a ``function_call`` step (``id``,
``name`` and ``arguments: {}`` at its start, the fragments as ``arguments_delta``), a block
of this wire's own built-in tool steps its step given whole at its start, an image (audio,
video, document) of this wire a ``model_output`` step with that delta. Every event carries
an ``event_id`` (its number in the stream, from 1: the cursor a resumed ``GET`` starts
after). The end: ``interaction.completed`` with the status (``completed``,
``requires_action`` after a reply that ends in calls, ``incomplete`` for ``max_tokens``) and
the usage, then ``data: [DONE]`` (a ``tool_use`` stop whose calls were all dropped is
``completed``: ``requires_action`` with no call would leave a client waiting); a provider
error is an ``interaction.status_update`` (``failed``, with the usage so far) and an ``error``
event; a cut source ends with no terminal event. A refusal is written as the answer's text;
another provider's signatures and server-side blocks have no place here (``Dropped``), and
another provider's free-text arguments go as ``{"_raw_arguments": "..."}``. Its
``interaction.completed`` carries no steps, as the wire's does;
``to_native(response, "gemini-interactions")`` of the same reply is the body with them.
"""

from __future__ import annotations

from typing import Any

from ..errors import LlmRxError, ProviderError
from ..events import (
    BlockStart,
    CitationDelta,
    MessageStart,
    MessageStop,
    Opaque,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from ..native._tables import STOP, gemini_interactions_usage
from ._base import Encoder, ObjectArguments, dumps

__all__ = ["GeminiInteractionsEncoder"]

_MEDIA = frozenset({"image", "audio", "video", "document"})
_OWN = frozenset({"id", "model", "status", "usage", "steps", "outputs", "object"})


def _url_citation(citation: Any) -> dict[str, Any] | None:
    """Another provider's citation as an Interactions ``url_citation`` (``None`` for one that
    names no URL)."""
    if not isinstance(citation, dict):
        return None
    inner = citation.get("url_citation")
    source = inner if isinstance(inner, dict) else citation
    url = source.get("url") or source.get("uri")
    if not isinstance(url, str):
        return None
    out: dict[str, Any] = {"type": "url_citation", "url": url}
    if isinstance(source.get("title"), str):
        out["title"] = source["title"]
    for key in ("start_index", "end_index"):
        if isinstance(source.get(key), int):
            out[key] = source[key]
    return out


class GeminiInteractionsEncoder(Encoder):
    provider = "gemini-interactions"

    def __init__(self, dropped: Any = None) -> None:
        super().__init__(dropped)
        self._steps: dict[int, int] = {}  # block index -> step index
        self._next = 0
        self._events = 0
        self._args: dict[int, ObjectArguments] = {}  # another provider's call: its arguments
        self._calls = 0  # function_call steps written

    def _event(self, payload: dict[str, Any], out: list[bytes]) -> None:
        self._events += 1
        name = str(payload["event_type"])
        body = {**payload, "event_id": str(self._events)}
        out.append(b"event: " + name.encode() + b"\ndata: " + dumps(body) + b"\n\n")

    def _interaction(self, status: str) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id or "", "status": status}
        return out

    # -- events --------------------------------------------------------------------------

    def _on_start(self, event: MessageStart, out: list[bytes]) -> None:
        created = {**self._interaction("in_progress"), "object": "interaction"}
        if self.model is not None:
            created["model"] = self.model
        self._event({"interaction": created, "event_type": "interaction.created"}, out)
        self._event({"interaction_id": self.id or "", "status": "in_progress",
                     "event_type": "interaction.status_update"}, out)

    def _step(self, index: int, step: dict[str, Any], out: list[bytes]) -> int:
        number = self._steps[index] = self._next
        self._next += 1
        self._event({"index": number, "step": step, "event_type": "step.start"}, out)
        return number

    def _delta(self, index: int, delta: dict[str, Any], out: list[bytes]) -> None:
        number = self._steps.get(index)
        if number is not None:
            self._event({"index": number, "delta": delta, "event_type": "step.delta"}, out)

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        kind = event.kind
        if kind in ("text", "refusal"):  # (a refusal is the answer's text here)
            self._step(event.index, {"type": "model_output"}, out)
        elif kind == "thinking":
            self._step(event.index, {"type": "thought"}, out)
        elif kind == "tool_call":
            extra = (event.meta or {}).get("step") if self.same else None
            step: dict[str, Any] = {"id": event.id or ""}
            if isinstance(extra, dict):  # (the wire's own fields, where it put them)
                step.update({key: value for key, value in extra.items()
                             if key not in ("id", "type", "name", "arguments")})
            step.update({"type": "function_call", "name": event.name or "", "arguments": {}})
            if not self.same:
                self._args[event.index] = ObjectArguments()
            self._calls += 1
            self._step(event.index, step, out)
        elif kind == "opaque" and self.same and isinstance(event.raw, dict):
            if event.name in _MEDIA:
                self._step(event.index, {"type": "model_output"}, out)
                self._delta(event.index, dict(event.raw), out)
            else:
                self._step(event.index, dict(event.raw), out)
        else:
            what = "redacted_thinking" if kind == "redacted_thinking" else f"opaque:{event.name}"
            self.drop(what, event.index,
                      f"a {self.source} {kind} block gemini-interactions has no step for",
                      event.raw)

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        self._delta(event.index, {"text": event.text, "type": "text"}, out)

    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None:
        self._delta(event.index, {"content": {"text": event.text, "type": "text"},
                                  "type": "thought_summary"}, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._delta(event.index, {"text": event.text, "type": "text"}, out)

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        shape = self._args.get(event.index)
        fragment = event.fragment if shape is None else shape.fragment(event.fragment)
        if fragment:
            self._delta(event.index, {"arguments": fragment, "type": "arguments_delta"}, out)

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        if not self.same or event.index not in self._steps:
            self.drop("signature", event.index, "another provider's signature is no Gemini "
                      "thought signature", event.signature)
            return
        self._delta(event.index, {"signature": event.signature,
                                  "type": "thought_signature"}, out)

    def _on_citation(self, event: CitationDelta, out: list[bytes]) -> None:
        citation = event.citation if self.same else _url_citation(event.citation)
        if citation is None or event.index not in self._steps:
            super()._on_citation(event, out)
            return
        self._delta(event.index, {"annotations": [citation],
                                  "type": "text_annotation_delta"}, out)

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        shape = self._args.pop(start.index, None)
        if shape is not None and shape.end():  # (free text's closing, as {"_raw_arguments"})
            self._delta(start.index, {"arguments": shape.end(), "type": "arguments_delta"}, out)
        number = self._steps.pop(start.index, None)
        if number is not None:
            self._event({"index": number, "event_type": "step.stop"}, out)

    def _on_opaque(self, event: Opaque, out: list[bytes]) -> None:
        if self.same and isinstance(event.raw, dict) and "event_type" in event.raw:
            self._event({key: value for key, value in event.raw.items()
                         if key != "event_id"}, out)
            return
        super()._on_opaque(event, out)

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        for index in list(self._steps):  # (a block still open at the end ends with it)
            self._on_block_stop(self.blocks[index], out)
        native = event.native if self.same else None
        status = native if isinstance(native, str) and native else STOP[self.provider].get(
            event.stop_reason, "completed")
        if status == "requires_action" and not self._calls:  # (the calls were dropped)
            status = "completed"
        interaction = self._interaction(status)
        usage = self.usage
        if usage is not None:
            written = usage.native if self.same and isinstance(usage.native, dict) else (
                gemini_interactions_usage(usage))
            if written:
                interaction["usage"] = written
        if self.same:
            interaction.update({key: value for key, value in self.metadata.items()
                                if key not in _OWN})
        interaction["object"] = "interaction"
        if self.model is not None:
            interaction["model"] = self.model
        self._event({"interaction": interaction, "event_type": "interaction.completed"}, out)
        out.append(b"event: done\ndata: [DONE]\n\n")

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        usage = self.usage
        written = None if usage is None else usage.native if (
            self.same and isinstance(usage.native, dict)) else gemini_interactions_usage(usage)
        if written:  # (the counts so far, on the status update the SDK types with usage)
            self._event({"interaction_id": self.id or "", "status": "failed", "usage": written,
                         "event_type": "interaction.status_update"}, out)
        failure: dict[str, Any] = {"message": error.message}
        code = error.code or error.error_type
        if code:
            failure["code"] = str(code)
        self._event({"error": failure, "event_type": "error"}, out)

    def _on_cut(self, error: LlmRxError, out: list[bytes]) -> None:
        return  # (no terminal event: the stream reads as cut)
