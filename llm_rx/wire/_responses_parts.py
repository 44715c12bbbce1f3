"""The content parts of the Responses API's output items: text, refusal, reasoning text and
tool arguments, each from its deltas or, where none came, from its ``.done`` given whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ..errors import ProtocolError
from ..events import (
    BlockKind,
    BlockStart,
    BlockStop,
    CitationDelta,
    Event,
    LogprobsDelta,
    SignatureDelta,
    TextDelta,
    ToolArgsDelta,
)
from ._boundary import new_event
from ._checks import array, string
from ._responses_items import DELTAS, MODELLED, PARTS, TEXT, Item, Part, Spec

__all__ = ["PartFrames"]


class PartFrames:
    """The part frames of :class:`~llm_rx.wire.openai_responses.OpenAIResponsesDecoder`
    (which keeps the items and gives ``_item`` and ``_reserve``)."""

    _hot: dict[tuple[Any, str, Any], Part]  # (output, channel, number) -> part
    _refusal: bool
    _lost: ProtocolError | None  # the first part whose deltas disagree with its .done

    if TYPE_CHECKING:  # (the decoder's)
        _items: dict[Any, Item]

        def _item(self, frame: dict[str, Any], implied: str, *, delta: bool) -> Item: ...
        def _reserve(self, item: Item | None = None) -> int: ...

    def _open(self, item: Item, key: tuple[str, Any], kind: BlockKind, out: list[Event],
              part: dict[str, Any] | None = None, **fields: Any) -> Part:
        meta: dict[str, Any] = {"item_id": item.id, "item": item.fields}
        if part is not None:  # the part's own fields (its lists stand for their keys)
            meta["part"] = {
                k: [] if k in ("annotations", "logprobs") else v
                for k, v in part.items()
                if k not in ("text", "refusal")
            }
        if kind in ("thinking", "redacted_thinking"):
            meta["channel"] = key[0]
        elif kind == "refusal":
            self._refusal = True
        opened = item.parts[key] = self._hot[(item.key, *key)] = Part(self._reserve(item), kind)
        out.append(BlockStart(opened.index, kind, meta=meta, **fields))
        return opened

    def _part(self, frame: dict[str, Any], spec: Spec, out: list[Event]) -> Part:
        """The open part a delta is for (opened if never announced)."""
        implied, channel, number_key, kind, _ = spec
        item = self._item(frame, implied, delta=True)
        key = (channel, frame.get(number_key, 0))
        part = item.parts.get(key)
        if part is None:
            part = self._open(item, key, kind, out)
        elif not part.open:
            raise ProtocolError(
                f"a delta for part {key[1]} of output item {item.id}, which already ended",
                orjson.dumps(frame),
            )
        return part

    def _text_delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        part = self._hot.get((frame.get("output_index"), "content", frame.get("content_index")))
        if part is None or not part.open:
            part = self._part(frame, TEXT, out)
        part.streamed = True
        text = frame.get("delta", "")
        if text.__class__ is not str:
            text = string(text, "delta")  # (the typed error)
        part.texts.append(text)
        out.append(new_event(TextDelta, (part.index, text)))
        logprobs = frame.get("logprobs")
        if logprobs:
            out.append(LogprobsDelta(0, "content", tuple(array(logprobs, "logprobs"))))

    def _delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        spec = PARTS[frame["type"].rpartition(".")[0]]
        part = self._hot.get((frame.get("output_index"), spec[1], frame.get(spec[2])))
        if part is None or not part.open:
            part = self._part(frame, spec, out)
        part.streamed = True
        text = string(frame.get("delta", ""), "delta")
        part.texts.append(text)
        out.append(new_event(DELTAS[part.kind], (part.index, text)))

    def _args_delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        part = self._hot.get((frame.get("output_index"), "args", 0))
        if part is None or not part.open:
            implied = "custom_tool_call" if "custom" in frame["type"] else "function_call"
            part = self._part(frame, (implied, "args", "", "tool_call", ""), out)
        part.streamed = True
        fragment = frame.get("delta")
        if fragment.__class__ is str and fragment:
            part.texts.append(fragment)
            out.append(new_event(ToolArgsDelta, (part.index, fragment)))

    def _args_done(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        implied = "custom_tool_call" if "custom" in frame["type"] else "function_call"
        item = self._item(frame, implied, delta=False)
        part = item.parts.get(("args", 0)) or self._open(item, ("args", 0), "tool_call", out)
        self._args_whole(part, frame.get("arguments", frame.get("input")), out, item, raw)

    def _args_whole(self, part: Part, value: Any, out: list[Event], item: Item,
                    raw: bytes | None = None) -> None:
        """Arguments given whole: they count only where no delta brought them."""
        if part.open and not part.streamed and isinstance(value, str) and value:
            part.streamed = True
            part.texts = [value]
            out.append(ToolArgsDelta(part.index, value))
        elif part.open and isinstance(value, str):
            self._against_deltas(part, value, out, item, raw)

    def _against_deltas(self, part: Part, whole: str, out: list[Event], item: Item,
                        raw: bytes | None) -> None:
        """A part's ``.done`` text against what its deltas brought. A proxy that dropped
        deltas: the part's end is appended from the ``.done`` text when the deltas brought
        its beginning; either way the loss is kept and told at the terminal event (the reply
        is not complete)."""
        streamed = "".join(part.texts) if len(part.texts) != 1 else part.texts[0]
        if streamed == whole:
            return
        part.texts = [whole]
        kept = whole.startswith(streamed)
        if kept:
            delta = ToolArgsDelta if part.kind == "tool_call" else DELTAS[part.kind]
            out.append(delta(part.index, whole[len(streamed):]))
        if self._lost is None:
            how = ("its end is kept from the .done text" if kept
                   else "the .done text is this error's frame")
            self._lost = ProtocolError(
                f"deltas were lost: block {part.index} (output item {item.id}) streamed "
                f"{len(streamed)} of the {len(whole)} characters of its .done text; {how}",
                raw if raw is not None else orjson.dumps({"text": whole}),
            )

    def _numbered(self, item: Item, channel: str, count: int) -> list[tuple[str, Any]]:
        """The keys of an item's ``count`` parts on ``channel`` given whole (by position, in
        a ``.done`` item or the terminal response's output). A part is keyed by the number
        its frames gave it, which need not be its position: a host that numbers an item's
        parts from 1 sends one part as ``content_index: 1``. Positions are shifted so the
        highest number streamed is the last part."""
        numbers = [number for kind, number in item.parts
                   if kind == channel and number.__class__ is int]
        shift = max(numbers) - (count - 1) if numbers and max(numbers) >= count else 0
        return [(channel, number + shift) for number in range(count)]

    def _check_output(self, output: Any, raw: bytes) -> None:
        """The terminal response's ``output``, where it gives the items, against what
        streamed: a text part whose streamed text differs (or a message that never streamed)
        is a loss, and the reply is not complete."""
        if self._lost is not None or not isinstance(output, list):
            return
        for position, body in enumerate(output):
            if not isinstance(body, dict) or body.get("type") != "message":
                continue
            parts = body.get("content")
            if not isinstance(parts, list):
                continue
            item = self._items.get(position) or self._items.get(body.get("id"))
            keys = self._numbered(item, "content", len(parts)) if item is not None else []
            for at, part in enumerate(parts):
                text = part.get("text", part.get("refusal")) if isinstance(part, dict) else None
                if not isinstance(text, str) or not text:
                    continue
                streamed = item.parts.get(keys[at]) if item is not None else None
                got = "".join(streamed.texts) if streamed is not None else ""
                if got != text:
                    self._lost = ProtocolError(
                        f"the final output disagrees with the stream: part {at} of output "
                        f"item {body.get('id')} has {len(text)} characters, its deltas "
                        f"brought {len(got)}", raw)
                    return

    def _annotation(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        part = self._part(frame, TEXT, out)
        part.cited = True
        out.append(CitationDelta(part.index, frame.get("annotation")))

    def _text_done(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        implied, channel, number_key, _, part_type = PARTS[frame["type"].rpartition(".")[0]]
        item = self._item(frame, implied, delta=False)
        body = {"type": part_type, "text": frame.get("text", frame.get("refusal")),
                "logprobs": frame.get("logprobs")}
        # The part ends with its content_part.done (a reasoning part: with its item).
        self._part_whole(item, (channel, frame.get(number_key, 0)), body, out, close=False,
                         raw=raw)

    def _part_key(self, frame: dict[str, Any]) -> tuple[str, str, Any]:
        if frame["type"].startswith("response.reasoning_summary_part."):
            return "reasoning", "summary", frame.get("summary_index", 0)
        return "message", "content", frame.get("content_index", 0)

    def _part_added(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        implied, channel, number = self._part_key(frame)
        item = self._item(frame, implied, delta=True)
        body = frame.get("part")
        if (channel, number) not in item.parts and isinstance(body, dict):
            self._open_part(item, (channel, number), body, out)

    def _part_done(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        implied, channel, number = self._part_key(frame)
        item = self._item(frame, implied, delta=False)
        body = frame.get("part")
        if isinstance(body, dict):
            close = item.type != "reasoning"  # the signature comes with the item's end
            self._part_whole(item, (channel, number), body, out, close=close, raw=raw)

    def _open_part(self, item: Item, key: tuple[str, Any], body: dict[str, Any],
                   out: list[Event]) -> Part | None:
        kind = body.get("type")
        if kind == "refusal":
            return self._open(item, key, "refusal", out, part=body)
        if kind in ("output_text", "summary_text", "reasoning_text", None):
            block: BlockKind = "thinking" if item.type == "reasoning" else "text"
            return self._open(item, key, block, out, part=body)
        return None  # a part type nobody models: given whole at its .done

    def _part_whole(self, item: Item, key: tuple[str, Any], body: dict[str, Any],
                    out: list[Event], *, close: bool, raw: bytes | None = None) -> None:
        """A part given whole (a ``.done``): its text and citations count only where no delta
        brought them (where deltas did, the text is checked against them)."""
        part = item.parts.get(key) or self._open_part(item, key, body, out)
        if part is None:  # a part type nobody models, verbatim
            part = item.parts[key] = Part(self._reserve(item), "opaque")
            part.open = False
            meta = {"item_id": item.id, "item": item.fields, "channel": key[0]}
            out.append(BlockStart(part.index, "opaque", name=str(body.get("type")), raw=body,
                                  meta=meta))
            out.append(BlockStop(part.index))
            return
        if not part.open:
            return
        text = body.get("text", body.get("refusal"))
        if not part.streamed and isinstance(text, str) and text:
            part.streamed = True
            part.texts = [text]
            out.append(DELTAS[part.kind](part.index, text))
            logprobs = body.get("logprobs")
            if logprobs and part.kind == "text":
                out.append(LogprobsDelta(0, "content", tuple(array(logprobs, "logprobs"))))
        elif part.streamed and isinstance(text, str):
            self._against_deltas(part, text, out, item, raw)
        annotations = body.get("annotations")
        if not part.cited and annotations:
            part.cited = True
            for annotation in array(annotations, "annotations"):
                out.append(CitationDelta(part.index, annotation))
        if close:
            part.open = False
            out.append(BlockStop(part.index))

    def _folded(self, frame: dict[str, Any]) -> bool:
        """Whether the frame is a progress event of a known opaque item (its ``.done`` item
        carries the outcome)."""
        key = frame.get("output_index", frame.get("item_id"))
        item = self._items.get(key) if key is not None else None
        return item is not None and item.type not in MODELLED

    def _item_stream(self, path: tuple[str, ...], frame: dict[str, Any]) -> None:
        key = frame.get("output_index", frame.get("item_id"))
        item = self._items.get(key)
        value = frame.get("delta")
        if item is None or item.pending is None or not isinstance(value, str):
            return
        item.streams.setdefault(path, []).append(value)  # (joined once: ``as_it_stands``)

    def _reasoning_done(self, item: Item, body: dict[str, Any], out: list[Event],
                        raw: bytes) -> None:
        for channel in ("summary", "content"):
            parts = body.get(channel) or ()
            for key, part in zip(self._numbered(item, channel, len(parts)), parts, strict=True):
                if isinstance(part, dict):
                    self._part_whole(item, key, part, out, close=False, raw=raw)
        signature = body.get("encrypted_content")
        if not item.parts:  # no text at all: one block for the item
            kind: BlockKind = "redacted_thinking" if signature else "thinking"
            self._open(item, ("item", 0), kind, out)
        if isinstance(signature, str) and signature:
            first = min(part.index for part in item.parts.values())
            out.append(SignatureDelta(first, signature))

    def _close_all(self, item: Item, out: list[Event]) -> None:
        for part in item.parts.values():
            if part.open:
                part.open = False
                out.append(BlockStop(part.index))
