"""Events as an OpenAI Chat Completions stream (``chat.completion.chunk`` over SSE).

Each delta is one chunk, written when its event arrives; the chunk carries the message's
metadata (``created``, ``system_fingerprint``, host extras) as the wire did. Thinking goes
where its source spelled it (``reasoning_content``, ``reasoning``, ``reasoning_details``,
Mistral's content parts); from another provider it goes OpenRouter's way, ``reasoning`` plus
``reasoning_details`` entries, which also carry a signature (``reasoning.text``) and redacted
data (``reasoning.encrypted``). Tool calls are keyed by their index among the choice's calls,
the id and name in the call's first fragment. The end: a finish chunk per choice, the usage
chunk (``choices: []``) when usage was reported, then ``data: [DONE]``. A provider error is
an ``{"error": ...}`` chunk and no ``[DONE]``; a cut source ends with neither.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import LlmRxError, ProviderError
from ..events import (
    BlockStart,
    ChoiceEnd,
    CitationDelta,
    Dropped,
    LogprobsDelta,
    MessageStop,
    MetadataUpdate,
    Opaque,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from ..native._shared import url_citation
from ._base import Encoder, dumps, raw_data
from ._tables import STOP, openai_chat_usage

__all__ = ["OpenAIChatEncoder"]

_FORMAT = "unknown"  # (reasoning_details ``format`` for reasoning of another provider)


class OpenAIChatEncoder(Encoder):
    provider = "openai-chat"
    choices = True  # (each choice is written: n>1)

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._opened = False
        self._choice_fields: dict[int, dict[str, Any]] = {}
        self._calls: dict[int, int] = {}  # block index -> position among its choice's calls
        self._per_choice: dict[int, int] = {}  # choice -> calls so far
        self._details: dict[int, int] = {}  # thinking block -> its reasoning_details index
        self._args: set[int] = set()  # tool blocks that got argument fragments
        self._annotations = 0

    # -- framing -------------------------------------------------------------------------

    def _top(self) -> dict[str, Any]:
        top: dict[str, Any] = {"id": self.id or "", "object": "chat.completion.chunk",
                               "created": 0, "model": self.model or ""}
        if self.same:
            top.update(self.metadata)
        return top

    def _chunk(self, choice: int, delta: dict[str, Any], out: list[bytes],
               **fields: Any) -> None:
        self._open(out)
        out.append(self._chunk_bytes(choice, delta, **fields))

    def _chunk_bytes(self, choice: int, delta: dict[str, Any], **fields: Any) -> bytes:
        entry = {"index": choice, "delta": delta, **self._choice_fields.get(choice, {}),
                 **fields}
        entry.setdefault("finish_reason", None)
        return b"data: " + dumps({**self._top(), "choices": [entry]}) + b"\n\n"

    def _write(self, index: int, cls: type[Any], text: str,
               delta: Callable[[str], dict[str, Any]], out: list[bytes]) -> None:
        """A delta's chunk; the next ones of the block are written from its template."""
        choice = self._choice(index)
        self._chunk(choice, delta(text), out)
        self.learn(index, cls, lambda sample: self._chunk_bytes(choice, delta(sample)))

    def _open(self, out: list[bytes]) -> None:
        if not self._opened:  # (the role delta: what every SDK expects first)
            self._opened = True
            entry = {"index": 0, "delta": {"role": "assistant", "content": ""},
                     "finish_reason": None}
            out.append(b"data: " + dumps({**self._top(), "choices": [entry]}) + b"\n\n")

    def _choice(self, index: int) -> int:
        start = self.blocks.get(index)
        return start.choice if start is not None else 0

    # -- events --------------------------------------------------------------------------

    def _on_metadata(self, event: MetadataUpdate, out: list[bytes]) -> None:
        if event.choice is not None and self.same:  # (written at once, then on each chunk)
            self._choice_fields.setdefault(event.choice, {}).update(event.fields)
            self._chunk(event.choice, {}, out)

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        if event.kind == "tool_call":
            position = self._per_choice.get(event.choice, 0)
            self._per_choice[event.choice] = position + 1
            self._calls[event.index] = position
            call: dict[str, Any] = {"index": position, "id": event.id or f"call_{event.index}"}
            kind = (event.meta or {}).get("type") if self.same else "function"
            if kind is not None:  # (a host that sends no type: none)
                call["type"] = kind
            call["function"] = {"name": event.name or "", "arguments": ""}
            self._chunk(event.choice, {"tool_calls": [call]}, out)
        elif event.kind in ("thinking", "redacted_thinking"):
            field = self._field(event)
            if field == "reasoning_details":
                self._details[event.index] = len(self._details)
            if event.kind == "redacted_thinking" and field != "reasoning_details":
                self.drop("redacted_thinking", event.index,
                          "redacted reasoning has no place outside reasoning_details")
        elif event.kind == "opaque":
            self.drop(f"opaque:{event.name}", event.index,
                      "openai-chat has no server-side blocks", event.raw)

    def _field(self, start: BlockStart) -> str:
        meta = start.meta or {}
        return str(meta.get("field", "reasoning_content")) if self.same else "reasoning_details"

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        self._write(event.index, TextDelta, event.text, lambda text: {"content": text}, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._write(event.index, RefusalDelta, event.text, lambda text: {"refusal": text}, out)

    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None:
        start = self.blocks.get(event.index)
        if start is None:
            return
        field = self._field(start)
        plain = (start.meta or {}).get("plain", True) or not self.same

        def delta(text: str) -> dict[str, Any]:
            if field == "reasoning_details":
                details: dict[str, Any] = {"reasoning_details": [self._detail(start, text=text)]}
                return {"reasoning": text, **details} if plain else details
            if field == "content_parts":
                parts = [{"type": "text", "text": text}]
                return {"content": [{"type": "thinking", "thinking": parts}]}
            return {field: text}

        self._write(event.index, ThinkingDelta, event.text, delta, out)

    def _detail(self, start: BlockStart, **fields: Any) -> dict[str, Any]:
        meta = start.meta or {}
        kind = meta.get("detail_type") if self.same else None
        if kind is None:
            kind = "reasoning.encrypted" if start.kind == "redacted_thinking" else "reasoning.text"
        if kind == "reasoning.summary" and "text" in fields:
            fields = {"summary": fields.pop("text"), **fields}
        item: dict[str, Any] = {"type": kind, **fields}
        if "id" in meta and self.same:
            item["id"] = meta["id"]
        item["format"] = meta.get("format") if self.same else _FORMAT
        item["index"] = self._details.get(start.index, 0)
        return item

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        start = self.blocks.get(event.index)
        if start is None or start.kind not in ("thinking", "redacted_thinking") or (
            self._field(start) != "reasoning_details"
        ):
            self.drop("signature", event.index, "openai-chat has no place for this signature",
                      event.signature)
            return
        key = "data" if start.kind == "redacted_thinking" else "signature"
        fields: dict[str, Any] = {key: event.signature}
        if start.kind != "redacted_thinking":
            fields = {"text": "", **fields}
        delta: dict[str, Any] = {"reasoning_details": [self._detail(start, **fields)]}
        if start.kind == "redacted_thinking" and self.same and (start.meta or {}).get("plain"):
            delta = {"reasoning": None, **delta}  # (OpenRouter's plain field beside it, null)
        self._chunk(start.choice, delta, out)

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        position = self._calls.get(event.index)
        if position is None:
            return
        self._args.add(event.index)

        def delta(fragment: str) -> dict[str, Any]:
            return {"tool_calls": [{"index": position, "function": {"arguments": fragment}}]}

        self._write(event.index, ToolArgsDelta, event.fragment, delta, out)

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        if start.kind == "tool_call" and start.index not in self._args and not self.same:
            # a call with no arguments is "{}" (an empty string is no JSON object)
            call = {"index": self._calls[start.index], "function": {"arguments": "{}"}}
            self._chunk(start.choice, {"tool_calls": [call]}, out)

    def _on_citation(self, event: CitationDelta, out: list[bytes]) -> None:
        annotation = event.citation if self.same else url_citation(event.citation)
        if annotation is None:
            self.drop("citation", event.index, "a citation with no URL", event.citation)
            return
        if not self.same:  # (list deltas are merged by their index: the SDK needs one)
            annotation = {**annotation, "index": self._annotations}
            self._annotations += 1
        self._chunk(self._choice(event.index), {"annotations": [annotation]}, out)

    def _on_logprobs(self, event: LogprobsDelta, out: list[bytes]) -> None:
        logprobs = {event.channel: list(event.items)}
        self._chunk(event.choice, {}, out, logprobs=logprobs)

    def _on_opaque(self, event: Opaque, out: list[bytes]) -> None:
        raw = event.raw
        if self.same and event.kind.startswith("delta.") and isinstance(raw, dict):
            key = event.kind[len("delta."):]
            self._chunk(int(raw.get("choice", 0)), {key: raw.get(key)}, out)
            return
        super()._on_opaque(event, out)

    def _finish_chunk(self, choice: int, end: ChoiceEnd | MessageStop, out: list[bytes]) -> None:
        native = end.native if self.same and isinstance(end.native, str) else None
        if self.same and native is None and (
            isinstance(end, ChoiceEnd) or (end.details or "").startswith("inferred")
        ):
            return  # (the source's own stream gave no finish_reason: nor does this one)
        finish = native or STOP[self.provider].get(end.stop_reason, "stop")
        self._chunk(choice, {}, out, finish_reason=finish)

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        # The finish chunks wait for the end: a finish_reason for every choice is itself an
        # end of stream to OpenAI-compatible readers (a cut source would read as finished).
        self._open(out)
        for choice, end in sorted(self.ends.items()):
            self._finish_chunk(choice, end, out)
        if 0 not in self.ends:
            self._finish_chunk(0, event, out)
        usage = self.usage
        if usage is not None:
            body = usage.native if self.same and usage.native is not None else (
                openai_chat_usage(usage))
            if body is not None:
                out.append(b"data: " + dumps({**self._top(), "choices": [], "usage": body})
                           + b"\n\n")
        out.append(b"data: [DONE]\n\n")

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        if self.same and error.raw and error.raw.lstrip().startswith("{"):
            out.append(raw_data(error.raw))  # (the provider's own error frame, verbatim)
            return
        body: dict[str, Any] = {"message": error.message, "type": error.error_type or "error",
                                "code": error.code}
        frame: dict[str, Any] = {"error": body}
        usage = openai_chat_usage(self.usage) if self.usage is not None else None
        if usage is not None:
            frame["usage"] = usage
        out.append(b"data: " + dumps(frame) + b"\n\n")

    def _on_cut(self, error: LlmRxError, out: list[bytes]) -> None:
        """Nothing: without a finish chunk and ``[DONE]`` the stream reads as cut."""
