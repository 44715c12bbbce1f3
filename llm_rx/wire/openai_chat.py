"""OpenAI Chat Completions streams (``chat.completion.chunk`` over SSE) and their dialects.

One decoder, no options, for every OpenAI-compatible host in the captures: reasoning as
``reasoning_content`` (DeepSeek, xAI, Moonshot, Z.ai), ``reasoning`` and ``reasoning_details``
(Groq, OpenRouter; encrypted entries kept as redacted thinking), Mistral's array ``content``
and index-less tool calls, Azure's content-filter chunks, usage in ``x_groq.usage`` or
``choices[].usage``, in-band ``{"error": ...}`` chunks and ``event: error`` frames.

End of stream: ``[DONE]``, or EOF after a ``finish_reason`` for every choice (Perplexity), is
complete. ``[DONE]`` without any finish reason (Snowflake) is complete with the reason inferred
(``tool_use`` when tool calls arrived, else ``end_turn``) and ``details`` saying so. EOF with
neither is a truncation, and so is a reply that never had a choice (``"choices": []`` then
``[DONE]``, or a non-stream body with no choice): it is not complete.

A chunk's ``choices`` is a list (``null`` stands for none, as ``[]``); anything else is a
:class:`WireFormatError` carrying the chunk, on every path.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import IncompleteStreamError, LlmRxError, WireFormatError
from ..events import (
    BlockStart,
    BlockStop,
    ChoiceEnd,
    CitationDelta,
    Event,
    LogprobsDelta,
    MessageStop,
    MetadataUpdate,
    Opaque,
    RefusalDelta,
    TextDelta,
    ThinkingDelta,
    UsageUpdate,
)
from ..response import StopReason
from ._boundary import new_event
from ._chat_dialects import DialectParts
from ._chat_tables import (
    CHOICE_FIELDS,
    CHOICE_NEVER_KEPT,
    CHUNK_FIELDS,
    KNOWN_DELTA,
    NEVER_KEPT,
    OPENING_DELTA,
    Choice,
    finish_reason,
    usage_from_openai,
)
from ._chat_tools import ToolCallParts
from ._checks import (
    MAX_DEPTH,
    SHALLOW,
    array,
    integer,
    mapping,
    maybe_too_deep,
    string,
    too_deep,
)
from .base import SSEPayloadDecoder
from .changed import ChangedFields
from .http import in_band_error
from .sniffing import foreign_frame
from .sse import SSEEvent

__all__ = ["OpenAIChatDecoder", "finish_reason", "usage_from_openai"]

_loads = orjson.loads


class OpenAIChatDecoder(DialectParts, ToolCallParts, SSEPayloadDecoder):
    """OpenAI Chat Completions chunks over SSE, and every OpenAI-compatible host's dialect."""

    provider = "openai-chat"
    #: The ``object`` of a sibling format's chunks: one is no frame of this stream.
    foreign_object = "text_completion"

    def __init__(self, max_frame: int = 16 * 1024 * 1024) -> None:
        super().__init__(max_frame)
        self._choices: dict[int, Choice] = {}
        self._next_block = 0
        self._fields = ChangedFields(CHUNK_FIELDS)
        self._pending_extra: dict[str, Any] = {}
        self._last_usage: Any = None
        self._tool_choice: dict[int, Choice] = {}  # a tool block in some choice's tools -> it

    # -- frames ----------------------------------------------------------------------------

    def _data(self, data: bytes, out: list[Event]) -> None:
        try:
            chunk = _loads(data)
        except orjson.JSONDecodeError:  # ([DONE], or the error the general path gives)
            self._event(SSEEvent("message", data), out)
            return
        if (  # The usual chunk: one choice of the reply, its delta one string of text.
            chunk.__class__ is dict
            and self.started
            and (choices := chunk.get("choices")).__class__ is list
            and len(choices) == 1
            and (raw := choices[0]).__class__ is dict
            and (delta := raw.get("delta")).__class__ is dict
            and len(delta) == 1
            and (content := delta.get("content")).__class__ is str
            and (number := raw.get("index", 0)).__class__ is int
            and (choice := self._choices.get(number)) is not None
            and (choice.text is not None or not content)
            and not raw.get("finish_reason")
            and not raw.get("logprobs")
            and raw.get("usage").__class__ is not dict
            and chunk.get("usage") is None
            and not chunk.get("error")
            and "x_groq" not in chunk
            and chunk.get("object") != self.foreign_object
            and (len(data) <= SHALLOW or data.count(b"{") + data.count(b"[") <= MAX_DEPTH)
        ):
            # (what ``_chunk`` and ``_choice`` do with such a chunk)
            changed = self._fields.changes(chunk)
            if changed or "created" not in self._fields.values:
                self._metadata(chunk, changed or {})
            if self._pending_extra:
                out.append(MetadataUpdate(self._pending_extra))
                self._pending_extra = {}
            if content:
                out.append(new_event(TextDelta, (choice.text, content)))
            if not raw.keys() <= CHOICE_FIELDS:  # (else no field of the choice's metadata)
                changed = choice.fields.changes(raw)
                if changed:
                    out.append(MetadataUpdate(changed, number))
            return
        self._chunk(chunk, data, "message", out)

    def _event(self, event: SSEEvent, out: list[Event]) -> None:
        data = event.data
        if data == b"[DONE]":
            self._done(out, inferred_from="[DONE]")
            return
        try:  # (not ``_json``: the nesting limit is ``_chunk``'s, on the fields it may keep)
            chunk = _loads(data)
        except orjson.JSONDecodeError:
            chunk = self._json(event)  # raises the error the base class would
        self._chunk(chunk, data, event.event, out)

    def _chunk(self, chunk: Any, data: bytes, name: str, out: list[Event]) -> None:
        """The general path: any chunk of any host."""
        if type(chunk) is not dict:
            raise WireFormatError("a frame is not a JSON object", data)
        if chunk.get("object") == self.foreign_object:
            raise WireFormatError(
                f"a {self.foreign_object} chunk is no frame of an {self.provider} stream", data
            )
        if maybe_too_deep(data) and too_deep(self._kept(chunk)):
            raise WireFormatError(f"a frame is nested deeper than {MAX_DEPTH} levels", data)
        error = chunk.get("error")
        if name == "error" or error:
            self._usage(chunk, out)
            message = "the provider reported an error"
            if isinstance(error, dict):
                message = str(error.get("message") or error.get("type") or message)
            elif isinstance(error, str):
                message = error
            raise self._fail(in_band_error(message, data, error), out, start=True)
        choices = chunk.get("choices")
        if choices is not None and choices.__class__ is not list:
            raise WireFormatError("a chunk's choices are not a list", data)
        if not self.started:
            foreign = foreign_frame(data, self.provider)
            if foreign is not None:
                raise foreign
            if not chunk.get("model") and not choices:
                self._metadata(chunk)  # Azure's prompt-filter chunk comes before the model
                return
            self._start(out, chunk.get("model"), chunk.get("id"))
        self._metadata(chunk)
        if self._pending_extra:
            out.append(MetadataUpdate(self._pending_extra))
            self._pending_extra = {}
        if choices:
            for raw_choice in choices:
                self._choice(mapping(raw_choice, "a choice"), out)
        self._usage(chunk, out)

    def _kept(self, chunk: dict[str, Any]) -> dict[str, Any]:
        """The fields of a chunk a reply may keep (those the fast path skips unread are
        dropped by the general path too): what the nesting limit applies to."""
        kept = {key: value for key, value in chunk.items() if key not in NEVER_KEPT}
        if "created" in self._fields.values:  # (only the first one is kept)
            kept.pop("created", None)
        choices = kept.get("choices")
        if choices.__class__ is list:
            kept["choices"] = [
                {key: value for key, value in choice.items() if key not in CHOICE_NEVER_KEPT}
                if choice.__class__ is dict else choice
                for choice in choices
            ]
        return kept

    def _eof(self, out: list[Event]) -> None:
        if self._choices and all(choice.finished for choice in self._choices.values()):
            self._done(out, inferred_from=None)
            return
        raise self._fail(IncompleteStreamError(
            "the stream ended before [DONE] or a finish_reason"), out, start=True)

    # -- pieces ----------------------------------------------------------------------------

    def _metadata(self, chunk: dict[str, Any], changed: dict[str, Any] | None = None) -> None:
        """The chunk's fields outside the known set that changed (``changed``, when the
        caller has them already), and its first ``created``."""
        if changed is None:
            changed = self._fields.changes(chunk)
        if changed:
            self._pending_extra.update(changed)
        created = chunk.get("created")
        if created and "created" not in self._fields.values:
            self._fields.values["created"] = self._pending_extra["created"] = created

    def _usage(self, chunk: dict[str, Any], out: list[Event]) -> None:
        raw = chunk.get("usage")
        if raw is None and "x_groq" not in chunk:
            return
        if not isinstance(raw, dict):
            x_groq = chunk.get("x_groq")
            raw = x_groq.get("usage") if isinstance(x_groq, dict) else None
        if isinstance(raw, dict) and raw != self._last_usage:
            self._last_usage = raw
            if not self.started:
                self._start(out, chunk.get("model"), chunk.get("id"))
            out.append(UsageUpdate(usage_from_openai(raw)))

    def _open(self, choice: Choice, out: list[Event], kind: Any, **fields: Any) -> int:
        index = self._next_block
        self._next_block += 1
        out.append(BlockStart(index, kind, choice=choice.index, **fields) if fields
                   else new_event(BlockStart, (index, kind, None, None, choice.index, None, None)))
        choice.open[index] = None
        return index

    def _close(self, choice: Choice, index: int | None, out: list[Event]) -> None:
        if index is not None and index in choice.open:
            del choice.open[index]
            out.append(BlockStop(index))

    def _choice(self, raw: dict[str, Any], out: list[Event]) -> None:
        number = integer(raw.get("index", 0), "a choice's index")
        choice = self._choices.get(number)
        if choice is None:
            choice = self._choices[number] = Choice(number)
        delta = raw.get("delta")
        if delta:
            self._delta(choice, mapping(delta, "a delta"), out)
        changed = choice.fields.changes(raw)
        if changed:
            out.append(MetadataUpdate(changed, number))
        logprobs = raw.get("logprobs")
        if logprobs:
            for channel in ("content", "refusal"):
                items = mapping(logprobs, "logprobs").get(channel)
                if items:
                    out.append(LogprobsDelta(number, channel, tuple(array(items, channel))))
        usage = raw.get("usage")  # Moonshot puts usage on the choice
        if isinstance(usage, dict) and usage != self._last_usage:
            self._last_usage = usage
            out.append(UsageUpdate(usage_from_openai(usage)))
        native = raw.get("finish_reason")
        if native and not choice.finished:
            choice.finished = True
            self._open_early(choice, out)
            for index in list(choice.open):
                self._close(choice, index, out)
            choice.reason = finish_reason(
                str(native), tool_calls=choice.had_tools, refusal=choice.had_refusal
            )
            choice.native = native
            out.append(ChoiceEnd(number, choice.reason, native))

    def _delta(self, choice: Choice, delta: dict[str, Any], out: list[Event]) -> None:
        content = delta.get("content")
        if len(delta) == 1 and content.__class__ is str:  # the common case: one text delta
            if content:
                if choice.text is None:
                    choice.text = self._open(choice, out, "text")
                out.append(new_event(TextDelta, (choice.text, content)))
            return
        if not content and not delta.get("refusal") and delta.keys() <= OPENING_DELTA:
            return  # the usual first delta (a role, an empty text): nothing to decode
        details = delta.get("reasoning_details")
        if details:
            self._reasoning_details(choice, array(details, "reasoning_details"), delta, out)
        else:
            for field in ("reasoning_content", "reasoning"):
                text = delta.get(field)
                if isinstance(text, str) and text:
                    if choice.thinking is None:
                        choice.thinking = self._open(
                            choice, out, "thinking", meta={"field": field}
                        )
                    out.append(ThinkingDelta(choice.thinking, text))
                    break
        if content:
            if isinstance(content, str):
                self._text(choice, content, out)
            elif isinstance(content, list):
                self._content_parts(choice, content, out)
        refusal = delta.get("refusal")
        if refusal:
            string(refusal, "refusal")
            choice.had_refusal = True
            if choice.refusal is None:
                choice.refusal = self._open(choice, out, "refusal")
            out.append(RefusalDelta(choice.refusal, refusal))
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            for position, call in enumerate(array(tool_calls, "tool_calls")):
                self._tool_call(choice, position, mapping(call, "a tool call"), out)
        function_call = delta.get("function_call")
        if isinstance(function_call, dict):  # the legacy single call: a tool call of its own
            self._tool_call(choice, 0, {"index": "function_call", "function": function_call,
                                        "id": None, "type": "function_call"}, out)
        annotations = delta.get("annotations")
        if annotations:
            if choice.text is None:
                choice.text = self._open(choice, out, "text")
            for annotation in array(annotations, "annotations"):
                out.append(CitationDelta(choice.text, annotation))
        if not delta.keys() <= KNOWN_DELTA:
            for key, value in delta.items():
                if value is not None and key not in KNOWN_DELTA:
                    out.append(Opaque(f"delta.{key}", {"choice": choice.index, key: value}))

    def _text(self, choice: Choice, text: str, out: list[Event]) -> None:
        if choice.text is None:
            choice.text = self._open(choice, out, "text")
        out.append(TextDelta(choice.text, text))

    def _fail(self, error: LlmRxError, out: list[Event], *, start: bool) -> LlmRxError:
        for choice in self._choices.values():
            self._open_early(choice, out)
        return super()._fail(error, out, start=start)

    def _done(self, out: list[Event], inferred_from: str | None) -> None:
        first: Choice | None = self._choices.get(0) or next(iter(self._choices.values()), None)
        if first is None:  # (a body with ``"choices": []``, a bare ``[DONE]``: no reply)
            raise self._fail(IncompleteStreamError(
                f"the reply ended ({inferred_from or 'EOF'}) before any choice arrived"
            ), out, start=True)
        if not self.started:
            self._start(out)
        for choice in self._choices.values():
            self._open_early(choice, out)
            for index in list(choice.open):
                self._close(choice, index, out)
        if first is not None and first.finished:
            self.finished = True
            out.append(MessageStop(first.reason, None, first.native))
            return
        reason: StopReason = "tool_use" if first is not None and first.had_tools else "end_turn"
        if first is not None:
            out.append(ChoiceEnd(first.index, reason, None))
        self.finished = True
        out.append(MessageStop(reason, f"inferred: {inferred_from} without a finish_reason"))
