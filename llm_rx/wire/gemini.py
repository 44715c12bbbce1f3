"""Gemini ``streamGenerateContent`` streams, in both of their forms.

With ``alt=sse`` each chunk is an SSE event; without it the body is one JSON array whose
elements arrive one by one. The first bytes tell which (``[`` or not), so one decoder, with no
options, reads both, and the same chunks give the same events in either form.

Each chunk is a ``GenerateContentResponse``: candidates (choices) with parts. Every part is
read, in order (a chunk may hold a thought, text and several calls). Consecutive text parts of
one kind (text, or ``thought`` text as thinking) form one block only while neither carries a
``thoughtSignature``: a signed part is a block of its own, even with empty text, and the
signature stays on it byte for byte; an unsigned empty text part adds nothing. A
``functionCall`` is a tool call (``raw_arguments`` the compact JSON of ``args``, key order
kept); Vertex ``partialArgs`` / ``willContinue`` fragments are written out as JSON text as
they arrive, and the call ends at a part without ``willContinue`` (the ``{}`` terminator).
Other parts (``executableCode``, ``codeExecutionResult``, ``inlineData`` ...) are ``opaque``
blocks, verbatim. Candidate fields (``safetyRatings``, ``groundingMetadata``,
``urlContextMetadata``, ``finishMessage`` ...) and top-level ones (``createTime``,
``promptFeedback``) are metadata. ``usageMetadata`` is repeated, cumulative, on every chunk:
each change is a snapshot. Enums may come as integers (``enum-encoding=int``): ``finishReason``
is read either way (``1`` is ``STOP``).

End of stream: the wire has no terminal frame but a ``finishReason`` (a blocked prompt's
``promptFeedback.blockReason`` counts too). In the SSE form, EOF after a finish reason for
every candidate is complete and EOF before is a truncation. The JSON-array form must also
close its array: its ``]`` ends the reply (complete if every candidate finished, else a
truncation), and EOF before the ``]`` is a truncation even after a finish reason. So a stream
cut before its finish reason is interrupted in either form, and a whole one complete in both.
"""

from __future__ import annotations

from typing import Any, Literal

import orjson

from ..errors import IncompleteStreamError, LlmRxError
from ..events import (
    BlockStart,
    BlockStop,
    ChoiceEnd,
    Event,
    MessageStop,
    MetadataUpdate,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ._boundary import attach_events, new_event
from ._checks import MAX_DEPTH, SHALLOW, array, integer, mapping, optional_string
from ._gemini_args import PartialArgs
from ._gemini_array import ArrayForm
from ._gemini_tables import (
    CALL_FIELDS,
    CANDIDATE_FIELDS,
    CHUNK_FIELDS,
    FINISH_REASONS,
    PART_META,
    STOP,
    TEXT_FIELDS,
    Candidate,
    finish_name,
    usage_from_gemini,
)
from .base import SSEPayloadDecoder
from .changed import ChangedFields
from .http import in_band_error
from .json_array import JSONArrayDecoder
from .sniffing import foreign_frame
from .sse import DEFAULT_MAX_FRAME, SSEEvent

__all__ = ["FINISH_REASONS", "GeminiDecoder", "finish_name", "usage_from_gemini"]

_loads = orjson.loads

_BOM = b"\xef\xbb\xbf"
_SPACE = b" \t\r\n"


class GeminiDecoder(ArrayForm, SSEPayloadDecoder):
    """Both forms of Gemini's `streamGenerateContent`: SSE (the base class's framing) or one
    JSON array (`JSONArrayDecoder`), told from the first byte that is not whitespace."""

    provider = "gemini"

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__(max_frame)
        self._max_frame = max_frame
        self._form: Literal["sse", "array"] | None = None
        self._head = b""  # the first bytes, until they tell the form
        self._array: JSONArrayDecoder | None = None
        self._candidates: dict[int, Candidate] = {}
        self._next_block = 0
        self._fields = ChangedFields(CHUNK_FIELDS)
        self._last_usage: Any = None
        self._usage_sent: Any = None
        self._usage_due = False
        self._blocked: str | None = None

    # -- the two forms ---------------------------------------------------------------------

    def decode(self, chunk: bytes) -> list[Event]:
        if self._form == "sse":
            return super().decode(chunk)
        if self._form == "array":
            return self._decode_array(chunk)
        head = self._head + chunk
        text = head.lstrip(_SPACE)
        if text.startswith(_BOM):
            text = text[3:].lstrip(_SPACE)
        if not text or _BOM.startswith(text):
            self._head = head
            return []
        self._head = b""
        if text[:1] == b"[":
            self._form = "array"
            self._array = JSONArrayDecoder(self._max_frame)
            return self._decode_array(text)
        self._form = "sse"
        return super().decode(head)

    def flush(self) -> list[Event]:
        if self._form == "array":
            return self._flush_array()
        out: list[Event] = []
        if self._form is None:  # too few bytes to tell: read them as SSE
            self._form = "sse"
            out = super().decode(self._head)
        try:
            return out + super().flush()
        except LlmRxError as error:
            raise attach_events(error, [*out, *error.events]) from None

    def _data(self, data: bytes, out: list[Event]) -> None:
        try:
            chunk = _loads(data)
        except orjson.JSONDecodeError:
            chunk = None
        if chunk.__class__ is not dict or (  # (a frame that may be nested too deep: walked)
            len(data) > SHALLOW and data.count(b"{") + data.count(b"[") > MAX_DEPTH
        ):
            chunk = self._parse(data)  # (the typed error, or the depth walked)
        self._chunk(chunk, data, out)

    def _event(self, event: SSEEvent, out: list[Event]) -> None:
        self._chunk(self._json(event), event.data, out)

    def _eof(self, out: list[Event]) -> None:
        self._end(out, "the stream ended")

    # -- chunks ----------------------------------------------------------------------------

    def _chunk(self, chunk: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        error = chunk.get("error")
        if error:
            message = "the provider reported an error"
            if isinstance(error, dict):
                words = [str(error[key]) for key in ("status", "message") if error.get(key)]
                message = ": ".join(words) or message
            raise self._fail(in_band_error(message, raw, error), out, start=True)
        if not self.started:
            foreign = foreign_frame(raw, self.provider) if raw.__class__ is bytes else None
            if foreign is not None:
                raise foreign
            self._start(out, chunk.get("modelVersion"), chunk.get("responseId"))
        changed = self._fields.changes(chunk)
        if changed:
            out.append(MetadataUpdate(changed))
            feedback = changed.get("promptFeedback")
            if isinstance(feedback, dict) and feedback.get("blockReason"):
                self._blocked = str(feedback.get("blockReasonMessage") or feedback["blockReason"])
        candidates = chunk.get("candidates")
        if candidates:
            if candidates.__class__ is list and len(candidates) == 1:
                self._one_candidate(candidates[0], out)
            else:
                for candidate in array(candidates, "candidates"):
                    self._candidate(mapping(candidate, "a candidate"), out)
        self._usage(chunk.get("usageMetadata"), out)

    def _one_candidate(self, raw: Any, out: list[Event]) -> None:
        """A chunk's only candidate: the usual one, more text for its open text block,
        decoded here; any other by ``_candidate``."""
        if raw.__class__ is dict and raw.get("finishReason") is None:
            number = raw.get("index", 0)
            cand = self._candidates.get(number) if number.__class__ is int else None
            content = raw.get("content")
            parts = content.get("parts") if content.__class__ is dict else None
            if (cand is not None and cand.kind == "text" and parts.__class__ is list
                    and len(parts) == 1):
                part = parts[0]
                text = part.get("text") if part.__class__ is dict and len(part) == 1 else None
                if text.__class__ is str and text:
                    out.append(new_event(TextDelta, (cand.block, text)))
                    if not raw.keys() <= CANDIDATE_FIELDS:  # (else no metadata field)
                        changed = cand.fields.changes(raw)
                        if changed:
                            out.append(MetadataUpdate(changed, number))
                    return
        self._candidate(mapping(raw, "a candidate"), out)

    def _usage(self, usage: Any, out: list[Event]) -> None:
        if usage and usage != self._last_usage:
            if usage.__class__ is not dict:
                mapping(usage, "usageMetadata")  # (the typed error)
            # Gemini repeats its cumulative counts on every chunk. The first snapshot (and
            # one that reports another set of counts) goes out at once, after the one held;
            # the running repeats are held and the latest goes out before the reply ends (or
            # fails): a snapshot per chunk cost more than decoding the chunk, and the totals
            # at the end are the same. A live meter sees the counts at the start and the end.
            sent = self._usage_sent
            if sent is None or usage.keys() != sent.keys():
                self._flush_usage(out)
                self._last_usage = self._usage_sent = usage
                self._usage_due = False
                out.append(UsageUpdate(usage_from_gemini(usage)))
            else:
                self._last_usage = usage
                self._usage_due = True

    def _candidate(self, raw: dict[str, Any], out: list[Event]) -> None:
        number = integer(raw.get("index", 0), "a candidate's index")
        cand = self._candidates.get(number)
        if cand is None:
            cand = self._candidates[number] = Candidate(number)
        content = raw.get("content")
        if content:
            parts = mapping(content, "a candidate's content").get("parts")
            if parts:
                for part in array(parts, "parts"):
                    self._part(cand, mapping(part, "a part"), out)
        changed = cand.fields.changes(raw)
        if changed:
            out.append(MetadataUpdate(changed, number))
        native = raw.get("finishReason")
        if native is None or cand.finished:
            return
        name = finish_name(native)
        if name != "FINISH_REASON_UNSPECIFIED":  # (the proto's "not finished yet")
            self._close(cand, out)
            cand.finished = True
            reason = STOP.get(str(name), "end_turn")
            cand.reason = "tool_use" if reason == "end_turn" and cand.had_calls else reason
            cand.native = native
            cand.words = optional_string(raw.get("finishMessage"), "finishMessage")
            out.append(ChoiceEnd(number, cand.reason, native))

    def _part(self, cand: Candidate, part: dict[str, Any], out: list[Event]) -> None:
        text = optional_string(part.get("text"), "a part's text")
        if len(part) == 1 and cand.kind == "text" and text:  # the common case: more text
            out.append(new_event(TextDelta, (cand.block, text)))
            return
        if text.__class__ is str:
            kind = "thinking" if part.get("thought") else "text"
            signature = optional_string(part.get("thoughtSignature"), "thoughtSignature")
            plain = signature is None and part.keys() <= TEXT_FIELDS
            if plain and (cand.kind == kind or not text):
                if not text:
                    return  # an unsigned empty part adds nothing
                if kind == "text":  # more of the open block
                    out.append(new_event(TextDelta, (cand.block, text)))
                else:
                    out.append(new_event(ThinkingDelta, (cand.block, text)))
                return
            extra = {key: value for key, value in part.items() if key not in TEXT_FIELDS}
            index = self._open(cand, kind, out, meta={"part": extra} if extra else None)
            if text:
                out.append((TextDelta if kind == "text" else ThinkingDelta)(index, text))
            if signature is not None or not plain:  # signed or unusual: a block of its own
                if signature is not None:
                    out.append(SignatureDelta(index, str(signature)))
                self._close(cand, out)
            return
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._call(cand, part, call, out)
            return
        self._close(cand, out)
        kind = next((key for key in part if key not in PART_META), "part")
        index = self._next_block
        self._next_block += 1
        out.append(BlockStart(index, "opaque", name=kind, choice=cand.index, raw=part))
        out.append(BlockStop(index))

    def _call(
        self, cand: Candidate, part: dict[str, Any], call: dict[str, Any], out: list[Event]
    ) -> None:
        more = bool(call.get("willContinue"))
        signature = optional_string(part.get("thoughtSignature"), "thoughtSignature")
        index = cand.block
        if cand.args is None or "name" in call:  # a new call
            if not call and signature is None:
                return  # a "{}" terminator with no call streaming: nothing to end
            cand.had_calls = True
            extra = {key: value for key, value in part.items() if key not in CALL_FIELDS}
            index = self._open(cand, "tool_call", out,
                               id=optional_string(call.get("id"), "a functionCall's id"),
                               name=optional_string(call.get("name"), "a functionCall's name"),
                               meta={"part": extra} if extra else None)
            cand.args = PartialArgs()
        assert index is not None
        assert cand.args is not None
        if signature is not None:
            out.append(SignatureDelta(index, str(signature)))
        args = call.get("args")
        if args is not None:
            out.append(ToolArgsDelta(index, orjson.dumps(args).decode()))
        for arg in array(call.get("partialArgs") or [], "partialArgs"):
            fragment = cand.args.add(mapping(arg, "a partialArgs entry"))
            if fragment:
                out.append(ToolArgsDelta(index, fragment))
        if not more:
            self._close(cand, out)

    def _open(self, cand: Candidate, kind: Any, out: list[Event], **fields: Any) -> int:
        self._close(cand, out)
        index = self._next_block
        self._next_block += 1
        out.append(BlockStart(index, kind, choice=cand.index, **fields))
        cand.block = index
        cand.kind = kind
        return index

    def _close(self, cand: Candidate, out: list[Event]) -> None:
        if cand.block is None:
            return
        if cand.args is not None:
            fragment = cand.args.close()
            if fragment:
                out.append(ToolArgsDelta(cand.block, fragment))
            cand.args = None
        out.append(BlockStop(cand.block))
        cand.block = None
        cand.kind = None

    def _flush_usage(self, out: list[Event]) -> None:
        """Send the latest held usage snapshot, if one is due."""
        if self._usage_due:
            self._usage_due = False
            self._usage_sent = self._last_usage
            out.append(UsageUpdate(usage_from_gemini(self._last_usage)))

    def _fail(self, error: LlmRxError, out: list[Event], *, start: bool) -> LlmRxError:
        if self.started:
            self._flush_usage(out)
        return super()._fail(error, out, start=start)

    def _end(self, out: list[Event], how: str) -> None:
        """The reply's end arrived: complete if every candidate (or the prompt) finished."""
        self._flush_usage(out)
        candidates = self._candidates.values()
        if not candidates and self._blocked is not None:  # the prompt was blocked
            self.finished = True
            out.append(MessageStop("content_filter", self._blocked))
            return
        if not (candidates and all(cand.finished for cand in candidates)):
            raise self._fail(
                IncompleteStreamError(f"{how} before a finishReason"), out, start=True
            )
        self.finished = True
        first = self._candidates[min(self._candidates)]
        out.append(MessageStop(first.reason, first.words, first.native))
