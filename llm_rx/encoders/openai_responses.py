"""Events as an OpenAI Responses stream (``response.*`` events over SSE).

``response.created`` opens (from another provider followed by ``response.in_progress``, both
carrying the whole response object the Open Responses specification requires); each block
is a part of an output item (``message`` for text and refusals, ``reasoning`` for thinking,
``function_call`` / ``custom_tool_call`` for a call), its deltas written as they arrive.
Blocks of the source's own items (Responses to Responses) are grouped back into those items;
from another provider consecutive text and refusal blocks are the parts of one message and
every other block an item of its own, each part between its ``content_part.added`` and
``.done`` (reasoning text included: its deltas are OpenAI's ``response.reasoning_text.*``,
the specification's ``response.reasoning.*``). A reasoning item carries its signature (or
redacted data) as ``encrypted_content``. The
``.done`` events repeat a part's, an item's whole text, so they wait for its end (an item of
several parts ends when a block of another item starts, or at the reply's end). The end:
``response.completed``, or ``response.incomplete`` for a reply a limit ended (with
``incomplete_details.reason``), carrying every item and the usage; a provider error is
``response.failed`` with the error and the usage and an empty ``output`` (every item went
out whole before it, so a failure at the end of a long reply does not send it twice); a cut
source ends with no terminal event. The final response of a reply that ended equals
``to_native(response, "openai-responses")`` of the same reply.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import ProviderError
from ..events import (
    BlockStart,
    CitationDelta,
    LogprobsDelta,
    MessageStop,
    Opaque,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from ..native._responses_resource import (
    approval_item,
    item_id,
    resource_usage,
    responses_citation,
)
from ..response import ApprovalRequestBlock
from ._base import dumps, raw_data
from ._responses_output import EVENT_OF, TOOL_FIELD, Item, ResponsesOutput
from ._tables import STOP

__all__ = ["OpenAIResponsesEncoder"]


class OpenAIResponsesEncoder(ResponsesOutput):
    provider = "openai-responses"
    approvals = True
    several = True  # (its decoder reads one response after another)

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
            if tool not in TOOL_FIELD:
                item.body["type"] = tool = "function_call"
            item.body.update({"call_id": event.id or f"call_{event.index}",
                              "name": event.name or "", TOOL_FIELD[tool]: ""})
            if not self.same:
                item.body.setdefault("status", "in_progress")
                self._called.append(event.name or "")
            self._added(item, out)
            item.parts[event.index] = ("args", 0, [], {"type": tool})
            item.blocks.append(event.index)
            self._of[event.index] = item
        elif self.same and isinstance(event.raw, dict):
            self._end_item(out)
            number = len(self._items)
            item = Item(("opaque", event.index), number, dict(event.raw))
            self._items.append(item)
            self._frame("response.output_item.added", {"output_index": number,
                                                       "item": event.raw}, out)
            self._frame("response.output_item.done", {"output_index": number,
                                                      "item": event.raw}, out)
        else:
            self.drop(f"opaque:{event.name}", event.index,
                      f"a {self.source} block openai-responses has no item for", event.raw)

    def _on_approval(self, start: BlockStart, arguments: Any, out: list[bytes]) -> None:
        """An ``mcp_approval_request`` item, whole in its ``.added`` and ``.done`` (as
        ``to_native`` writes it: the source's item verbatim for a Responses reply)."""
        self._open(out)
        self._end_item(out)
        number = len(self._items)
        block = ApprovalRequestBlock(id=start.id, name=start.name, arguments=arguments,
                                     server=(start.meta or {}).get("server"), raw=start.raw)
        body = approval_item(block, self.same, item_id("mcp_approval_request", self.id, number))
        self._items.append(Item(("approval", start.index), number, body))
        self._frame("response.output_item.added", {"output_index": number, "item": body}, out)
        self._frame("response.output_item.done", {"output_index": number, "item": body}, out)

    def _texts(self, index: int) -> tuple[Item, tuple[str, int, list[str], dict[str, Any]]] | None:
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
        if kind in TOOL_FIELD:
            name = EVENT_OF[str(kind)] + ".delta"
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
        item, (_, number, _, part) = found  # (an empty delta that carries them)
        part["logprobs"] = [*part.get("logprobs", ()), *event.items]
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
            flat = responses_citation(citation)
            if flat is None:
                super()._on_citation(event, out)
                return
            citation = flat
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
        if not self.same and item is self._current and item.body.get("type") != "message":
            self._end_item(out)  # (a message waits: the next text joins it)

    def _on_opaque(self, event: Opaque, out: list[bytes]) -> None:
        if self.same and isinstance(event.raw, dict):
            self._open(out)
            self._frame(event.kind, {k: v for k, v in event.raw.items()
                                     if k not in ("type", "sequence_number")}, out)
            return
        super()._on_opaque(event, out)

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        self._open(out)
        native = event.native if self.same else None
        limited = event.stop_reason in STOP[self.provider]  # (an incomplete response's)
        status = native if isinstance(native, str) else "incomplete" if limited else "completed"
        current = self._current
        if limited and current is not None and (
                not self.same or current.body.get("status") in (None, "in_progress")):
            current.body["status"] = "incomplete"  # (the item the limit cut, never closed)
        self._end_item(out)
        details = None
        if status == "incomplete":
            reason = event.details if self.same and event.details else (
                STOP[self.provider].get(event.stop_reason, "max_output_tokens"))
            details = {"reason": reason}
        usage: Any = self.usage
        if self.same and usage is not None and usage.native is not None:
            usage = usage.native
        elif self.same:
            usage = resource_usage(usage)
        response = self._response(status, [item.body for item in self._items], usage=usage,
                                  incomplete_details=details)
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
        failure = {"code": error.code or error.error_type or "server_error",
                   "message": error.message}
        usage: Any = self.usage if not self.same else resource_usage(self.usage)
        # (every item went out whole before this frame: it carries the error and the usage,
        # not the reply again; an empty output is valid for the SDK and the specification)
        response = self._response("failed", [], usage=usage, error=failure)
        self._frame("response.failed", {"response": response}, out)
