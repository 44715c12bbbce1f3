"""The output of a Responses stream being written: its framing (each event's
``sequence_number``), its response snapshots and its output items with their parts, each
part's ``.added`` and ``.done`` events in the order the specification gives them
(``output_item.added``, ``content_part.added`` / ``reasoning_summary_part.added``, the
deltas, the text's ``.done``, ``content_part.done``, ``output_item.done``)."""

from __future__ import annotations

from typing import Any

from ..events import BlockStart, Dropped
from ..native._responses_resource import item_id, resource
from ._base import Encoder, dumps

__all__ = ["EVENT_OF", "TOOL_FIELD", "Item", "ResponsesOutput"]

#: a tool call item's type -> the field its input text goes in
TOOL_FIELD = {"function_call": "arguments", "custom_tool_call": "input"}
#: a tool call item's type -> the prefix of the events that stream its input
EVENT_OF = {"function_call": "response.function_call_arguments",
            "custom_tool_call": "response.custom_tool_call_input"}

class Item:
    """An output item being written: its body, its parts' texts, its number."""

    __slots__ = ("blocks", "body", "key", "number", "parts")

    def __init__(self, key: Any, number: int, body: dict[str, Any]) -> None:
        self.key = key
        self.number = number
        self.body = body
        self.blocks: list[int] = []
        self.parts: dict[int, tuple[str, int, list[str], dict[str, Any]]] = {}

class ResponsesOutput(Encoder):
    """What every event of the Responses encoder writes through."""

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._opened = False
        self._seq = 0
        self._items: list[Item] = []  # in output order (done ones too)
        self._current: Item | None = None
        self._of: dict[int, Item] = {}  # block index -> its item
        self._last_text: int | None = None  # the text block written last (its logprobs)
        self._called: list[str] = []  # the names of the tools called (another provider's)
        self._announced: set[int] = set()  # blocks whose part had its ``.added`` event

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

    def _response(self, status: str, output: list[dict[str, Any]] | None = None,
                  **fields: Any) -> dict[str, Any]:
        """The response snapshot: the source's own fields for a Responses reply, else the
        whole object the specification requires (as ``to_native`` writes it)."""
        if not self.same:
            return resource(id=self.id, model=self.model, status=status, fields=self.metadata,
                            output=output or [], usage=fields.pop("usage", None),
                            tools=self._called, **fields)
        body: dict[str, Any] = {"id": self.id or "", "object": "response", "created_at": 0,
                                "model": self.model or "", "status": status}
        body.update(self.metadata)
        body["status"] = status
        body.update(fields)
        if output is not None:
            body["output"] = output
        return body

    def _open(self, out: list[bytes]) -> None:
        if not self._opened:
            self._opened = True
            if not self.same:  # (the specification's opening: created, then in_progress)
                response = self._response("in_progress")
                self._frame("response.created", {"response": response}, out)
                self._frame("response.in_progress", {"response": response}, out)
                return
            response = self._response(self.metadata.get("status", "in_progress"), [],
                                      usage=None)
            self._frame("response.created", {"response": response}, out)

    # -- items ---------------------------------------------------------------------------

    def _item_for(self, start: BlockStart, kind: str, out: list[bytes]) -> Item:
        meta = start.meta or {}
        key = meta.get("item_id") if self.same and meta.get("item_id") else ("block", start.index)
        if not self.same and kind == "message":  # (consecutive texts: one message)
            key = ("message",)
        item = self._current
        if item is not None and item.key == key and kind != "opaque":
            return item
        self._end_item(out)
        number = len(self._items)
        body: dict[str, Any] = {"id": key if isinstance(key, str) else item_id(
            kind, self.id, number)}
        if self.same and isinstance(meta.get("item"), dict):
            body.update(meta["item"])
        body.setdefault("type", kind)
        if body["type"] == "message":
            body.setdefault("role", "assistant")
            body.setdefault("status", "in_progress")
            body["content"] = []
        elif body["type"] == "reasoning":
            body["summary"] = []
        item = self._current = Item(key, number, body)
        self._items.append(item)
        return item

    def _end_item(self, out: list[bytes]) -> None:
        item, self._current = self._current, None
        if item is None:
            return
        body = item.body
        for index in list(item.parts):
            self._end_part(item, index, out)
        kind = body.get("type")
        if kind in ("message", "reasoning", "function_call", "custom_tool_call") and (
            body.get("status") == "in_progress"
            or (kind in TOOL_FIELD and "status" not in body)  # (as its .done has it)
        ):
            body["status"] = "completed"
        self._frame("response.output_item.done", {"output_index": item.number, "item": body},
                    out)

    def _added(self, item: Item, out: list[bytes]) -> None:
        body = dict(item.body)
        for key in ("content", "summary"):
            if key in body:
                body[key] = []
        self._frame("response.output_item.added", {"output_index": item.number, "item": body},
                    out)

    def _start_part(self, item: Item, start: BlockStart, channel: str, part: dict[str, Any],
                    out: list[bytes]) -> None:
        meta = start.meta or {}
        # (a block read from the provider's own stream announces its part only where the
        # source did; one with no meta at all was never read from a stream: announced)
        announce = not self.same or not meta or isinstance(meta.get("part"), dict)
        if self.same and isinstance(meta.get("part"), dict):  # (the part's own fields)
            part = {"type": part["type"], **meta["part"]}
        number = sum(1 for value in item.parts.values() if value[0] == channel) + len(
            item.body.get(channel) or ())
        item.parts[start.index] = (channel, number, [], part)
        item.blocks.append(start.index)
        self._of[start.index] = item
        if not announce:
            return  # (the source's part had no ``.added``: its first delta opened it)
        if channel == "content":
            self._announced.add(start.index)
            self._frame("response.content_part.added", {
                "item_id": item.body["id"], "output_index": item.number, "content_index": number,
                "part": {**part, "text": ""} if part.get("type") != "refusal"
                else {**part, "refusal": ""}}, out)
        elif channel == "summary":
            self._frame("response.reasoning_summary_part.added", {
                "item_id": item.body["id"], "output_index": item.number,
                "summary_index": number, "part": {**part, "text": ""}}, out)

    def _end_part(self, item: Item, index: int, out: list[bytes]) -> None:
        entry = item.parts.pop(index, None)
        if entry is None:
            return
        channel, number, texts, part = entry
        text = "".join(texts)
        at = {"item_id": item.body["id"], "output_index": item.number}
        kind = part.get("type")
        if kind in TOOL_FIELD:
            field = TOOL_FIELD[str(kind)]
            if not text and not self.same and kind == "function_call":
                text = "{}"  # (a call with no arguments: its one delta says so, as OpenAI's)
                self._frame(EVENT_OF[str(kind)] + ".delta", {**at, "delta": text}, out)
            item.body[field] = text
            self._frame(EVENT_OF[str(kind)] + ".done", {**at, field: text}, out)
            return
        whole = {**part, "refusal" if kind == "refusal" else "text": text}
        item.body.setdefault(channel, []).append(whole)
        if kind == "summary_text":
            self._frame("response.reasoning_summary_text.done",
                        {**at, "summary_index": number, "text": text}, out)
            self._frame("response.reasoning_summary_part.done",
                        {**at, "summary_index": number, "part": whole}, out)
        elif kind == "reasoning_text":  # (OpenAI's name; the specification's is reasoning)
            self._frame("response.reasoning_text.done",
                        {**at, "content_index": number, "text": text}, out)
            if index in self._announced:
                self._frame("response.content_part.done",
                            {**at, "content_index": number, "part": whole}, out)
        else:
            name = "response.refusal.done" if kind == "refusal" else "response.output_text.done"
            done = {**at, "content_index": number,
                    ("refusal" if kind == "refusal" else "text"): text}
            if kind != "refusal":
                done["logprobs"] = part.get("logprobs") or []
            self._frame(name, done, out)
            self._frame("response.content_part.done",
                        {**at, "content_index": number, "part": whole}, out)
