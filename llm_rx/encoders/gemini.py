"""Events as a Gemini ``streamGenerateContent`` stream: SSE (``alt=sse``) or the JSON array.

Each delta is a chunk with one candidate part, written when it arrives: text as a text part,
thinking as a ``thought`` part. A signature (``thoughtSignature``) sits on a part: from
Gemini's own stream on the part it came on (a block's first part waits for the next event,
which tells whether a signature goes with it), from another provider on an empty part of
its own after the block's text. A ``functionCall`` carries whole ``args``, so a tool call is
written at its block's end (its argument fragments joined and parsed). The last chunk has the
``finishReason`` and ``usageMetadata`` (the source's own object from Gemini; else only the
reported counts), and ``content`` with an empty text part, as every real Gemini chunk has a
``content`` (code reads ``candidate.content.parts``); it waits for the reply's end. A
provider error is an ``{"error": ...}`` chunk; a cut source ends without a ``finishReason``
(and, in the array form, without ``]``).
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import ProviderError
from ..events import (
    BlockStart,
    ChoiceEnd,
    Dropped,
    Event,
    MessageStop,
    MetadataUpdate,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from ._base import Encoder, dumps
from ._tables import STOP, gemini_usage

__all__ = ["GeminiArrayEncoder", "GeminiEncoder"]

_DELTA: dict[str, type[Any]] = {"text": TextDelta, "thinking": ThinkingDelta,
                                "refusal": RefusalDelta}


class GeminiEncoder(Encoder):
    provider = "gemini"
    choices = True  # (each choice is written: n>1)

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._fields: dict[int, dict[str, Any]] = {}  # candidate -> its own fields
        self._args: dict[int, list[str]] = {}  # tool block -> fragments
        self._signatures: dict[int, str] = {}
        self._held: tuple[int, dict[str, Any]] | None = None  # a block's first part
        self._fresh: set[int] = set()  # blocks whose first part is not written yet
        self._frames = 0

    # -- framing -------------------------------------------------------------------------

    def _framed(self, data: bytes) -> bytes:
        return b"data: " + data + b"\n\n"

    def _frame(self, chunk: dict[str, Any], out: list[bytes]) -> None:
        out.append(self._framed(dumps(chunk)))
        self._frames += 1

    def _chunk(self, choice: int, parts: list[dict[str, Any]] | None, out: list[bytes],
               usage: dict[str, Any] | None = None, **fields: Any) -> None:
        out.append(self._framed(self._chunk_dumps(choice, parts, usage, **fields)))
        self._frames += 1

    def _chunk_dumps(self, choice: int, parts: list[dict[str, Any]] | None,
                     usage: dict[str, Any] | None = None, **fields: Any) -> bytes:
        candidate: dict[str, Any] = {}
        if parts is not None:
            candidate["content"] = {"parts": parts, "role": "model"}
        candidate.update(self._fields.get(choice, {}))
        candidate.update(fields)
        if not self.same or choice:
            candidate["index"] = choice
        chunk: dict[str, Any] = {"candidates": [candidate]}
        if self.same:
            chunk.update(self.metadata)
        chunk["modelVersion"] = self.model or ""
        if self.id is not None:
            chunk["responseId"] = self.id
        if usage is not None:
            chunk["usageMetadata"] = usage
        return dumps(chunk)

    def _while_holding(self, event: Event, out: list[bytes]) -> None:
        held = self._held
        if held is not None and not (
            event.__class__ is SignatureDelta and event[0] == held[0]
        ):
            self._release(out)

    def _release(self, out: list[bytes], signature: str | None = None) -> None:
        if self._held is None:
            return
        index, part = self._held
        self._held = None
        self.holding = False
        if signature is not None:
            part["thoughtSignature"] = signature
        self._chunk(self.blocks[index].choice, [part], out)

    # -- events --------------------------------------------------------------------------

    def _on_metadata(self, event: MetadataUpdate, out: list[bytes]) -> None:
        if event.choice is not None and self.same:
            self._fields.setdefault(event.choice, {}).update(event.fields)

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        if event.kind == "tool_call":
            self._args[event.index] = []
        elif event.kind in ("text", "thinking", "refusal"):  # (a refusal's words as text)
            self._fresh.add(event.index)
        elif event.kind == "opaque" and self.same and isinstance(event.raw, dict):
            self._chunk(event.choice, [dict(event.raw)], out)
        elif event.kind != "redacted_thinking":
            self.drop(f"opaque:{event.name}", event.index,
                      f"a {self.source} block gemini has no part for", event.raw)

    def _part(self, start: BlockStart, text: str) -> dict[str, Any]:
        part: dict[str, Any] = {"text": text}
        if start.kind == "thinking":
            part["thought"] = True
        if start.index in self._fresh:
            self._fresh.discard(start.index)
            meta = start.meta or {}
            if self.same and isinstance(meta.get("part"), dict):
                part.update(meta["part"])
        return part

    def _text(self, index: int, text: str, out: list[bytes]) -> None:
        start = self.blocks.get(index)
        if start is None:
            return
        first = index in self._fresh
        part = self._part(start, text)
        if first and self.same:  # (a signature that follows goes on this part)
            self._held = (index, part)
            self.holding = True
            return
        self._chunk(start.choice, [part], out)
        if not first and self._frames:  # (the block's next parts: from a template)
            thought = {"thought": True} if start.kind == "thinking" else {}
            self.learn(index, _DELTA[start.kind], lambda sample: self._framed(
                self._chunk_dumps(start.choice, [{"text": sample, **thought}])))

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        self._text(event.index, event.text, out)

    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None:
        self._text(event.index, event.text, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._text(event.index, event.text, out)

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        start = self.blocks.get(event.index)
        if start is None:
            return
        if self._held is not None and self._held[0] == event.index:
            self._release(out, event.signature)
        elif start.kind == "tool_call":
            self._signatures[event.index] = event.signature
        elif start.kind == "redacted_thinking":
            self.drop("redacted_thinking", event.index, "gemini has no redacted reasoning",
                      event.signature)
        else:
            part = self._part(start, "")
            part["thoughtSignature"] = event.signature
            self._chunk(start.choice, [part], out)

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        fragments = self._args.get(event.index)
        if fragments is not None:
            fragments.append(event.fragment)

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        if start.index in self._fresh and start.kind in ("text", "thinking"):
            self._fresh.discard(start.index)
            meta = start.meta or {}
            if self.same and isinstance(meta.get("part"), dict):  # (an empty part of its own)
                part = {"text": "", **meta["part"]}
                self._chunk(start.choice, [part], out)
        fragments = self._args.pop(start.index, None)
        if fragments is None:
            return
        raw = "".join(fragments)
        try:
            args = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            args = None
        if not isinstance(args, dict):  # (no JSON, or JSON that is no object: a list, a number)
            args = {"_raw_arguments": raw}
            self.drop("raw_arguments", start.index, "arguments that never parsed go as "
                      "{\"_raw_arguments\": ...} (gemini carries an object)", raw)
        call: dict[str, Any] = {}
        if start.id is not None:
            call["id"] = start.id
        call["name"] = start.name or ""
        if raw:  # (a call that came without arguments goes back without ``args``)
            call["args"] = args
        whole: dict[str, Any] = {"functionCall": call}
        if start.index in self._signatures:
            whole["thoughtSignature"] = self._signatures.pop(start.index)
        meta = start.meta or {}
        if self.same and isinstance(meta.get("part"), dict):
            whole.update(meta["part"])
        self._chunk(start.choice, [whole], out)

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        self._release(out)
        usage = self.usage
        body = None if usage is None else (
            usage.native if self.same and usage.native is not None else gemini_usage(usage))
        feedback = self.metadata.get("promptFeedback") if self.same else None
        if not self.blocks and not self.ends and isinstance(feedback, dict) and (
            feedback.get("blockReason")
        ):  # (a blocked prompt: no candidate at all, the feedback says why)
            chunk: dict[str, Any] = {"promptFeedback": feedback}
            if body is not None:
                chunk["usageMetadata"] = body
            chunk["modelVersion"] = self.model or ""
            if self.id:
                chunk["responseId"] = self.id
            self._frame(chunk, out)
            return
        ends: list[tuple[int, ChoiceEnd | None]] = sorted(self.ends.items()) or [(0, None)]
        for choice, end in ends:
            native = end.native if end is not None else event.native
            reason = end.stop_reason if end is not None else event.stop_reason
            if not (self.same and native is not None):
                native = STOP[self.provider].get(reason, "STOP")
            last = choice == ends[-1][0]  # (the usage goes with the last finish)
            # (a finish carries content, as every real chunk does: code reads its parts)
            self._chunk(choice, [{"text": ""}], out, body if last else None,
                        finishReason=native)

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        self._release(out)
        if self.same and error.raw and error.raw.lstrip().startswith("{"):
            self._frames += 1
            out.append(b"data: " + error.raw.encode() + b"\n\n")
            return
        self._usage_so_far(out)
        body = {"code": error.status or 500, "message": error.message,
                "status": error.error_type or "INTERNAL"}
        self._frame({"error": body}, out)

    def _usage_so_far(self, out: list[bytes]) -> None:
        """Before an error frame: a chunk with the usage reported so far (no finish)."""
        usage = gemini_usage(self.usage) if self.usage is not None else None
        if usage is not None:
            self._frame({"candidates": [], "usageMetadata": usage,
                         "modelVersion": self.model or ""}, out)

    def _on_cut(self, error: Any, out: list[bytes]) -> None:
        self._release(out)


class GeminiArrayEncoder(GeminiEncoder):
    """The JSON-array form (``streamGenerateContent`` without ``alt=sse``): ``[`` chunk
    ``,`` chunk ... ``]``; the ``]`` is the end of a complete reply (a cut one has none)."""

    def _framed(self, data: bytes) -> bytes:
        return (b"[" if self._frames == 0 else b",\r\n") + data

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        super()._on_stop(event, out)
        out.append(b"]" if self._frames else b"[]")

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        self._release(out)
        self._usage_so_far(out)
        body = {"code": error.status or 500, "message": error.message,
                "status": error.error_type or "INTERNAL"}
        self._frame({"error": body}, out)
        out.append(b"]")
