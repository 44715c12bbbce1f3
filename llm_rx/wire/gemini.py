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

import re
from itertools import repeat
from operator import itemgetter
from typing import Any, Literal, NamedTuple

import orjson

from ..errors import IncompleteStreamError, LlmRxError, WireFormatError
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
from ..response import StopReason, Usage
from ._checks import array, check_depth, integer, mapping, optional_string
from .base import (
    ByteTemplate,
    ChangedFields,
    SSEPayloadDecoder,
    attach_events,
    count_of,
    json_strings,
    new_event,
    split_frames,
)
from .http import in_band_error
from .json_array import JSONArrayDecoder
from .sniffing import foreign_frame
from .sse import DEFAULT_MAX_FRAME, SSEEvent

__all__ = ["FINISH_REASONS", "GeminiDecoder", "finish_name", "usage_from_gemini"]

_loads = orjson.loads
_DIGITS = b"0123456789"
# Of a partition: before the separator, after it.
_BEFORE, _AFTER = itemgetter(0), itemgetter(2)

#: ``finishReason`` names by their number (Gemini API ``Candidate.FinishReason``).
FINISH_REASONS: dict[int, str] = {
    0: "FINISH_REASON_UNSPECIFIED", 1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY", 4: "RECITATION",
    5: "OTHER", 6: "LANGUAGE", 7: "BLOCKLIST", 8: "PROHIBITED_CONTENT", 9: "SPII",
    10: "MALFORMED_FUNCTION_CALL", 11: "IMAGE_SAFETY", 12: "UNEXPECTED_TOOL_CALL",
    13: "TOO_MANY_TOOL_CALLS", 14: "IMAGE_PROHIBITED_CONTENT", 15: "IMAGE_OTHER",
    16: "NO_IMAGE", 17: "IMAGE_RECITATION",
}
_FILTERED = ("SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
             "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR")
_FAILED = ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS",
           "MISSING_THOUGHT_SIGNATURE", "MALFORMED_RESPONSE")
_STOP: dict[str, StopReason] = {
    "STOP": "end_turn", "MAX_TOKENS": "max_tokens",
    **dict.fromkeys(_FILTERED, "content_filter"), **dict.fromkeys(_FAILED, "error"),
}
_CHUNK_FIELDS = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId"})
_CANDIDATE_FIELDS = frozenset({"content", "finishReason"})
_TEXT_FIELDS = frozenset({"text", "thought", "thoughtSignature"})
_CALL_FIELDS = frozenset({"functionCall", "thoughtSignature"})
_PART_META = frozenset({"thought", "thoughtSignature", "partMetadata", "videoMetadata",
                        "mediaResolution"})
_BOM = b"\xef\xbb\xbf"
_SPACE = b" \t\r\n"
_PATH = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")



def usage_from_gemini(raw: dict[str, Any]) -> Usage:
    """Canonical usage from ``usageMetadata``: output counts the thoughts too."""
    get = raw.get
    candidates = count_of(get("candidatesTokenCount"))
    thoughts = count_of(get("thoughtsTokenCount"))
    if thoughts is None:
        output = candidates
    else:
        output = thoughts if candidates is None else candidates + thoughts
    return Usage(
        input_tokens=count_of(get("promptTokenCount")),
        output_tokens=output,
        cache_read_tokens=count_of(get("cachedContentTokenCount")),
        reasoning_tokens=thoughts,
        native=raw,
    )


def finish_name(native: Any) -> Any:
    """A ``finishReason`` (or a number standing for one) as its name."""
    return FINISH_REASONS.get(native, native) if isinstance(native, int) else native


class _Args:
    """Vertex ``partialArgs`` written as the JSON text of the arguments, as they arrive.

    Each value is placed at its ``jsonPath``, opening and closing objects and arrays on the
    way; a string with ``willContinue`` stays open for the next fragment at the same path.
    Paths arrive depth first; one that goes back into a container already closed would give a
    repeated key (the text is never rewritten).
    """

    __slots__ = ("open_string", "stack")

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []  # open containers: [path segment, is array, count]
        self.open_string: tuple[Any, ...] | None = None

    def add(self, arg: dict[str, Any]) -> str:
        path = tuple(
            int(m[2]) if m.lastindex == 2 else m[m.lastindex or 1]
            for m in _PATH.finditer(str(arg.get("jsonPath", "")))
        )
        more = bool(arg.get("willContinue"))
        text = arg.get("stringValue")
        out = ""
        if self.open_string is not None:
            if path == self.open_string and isinstance(text, str):
                out = orjson.dumps(text).decode()[1:-1]
                if not more:
                    out += '"'
                    self.open_string = None
                return out
            out = '"'
            self.open_string = None
        if isinstance(text, str):
            value = orjson.dumps(text).decode()
        elif "numberValue" in arg or "boolValue" in arg:
            value = orjson.dumps(arg.get("numberValue", arg.get("boolValue"))).decode()
        elif "nullValue" in arg:
            value = "null"
        else:
            return out
        if not path:
            return out
        if not self.stack:
            out += "{"
            self.stack.append(["$", False, 0])
        *containers, leaf = path
        common = 0
        for segment, entry in zip(containers, self.stack[1:], strict=False):
            if entry[0] != segment:
                break
            common += 1
        while len(self.stack) > common + 1:
            out += "]" if self.stack.pop()[1] else "}"
        for depth in range(common, len(containers)):
            out += self._member(containers[depth])
            is_array = isinstance(path[depth + 1], int)
            out += "[" if is_array else "{"
            self.stack.append([containers[depth], is_array, 0])
        out += self._member(leaf)
        if isinstance(text, str) and more:
            self.open_string = path
            return out + value[:-1]
        return out + value

    def _member(self, segment: Any) -> str:
        parent = self.stack[-1]
        out = "," if parent[2] else ""
        parent[2] += 1
        return out if isinstance(segment, int) else out + orjson.dumps(segment).decode() + ":"

    def close(self) -> str:
        out = '"' if self.open_string is not None else ""
        while self.stack:
            out += "]" if self.stack.pop()[1] else "}"
        return out


class _Shape(NamedTuple):
    """The shape of the last plain text chunk, for the hot path."""

    keys: tuple[str, ...]
    extras: tuple[tuple[str, Any], ...]  # the chunk's own fields and their values
    candidate_keys: tuple[str, ...]
    candidate_extras: tuple[tuple[str, Any], ...]
    content_keys: tuple[str, ...]
    candidate: _Candidate


class _Spans(NamedTuple):
    """The bytes of the last plain text chunk around its two varying parts, the text and the
    ``usageMetadata`` object: a chunk whose other bytes are the same, the text one JSON
    string and the usage one JSON object, is that chunk with another text and usage."""

    prefix: bytes  # up to and with the text's opening quote
    middle: bytes  # from the text's closing quote to the usage object
    suffix: bytes  # after the usage object
    block: int
    skeleton: bytes  # the usage object without its digits

    def strings(self, frames: list[bytes]) -> tuple[list[str], list[dict[str, Any]]] | None:
        """The texts and usages of ``frames`` if each is this chunk with another text and
        other counts (C-level work only, no Python per frame); ``None`` if one is not."""
        parts = split_frames(frames, self.prefix, self.middle, self.suffix)
        if parts is None:
            return None
        count = len(frames)
        usages = list(map(_AFTER, parts))
        # Every usage the learned one but for its digits: each is one balanced object, so
        # none can reach into the next in the array below (one with a digit in a key, or an
        # empty or padded number, is caught by parsing: another key, or an error).
        if set(map(bytes.translate, usages, repeat(None), repeat(_DIGITS))) != {self.skeleton}:
            return None
        texts = json_strings(map(_BEFORE, parts), count)
        try:
            counts = _loads(b"[" + b",".join(usages) + b"]")
        except orjson.JSONDecodeError:
            return None
        if texts is None or len(counts) != count or len(set(map(tuple, counts))) != 1:
            return None
        return texts, counts

    @classmethod
    def learn(cls, data: bytes, text: str, usage: Any, block: int) -> _Spans | None:
        if not isinstance(usage, dict):
            return None
        text_at = ByteTemplate.learn(data, b'"text": "', text) or ByteTemplate.learn(
            data, b'"text":"', text
        )
        if text_at is None:
            return None
        after = text_at.suffix
        for key in (b'"usageMetadata": ', b'"usageMetadata":'):
            at = after.find(key)
            if at >= 0:
                break
        else:
            return None
        if after.find(key, at + 1) >= 0:
            return None
        start = at + len(key)
        end = after.find(b"}", start)
        while end >= 0:  # the usage object ends at the "}" that closes what was parsed
            try:
                if _loads(after[start : end + 1]) == usage:
                    skeleton = after[start : end + 1].translate(None, _DIGITS)
                    return cls(text_at.prefix, after[:start], after[end + 1 :], block, skeleton)
            except orjson.JSONDecodeError:
                pass
            end = after.find(b"}", end + 1)
        return None


class _Candidate:
    """Per-candidate state: the one block open for more parts, and how the candidate ended."""

    __slots__ = ("args", "block", "fields", "finished", "had_calls", "index", "kind", "native",
                 "reason", "words")

    def __init__(self, index: int) -> None:
        self.index = index
        self.block: int | None = None  # the open block: unsigned text or thinking, or a call
        self.kind: str | None = None  # "text" | "thinking" | "tool_call"
        self.args: _Args | None = None  # a call streaming its partialArgs
        self.had_calls = False
        self.finished = False
        self.reason: StopReason = "end_turn"
        self.native: Any = None
        self.words: str | None = None
        self.fields = ChangedFields(_CANDIDATE_FIELDS)


class GeminiDecoder(SSEPayloadDecoder):
    """Both forms of ``streamGenerateContent``: SSE (the base class's framing) or one JSON
    array (:class:`JSONArrayDecoder`), told from the first byte that is not whitespace."""

    provider = "gemini"

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__(max_frame)
        self._max_frame = max_frame
        self._form: Literal["sse", "array"] | None = None
        self._head = b""  # the first bytes, until they tell the form
        self._array: JSONArrayDecoder | None = None
        self._candidates: dict[int, _Candidate] = {}
        self._next_block = 0
        self._fields = ChangedFields(_CHUNK_FIELDS)
        self._last_usage: Any = None
        self._fast: _Shape | None = None
        self._spans: _Spans | None = None
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
            raise attach_events(error, out + getattr(error, "events", [])) from None

    def _decode_array(self, chunk: bytes) -> list[Event]:
        out: list[Event] = []
        if self.finished:
            return out
        assert self._array is not None
        try:
            failure: LlmRxError | None = None
            try:
                elements = self._array.decode(chunk)
            except LlmRxError as error:
                elements, failure = getattr(error, "frames", []), error
            # (as the SSE form's frames: a chunk of an unexpected shape is a wire-format
            # error carrying the element, and elements after the end are counted, unread)
            self._each(elements, out, self._array_element)
            if failure is not None and not self.finished:
                raise failure
            if self._array.closed and not self.finished:
                self._end(out, "the array closed")
        except LlmRxError as error:
            raise self._fail(error, out, start=self.started) from None
        return out

    def _flush_array(self) -> list[Event]:
        out: list[Event] = []
        if self.finished:
            return out
        assert self._array is not None
        try:
            self._array.flush()
        except LlmRxError as error:  # (a cut array opens the message; bytes that are no
            # array at all, refused at EOF, do not)
            start = not isinstance(error, WireFormatError)
            raise self._fail(error, out, start=start) from None
        return out  # (closed and not finished cannot be: the "]" ends the reply)

    def _array_element(self, element: bytes, out: list[Event]) -> None:
        self._chunk(self._element(element), element, out)

    def _element(self, element: bytes) -> dict[str, Any]:
        try:
            payload = orjson.loads(element)
        except orjson.JSONDecodeError:
            raise WireFormatError("an array element is not valid JSON", element) from None
        if not isinstance(payload, dict):
            raise WireFormatError("an array element is not a JSON object", element)
        check_depth(payload, element)
        return payload

    def _event(self, event: SSEEvent, out: list[Event]) -> None:
        self._chunk(self._json(event), event.data, out)

    def _batchable(self) -> bool:
        return self._spans is not None

    def _batch(self, frames: list[Any], start: int, out: list[Event]) -> int:
        """Runs of chunks like the last plain one (see :class:`_Spans`) decode in batches,
        with no Python work per chunk; returns where the one-by-one loop takes over."""
        spans = self._spans
        assert spans is not None
        if self._spans_run(frames[start:], out):  # (all of them: no runs to find)
            return len(frames)
        return self._in_runs(
            frames, start, spans.prefix, spans.suffix,
            lambda run: self._spans_run(run, out),
            lambda others: self._one_by_one(others, 0, out, False),
            lambda: self._spans is spans,
        )

    def _spans_run(self, frames: list[Any], out: list[Event]) -> bool:
        """Decode ``frames`` as the spans path of :meth:`_data` would, one by one, if each is
        the last plain chunk with another text and counts; ``False`` (nothing decoded) if not."""
        spans = self._spans
        assert spans is not None
        found = spans.strings(frames)
        if found is None:
            return False
        texts, counts = found
        block = spans.block
        if texts[0]:
            out.append(new_event(TextDelta, (block, texts[0])))
        self._usage(counts[0], out)
        rest = texts[1:]
        if "" in rest:
            rest = [text for text in rest if text]
        out.extend(map(new_event, repeat(TextDelta), zip(repeat(block), rest)))
        # The later counts, one by one, would each be held (same keys) when they differ from
        # the one before; the latest is the last one.
        if counts.count(counts[0]) != len(counts):
            self._last_usage = counts[-1]
            self._usage_due = True
        return True

    def _data(self, data: bytes, out: list[Event]) -> None:
        spans = self._spans
        if spans is not None and data.startswith(spans.prefix) and data.endswith(spans.suffix):
            # The hottest path: the last plain chunk's bytes but for its text and its usage
            # counts; only those two are parsed (see :class:`_Spans`).
            opening = len(spans.prefix) - 1
            middle = data.find(spans.middle, opening + 1)
            usage_from = middle + len(spans.middle)
            usage_to = len(data) - len(spans.suffix)
            if middle > opening and usage_to > usage_from:
                try:
                    text = _loads(data[opening : middle + 1])
                    usage = _loads(data[usage_from:usage_to])
                except orjson.JSONDecodeError:
                    text = usage = None
                if text.__class__ is str and usage.__class__ is dict:
                    check_depth(usage, data)
                    if text:
                        out.append(new_event(TextDelta, (spans.block, text)))
                    self._usage(usage, out)
                    return
        try:
            chunk = _loads(data)
        except orjson.JSONDecodeError:
            chunk = None
        if chunk.__class__ is not dict:  # the general path says what is wrong with it
            self._event(SSEEvent("message", data), out)
            return
        check_depth(chunk, data)
        fast = self._fast
        if fast is not None and tuple(chunk) == fast.keys and self._same(chunk, fast.extras):
            # The hot path: a chunk shaped like the last plain one (one candidate, one text
            # part for its open text block) decodes to one TextDelta, as ``_chunk`` would.
            candidates = chunk["candidates"]
            raw = candidates[0] if candidates.__class__ is list and len(candidates) == 1 else None
            if (
                raw.__class__ is dict
                and tuple(raw) == fast.candidate_keys
                and raw.get("finishReason") is None
                and self._same(raw, fast.candidate_extras)
            ):
                content = raw["content"]
                parts = content.get("parts") if content.__class__ is dict else None
                if (
                    parts.__class__ is list
                    and len(parts) == 1
                    and tuple(content) == fast.content_keys
                ):
                    part = parts[0]
                    text = part.get("text") if part.__class__ is dict and len(part) == 1 else None
                    if text.__class__ is str and text:
                        out.append(new_event(TextDelta, (fast.candidate.block, text)))
                        self._usage(chunk.get("usageMetadata"), out)
                        return
        self._chunk(chunk, data, out)

    @staticmethod
    def _same(obj: dict[str, Any], values: tuple[tuple[str, Any], ...]) -> bool:
        for key, value in values:  # noqa: SIM110 - a loop: no generator on the hot path
            if obj[key] != value:
                return False
        return True

    def _learn_shape(self, chunk: dict[str, Any], data: bytes) -> None:
        """Remember the shape of a plain text chunk, and its bytes (see :meth:`_data`)."""
        self._fast = None
        self._spans = None
        if not self._shortcuts:
            return
        candidates = chunk.get("candidates")
        if not (isinstance(candidates, list) and len(candidates) == 1) or chunk.get("error"):
            return
        raw = candidates[0]
        content = raw.get("content") if isinstance(raw, dict) else None
        parts = content.get("parts") if isinstance(content, dict) else None
        cand = self._candidates.get(raw.get("index", 0)) if parts else None
        if (
            cand is None
            or cand.finished
            or cand.kind != "text"
            or raw.get("finishReason") is not None
            or not isinstance(parts, list)
            or len(parts) != 1
            or not isinstance(parts[0], dict)
            or list(parts[0]) != ["text"]
        ):
            return
        self._fast = _Shape(
            tuple(chunk),
            tuple((k, v) for k, v in chunk.items() if k not in _CHUNK_FIELDS),
            tuple(raw),
            tuple((k, v) for k, v in raw.items() if k not in _CANDIDATE_FIELDS),
            tuple(content) if isinstance(content, dict) else (),
            cand,
        )
        if cand.block is not None:
            self._spans = _Spans.learn(data, parts[0]["text"], chunk.get("usageMetadata"),
                                       cand.block)
            if self._spans is not None:
                self._learned += 1

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
            for candidate in array(candidates, "candidates"):
                self._candidate(mapping(candidate, "a candidate"), out)
        self._usage(chunk.get("usageMetadata"), out)
        self._learn_shape(chunk, raw)

    def _usage(self, usage: Any, out: list[Event]) -> None:
        if usage and usage != self._last_usage:
            mapping(usage, "usageMetadata")
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
            cand = self._candidates[number] = _Candidate(number)
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
            reason = _STOP.get(str(name), "end_turn")
            cand.reason = "tool_use" if reason == "end_turn" and cand.had_calls else reason
            cand.native = native
            cand.words = optional_string(raw.get("finishMessage"), "finishMessage")
            out.append(ChoiceEnd(number, cand.reason, native))

    def _part(self, cand: _Candidate, part: dict[str, Any], out: list[Event]) -> None:
        text = optional_string(part.get("text"), "a part's text")
        if len(part) == 1 and cand.kind == "text" and text:  # the common case: more text
            out.append(new_event(TextDelta, (cand.block, text)))
            return
        if text.__class__ is str:
            kind = "thinking" if part.get("thought") else "text"
            signature = optional_string(part.get("thoughtSignature"), "thoughtSignature")
            plain = signature is None and part.keys() <= _TEXT_FIELDS
            if plain and (cand.kind == kind or not text):
                if not text:
                    return  # an unsigned empty part adds nothing
                if kind == "text":  # more of the open block
                    out.append(new_event(TextDelta, (cand.block, text)))
                else:
                    out.append(new_event(ThinkingDelta, (cand.block, text)))
                return
            extra = {key: value for key, value in part.items() if key not in _TEXT_FIELDS}
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
        kind = next((key for key in part if key not in _PART_META), "part")
        index = self._next_block
        self._next_block += 1
        out.append(BlockStart(index, "opaque", name=kind, choice=cand.index, raw=part))
        out.append(BlockStop(index))

    def _call(
        self, cand: _Candidate, part: dict[str, Any], call: dict[str, Any], out: list[Event]
    ) -> None:
        more = bool(call.get("willContinue"))
        signature = optional_string(part.get("thoughtSignature"), "thoughtSignature")
        index = cand.block
        if cand.args is None or "name" in call:  # a new call
            if not call and signature is None:
                return  # a "{}" terminator with no call streaming: nothing to end
            cand.had_calls = True
            extra = {key: value for key, value in part.items() if key not in _CALL_FIELDS}
            index = self._open(cand, "tool_call", out,
                               id=optional_string(call.get("id"), "a functionCall's id"),
                               name=optional_string(call.get("name"), "a functionCall's name"),
                               meta={"part": extra} if extra else None)
            cand.args = _Args()
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

    def _open(self, cand: _Candidate, kind: Any, out: list[Event], **fields: Any) -> int:
        self._close(cand, out)
        index = self._next_block
        self._next_block += 1
        out.append(BlockStart(index, kind, choice=cand.index, **fields))
        cand.block = index
        cand.kind = kind
        return index

    def _close(self, cand: _Candidate, out: list[Event]) -> None:
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

