"""Events as an OpenAI Responses stream (``response.*`` events over SSE).

``response.created`` opens; each block is a part of an output item (``message`` for text and
refusals, ``reasoning`` for thinking, ``function_call`` / ``custom_tool_call`` for a call),
its deltas written as they arrive. Blocks of the source's own items (Responses to Responses)
are grouped back into those items; from another provider each block is an item of its own.
A reasoning item carries its signature (or redacted data) as ``encrypted_content``. The
``.done`` events repeat a part's, an item's whole text, so they wait for its end (an item of
several parts ends when a block of another item starts, or at the reply's end). The end:
``response.completed``, or ``response.incomplete`` for a reply a limit ended (with
``incomplete_details.reason``), carrying every item and the usage; a provider error is
``response.failed``; a cut source ends with no terminal event.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import ProviderError
from ..events import (
    BlockStart,
    CitationDelta,
    Dropped,
    LogprobsDelta,
    MessageStop,
    Opaque,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from ._base import Encoder, dumps, raw_data
from ._tables import STOP, responses_usage

__all__ = ["OpenAIResponsesEncoder"]

# Fields of a response the SDK's type requires, for a reply of another provider.
_REQUIRED = {"parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
             "incomplete_details": None, "instructions": None, "metadata": {},
             "temperature": None, "top_p": None}
_TOOL_FIELD = {"function_call": "arguments", "custom_tool_call": "input"}
_EVENT_OF = {"function_call": "response.function_call_arguments",
             "custom_tool_call": "response.custom_tool_call_input"}


class _Item:
    """An output item being written: its body, its parts' texts, its number."""

    __slots__ = ("blocks", "body", "key", "number", "parts")

    def __init__(self, key: Any, number: int, body: dict[str, Any]) -> None:
        self.key = key
        self.number = number
        self.body = body
        self.blocks: list[int] = []
        self.parts: dict[int, tuple[str, int, list[str], dict[str, Any]]] = {}


class OpenAIResponsesEncoder(Encoder):
    provider = "openai-responses"

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._opened = False
        self._seq = 0
        self._items: list[_Item] = []  # in output order (done ones too)
        self._current: _Item | None = None
        self._of: dict[int, _Item] = {}  # block index -> its item
        self._last_text: int | None = None  # the text block written last (its logprobs)

    # -- framing -------------------------------------------------------------------------

    def _frame(self, name: str, fields: dict[str, Any], out: list[bytes]) -> None:
        out.append(self._event(name, dumps({"type": name, **fields})[:-1]))

    def _event(self, name: str, body: bytes) -> bytes:
        """The SSE event of a frame whose JSON object ``body`` is open at its end: its
        ``sequence_number`` goes last (so a delta's bytes before it are a template's)."""
        seq = self._seq
        self._seq += 1
        return (b"event: " + name.encode() + b"\ndata: " + body + b',"sequence_number":'
                + str(seq).encode() + b"}\n\n")

    def _response(self, status: str) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.id or "", "object": "response", "created_at": 0,
                                "model": self.model or "", "status": status}
        body.update(self.metadata if self.same else _REQUIRED)
        body["status"] = status
        return body

    def _open(self, out: list[bytes]) -> None:
        if not self._opened:
            self._opened = True
            response = {**self._response("in_progress"), "output": [], "usage": None}
            if self.same and "status" in self.metadata:
                response["status"] = self.metadata["status"]
            self._frame("response.created", {"response": response}, out)

    # -- items ---------------------------------------------------------------------------

    def _item_for(self, start: BlockStart, kind: str, out: list[bytes]) -> _Item:
        meta = start.meta or {}
        key = meta.get("item_id") if self.same and meta.get("item_id") else ("block", start.index)
        item = self._current
        if item is not None and item.key == key and kind != "opaque":
            return item
        self._end_item(out)
        number = len(self._items)
        body: dict[str, Any] = {"id": key if isinstance(key, str) else f"item_{number}"}
        if self.same and isinstance(meta.get("item"), dict):
            body.update(meta["item"])
        body.setdefault("type", kind)
        if body["type"] == "message":
            body.setdefault("role", "assistant")
            body.setdefault("status", "in_progress")
            body["content"] = []
        elif body["type"] == "reasoning":
            body["summary"] = []
        item = self._current = _Item(key, number, body)
        self._items.append(item)
        return item

    def _end_item(self, out: list[bytes]) -> None:
        item, self._current = self._current, None
        if item is None:
            return
        body = item.body
        for index in list(item.parts):
            self._end_part(item, index, out)
        if body.get("type") in ("message", "function_call", "custom_tool_call") and (
            body.get("status") == "in_progress"
        ):
            body["status"] = "completed"
        self._frame("response.output_item.done", {"output_index": item.number, "item": body},
                    out)

    def _added(self, item: _Item, out: list[bytes]) -> None:
        body = dict(item.body)
        for key in ("content", "summary"):
            if key in body:
                body[key] = []
        self._frame("response.output_item.added", {"output_index": item.number, "item": body},
                    out)

    def _start_part(self, item: _Item, start: BlockStart, channel: str, part: dict[str, Any],
                    out: list[bytes]) -> None:
        meta = start.meta or {}
        announce = not self.same or isinstance(meta.get("part"), dict)
        if self.same and isinstance(meta.get("part"), dict):  # (the part's own fields)
            part = {"type": part["type"], **meta["part"]}
        number = sum(1 for value in item.parts.values() if value[0] == channel) + len(
            item.body.get(channel) or ())
        item.parts[start.index] = (channel, number, [], part)
        item.blocks.append(start.index)
        self._of[start.index] = item
        if not announce:
            return  # (the source's part had no ``.added``: its first delta opened it)
        if channel == "content" and (item.body.get("type") == "message" or self.same):
            self._frame("response.content_part.added", {
                "item_id": item.body["id"], "output_index": item.number, "content_index": number,
                "part": {**part, "text": ""} if part.get("type") != "refusal"
                else {**part, "refusal": ""}}, out)
        elif channel == "summary":
            self._frame("response.reasoning_summary_part.added", {
                "item_id": item.body["id"], "output_index": item.number,
                "summary_index": number, "part": {**part, "text": ""}}, out)

    def _end_part(self, item: _Item, index: int, out: list[bytes]) -> None:
        entry = item.parts.pop(index, None)
        if entry is None:
            return
        channel, number, texts, part = entry
        text = "".join(texts)
        at = {"item_id": item.body["id"], "output_index": item.number}
        kind = part.get("type")
        if kind in _TOOL_FIELD:
            field = _TOOL_FIELD[str(kind)]
            if not text and not self.same:
                text = "{}" if kind == "function_call" else ""
            item.body[field] = text
            self._frame(_EVENT_OF[str(kind)] + ".done", {**at, field: text}, out)
            return
        whole = {**part, "refusal" if kind == "refusal" else "text": text}
        item.body.setdefault(channel, []).append(whole)
        if kind == "summary_text":
            self._frame("response.reasoning_summary_text.done",
                        {**at, "summary_index": number, "text": text}, out)
            self._frame("response.reasoning_summary_part.done",
                        {**at, "summary_index": number, "part": whole}, out)
        elif kind == "reasoning_text":
            self._frame("response.reasoning_text.done",
                        {**at, "content_index": number, "text": text}, out)
        else:
            name = "response.refusal.done" if kind == "refusal" else "response.output_text.done"
            done = {**at, "content_index": number,
                    ("refusal" if kind == "refusal" else "text"): text}
            if kind != "refusal":
                done["logprobs"] = part.get("logprobs") or []
            self._frame(name, done, out)
            self._frame("response.content_part.done",
                        {**at, "content_index": number, "part": whole}, out)

    # -- events --------------------------------------------------------------------------

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        self._open(out)
        kind, meta = event.kind, event.meta or {}
        if kind in ("text", "refusal"):
            item = self._item_for(event, "message", out)
            if len(item.blocks) == 0 and not item.parts:
                self._added(item, out)
            part_type = "refusal" if kind == "refusal" else "output_text"
            part: dict[str, Any] = {"type": part_type}
            if kind == "text":
                part.update({"annotations": [], "logprobs": []})
            self._start_part(item, event, "content", part, out)
        elif kind in ("thinking", "redacted_thinking"):
            item = self._item_for(event, "reasoning", out)
            if not item.blocks:
                self._added(item, out)
            channel = str(meta.get("channel", "content")) if self.same else "content"
            if kind == "redacted_thinking" or channel == "item":  # (an item with no text)
                item.blocks.append(event.index)
                self._of[event.index] = item
                return
            part_type = "summary_text" if channel == "summary" else "reasoning_text"
            self._start_part(item, event, channel, {"type": part_type}, out)
        elif kind == "tool_call":
            item = self._item_for(event, "function_call", out)
            tool = str(item.body.get("type"))
            if tool not in _TOOL_FIELD:
                item.body["type"] = tool = "function_call"
            item.body.update({"call_id": event.id or f"call_{event.index}",
                              "name": event.name or "", _TOOL_FIELD[tool]: ""})
            if not self.same:
                item.body.setdefault("status", "in_progress")
            self._added(item, out)
            item.parts[event.index] = ("args", 0, [], {"type": tool})
            item.blocks.append(event.index)
            self._of[event.index] = item
        elif self.same and isinstance(event.raw, dict):
            self._end_item(out)
            number = len(self._items)
            item = _Item(("opaque", event.index), number, dict(event.raw))
            self._items.append(item)
            self._frame("response.output_item.added", {"output_index": number,
                                                       "item": event.raw}, out)
            self._frame("response.output_item.done", {"output_index": number,
                                                      "item": event.raw}, out)
        else:
            self.drop(f"opaque:{event.name}", event.index,
                      f"a {self.source} block openai-responses has no item for", event.raw)

    def _texts(self, index: int) -> tuple[_Item, tuple[str, int, list[str], dict[str, Any]]] | None:
        item = self._of.get(index)
        entry = item.parts.get(index) if item is not None else None
        return (item, entry) if item is not None and entry is not None else None

    def _text_delta(self, index: int, cls: type[Any], text: str, out: list[bytes]) -> None:
        found = self._texts(index)
        if found is None:
            return
        item, (_, number, texts, part) = found
        texts.append(text)
        at: dict[str, Any] = {"item_id": item.body["id"], "output_index": item.number}
        kind = part.get("type")
        after: dict[str, Any] = {}
        if kind in _TOOL_FIELD:
            name = _EVENT_OF[str(kind)] + ".delta"
        elif kind == "output_text":
            self._last_text = index
            name, at["content_index"], after = "response.output_text.delta", number, {
                "logprobs": []}
        elif kind == "refusal":
            name, at["content_index"] = "response.refusal.delta", number
        elif kind == "summary_text":
            name, at["summary_index"] = "response.reasoning_summary_text.delta", number
        else:
            name, at["content_index"] = "response.reasoning_text.delta", number
        self._frame(name, {**at, "delta": text, **after}, out)
        self.learn(index, cls, lambda sample: dumps({"type": name, **at, "delta": sample,
                                                     **after})[:-1],
                   lambda body: self._event(name, body), texts)

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        self._text_delta(event.index, TextDelta, event.text, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._text_delta(event.index, RefusalDelta, event.text, out)

    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None:
        self._text_delta(event.index, ThinkingDelta, event.text, out)

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        self._text_delta(event.index, ToolArgsDelta, event.fragment, out)

    def _on_logprobs(self, event: LogprobsDelta, out: list[bytes]) -> None:
        found = self._texts(self._last_text) if self._last_text is not None else None
        if found is None or event.channel != "content":
            super()._on_logprobs(event, out)
            return
        item, (_, number, _, _) = found  # (an empty delta that carries them)
        self._frame("response.output_text.delta", {
            "item_id": item.body["id"], "output_index": item.number, "content_index": number,
            "delta": "", "logprobs": list(event.items)}, out)

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        item = self._of.get(event.index)
        if item is None or item.body.get("type") != "reasoning":
            self.drop("signature", event.index, "openai-responses signs only reasoning items",
                      event.signature)
            return
        item.body["encrypted_content"] = event.signature

    def _on_citation(self, event: CitationDelta, out: list[bytes]) -> None:
        found = self._texts(event.index)
        citation = event.citation
        if found is None or not isinstance(citation, dict):
            super()._on_citation(event, out)
            return
        if not self.same:
            url = citation.get("url") or (citation.get("url_citation") or {}).get("url")
            if not isinstance(url, str):
                super()._on_citation(event, out)
                return
            title = citation.get("title") or (citation.get("url_citation") or {}).get("title")
            citation = {"type": "url_citation", "url": url, "title": title or "",
                        "start_index": 0, "end_index": 0}
        item, (_, number, _, part) = found
        part["annotations"] = [*part.get("annotations", []), citation]
        self._frame("response.output_text.annotation.added", {
            "item_id": item.body["id"], "output_index": item.number, "content_index": number,
            "annotation_index": len(part["annotations"]) - 1, "annotation": citation}, out)

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        item = self._of.get(start.index)
        if item is None:
            return
        if item.body.get("type") == "reasoning" and self.same:
            return  # (its parts end with the item: the signature comes last)
        self._end_part(item, start.index, out)
        if not self.same and item is self._current:
            self._end_item(out)

    def _on_opaque(self, event: Opaque, out: list[bytes]) -> None:
        if self.same and isinstance(event.raw, dict):
            self._open(out)
            self._frame(event.kind, {k: v for k, v in event.raw.items()
                                     if k not in ("type", "sequence_number")}, out)
            return
        super()._on_opaque(event, out)

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        self._open(out)
        self._end_item(out)
        native = event.native if self.same else None
        limited = event.stop_reason in ("max_tokens", "content_filter")
        status = native if isinstance(native, str) else "incomplete" if limited else "completed"
        response = self._response(status)
        if status == "incomplete":
            reason = event.details if self.same and event.details else (
                STOP[self.provider].get(event.stop_reason, "max_output_tokens"))
            response["incomplete_details"] = {"reason": reason}
        response["output"] = [item.body for item in self._items]
        usage = self.usage
        response["usage"] = None if usage is None else (
            usage.native if self.same and usage.native is not None else responses_usage(usage))
        self._frame(f"response.{status}", {"response": response}, out)

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        self._open(out)
        if self.same and error.raw and error.raw.lstrip().startswith("{"):
            try:
                name = orjson.loads(error.raw).get("type")
            except (orjson.JSONDecodeError, AttributeError):
                name = None
            out.append(raw_data(error.raw, name if isinstance(name, str) else None))
            return
        self._end_item(out)
        response = self._response("failed")
        response["error"] = {"code": error.code or error.error_type or "server_error",
                             "message": error.message}
        response["output"] = [item.body for item in self._items]
        response["usage"] = responses_usage(self.usage) if self.usage is not None else None
        self._frame("response.failed", {"response": response}, out)
