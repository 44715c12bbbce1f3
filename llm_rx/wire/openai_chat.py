"""OpenAI Chat Completions streams (``chat.completion.chunk`` over SSE) and their dialects.

One decoder, no options, for every OpenAI-compatible host in the captures: reasoning as
``reasoning_content`` (DeepSeek, xAI, Moonshot, Z.ai), ``reasoning`` and ``reasoning_details``
(Groq, OpenRouter; encrypted entries kept as redacted thinking), Mistral's array ``content``
and index-less tool calls, Azure's content-filter chunks, usage in ``x_groq.usage`` or
``choices[].usage``, in-band ``{"error": ...}`` chunks and ``event: error`` frames.

End of stream: ``[DONE]``, or EOF after a ``finish_reason`` for every choice (Perplexity), is
complete. ``[DONE]`` without any finish reason (Snowflake) is complete with the reason inferred
(``tool_use`` when tool calls arrived, else ``end_turn``) and ``details`` saying so. EOF with
neither is a truncation.

A chunk's ``choices`` is a list (``null`` stands for none, as ``[]``); anything else is a
:class:`WireFormatError` carrying the chunk, on every path.
"""

from __future__ import annotations

from typing import Any, NamedTuple

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
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ..response import StopReason, Usage
from ._checks import (
    MAX_DEPTH,
    WireTypeError,
    array,
    integer,
    mapping,
    maybe_too_deep,
    optional_string,
    string,
    too_deep,
)
from .base import ChangedFields, SSEPayloadDecoder, count_of, new_event
from .http import in_band_error
from .sniffing import foreign_frame
from .sse import SSEEvent

__all__ = ["OpenAIChatDecoder", "finish_reason", "usage_from_openai"]

_loads = orjson.loads

# Chunk fields that are per-chunk framing, not message metadata.
_CHUNK_FIELDS = frozenset({"id", "object", "created", "model", "choices", "usage", "obfuscation"})
# Delta fields that carry nothing a reply keeps.
_SKIPPED_DELTA = frozenset({"role", "channel", "token_id"})
# Choice fields read elsewhere, or per-token values that are not the choice's metadata.
_CHOICE_FIELDS = frozenset(
    {"index", "delta", "finish_reason", "logprobs", "usage", "token_ids", "text"}
)
_OPENING_DELTA = _SKIPPED_DELTA | {"content", "refusal"}
_KNOWN_DELTA = _SKIPPED_DELTA | {
    "content", "refusal", "tool_calls", "reasoning", "reasoning_content", "reasoning_details",
    "annotations", "function_call",
}
_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "end": "end_turn",
    "eos": "end_turn",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
    "error": "error",
}


def finish_reason(native: str, *, tool_calls: bool, refusal: bool) -> StopReason:
    """The canonical stop reason for an OpenAI-style ``finish_reason``."""
    reason = _FINISH.get(native, "end_turn")
    if reason == "end_turn":
        if tool_calls:
            return "tool_use"
        if refusal:
            return "refusal"
    return reason



def usage_from_openai(raw: dict[str, Any]) -> Usage:
    """Canonical usage from an OpenAI-style usage object (and its dialects)."""
    prompt = count_of(raw.get("prompt_tokens"))
    completion = count_of(raw.get("completion_tokens"))
    total = count_of(raw.get("total_tokens"))
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    cache_read = count_of(prompt_details.get("cached_tokens"))
    if cache_read is None:
        cache_read = count_of(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
    reasoning = count_of(completion_details.get("reasoning_tokens"))
    if reasoning is None:
        reasoning = count_of(raw.get("reasoning_tokens"))
    output = completion
    if (
        completion is not None
        and reasoning
        and prompt is not None
        and total is not None
        and prompt + completion != total
        and prompt + completion + reasoning == total
    ):
        output = completion + reasoning  # xAI: completion_tokens excludes reasoning
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_tokens=cache_read,
        cache_write_tokens=count_of(prompt_details.get("cache_write_tokens")),
        reasoning_tokens=reasoning,
        native=raw,
    )


class _Choice:
    """Per-choice decoding state: the open block of each kind, the tool calls."""

    __slots__ = (
        "details",
        "early",
        "fields",
        "finished",
        "had_refusal",
        "had_tools",
        "index",
        "last_tool",
        "native",
        "open",
        "reason",
        "refusal",
        "text",
        "thinking",
        "tools",
    )

    def __init__(self, index: int) -> None:
        self.index = index
        self.text: int | None = None
        self.thinking: int | None = None
        self.refusal: int | None = None
        self.tools: dict[Any, tuple[int, str | None]] = {}  # wire key -> (block, call id)
        self.early: dict[Any, list[str]] = {}  # wire key -> fragments before the id and name
        self.details: dict[Any, int] = {}  # reasoning_details index -> block
        self.last_tool: int | None = None
        self.had_tools = False
        self.had_refusal = False
        self.finished = False
        self.open: dict[int, None] = {}  # the open blocks, in order (a set closed in O(1))
        self.reason: StopReason = "end_turn"
        self.native: Any = None
        self.fields = ChangedFields(_CHOICE_FIELDS)


# Fields a chunk of the same layout may change without changing what it decodes to: the ones
# the general path reads only once (id, model, ...), padding, and per-token values.
_LAYOUT_IGNORES = _CHUNK_FIELDS - {"usage"} | {"choices"}
_CHOICE_LAYOUT_IGNORES = frozenset({"delta", "token_ids", "text"})
# Fields no part of a reply keeps whole (the served model and id are kept only as strings).
_NEVER_KEPT = frozenset({"id", "object", "model", "obfuscation"})
_CHOICE_NEVER_KEPT = frozenset({"token_ids", "text"})


class _Layout(NamedTuple):
    """The shape of the last plain chunk (one choice, one text delta or argument fragment):
    a chunk of the same shape, whose metadata values are the same, decodes without the
    general path."""

    keys: tuple[str, ...]
    extras: tuple[tuple[str, Any], ...]  # metadata fields and their values
    choice_keys: tuple[str, ...]
    choice_extras: tuple[tuple[str, Any], ...]  # the choice's index and metadata fields
    choice: _Choice


class OpenAIChatDecoder(SSEPayloadDecoder):
    provider = "openai-chat"
    #: The ``object`` of a sibling format's chunks: one is no frame of this stream.
    foreign_object = "text_completion"

    def __init__(self, max_frame: int = 16 * 1024 * 1024) -> None:
        super().__init__(max_frame)
        self._choices: dict[int, _Choice] = {}
        self._next_block = 0
        self._fields = ChangedFields(_CHUNK_FIELDS)
        self._pending_extra: dict[str, Any] = {}
        self._last_usage: Any = None
        self._layout: _Layout | None = None
        self._to_learn: tuple[dict[str, Any], Any, bytes] | None = None
        self._tool_choice: dict[int, _Choice] = {}  # a tool block in some choice's tools -> it

    # -- frames ----------------------------------------------------------------------------

    def _data(self, frame: bytes, out: list[Event]) -> None:
        """The hot path. A chunk shaped like the last plain one (see :class:`_Layout`), with
        the same metadata values, decodes here with a handful of lookups; anything else
        takes the general path (``_chunk``), which gives the same events, only slower."""
        if self._template_hit is not None:
            self._after_shortcuts()
        if self._to_learn is not None:
            self._learn_layout(*self._to_learn)
            self._to_learn = None
        if frame[0] != 0x7B:  # not "{": [DONE], or not a chunk
            self._event(SSEEvent("message", frame), out)
            return
        try:
            chunk = _loads(frame)
        except orjson.JSONDecodeError:
            self._event(SSEEvent("message", frame), out)  # (the general path says why)
            return
        layout = self._layout
        if layout is not None and chunk.__class__ is dict and tuple(chunk) == layout.keys:
            for key, value in layout.extras:
                if chunk[key] != value:
                    break
            else:
                choices = chunk["choices"]
                raw = choices[0] if choices.__class__ is list and len(choices) == 1 else None
                if raw.__class__ is dict and tuple(raw) == layout.choice_keys:
                    for key, value in layout.choice_extras:
                        if raw[key] != value:
                            break
                    else:
                        delta = raw["delta"]
                        if delta.__class__ is dict and len(delta) == 1:
                            content = delta.get("content")
                            block = layout.choice.text
                            if content.__class__ is str and block is not None:
                                if content:
                                    out.append(new_event(TextDelta, (block, content)))
                                return
                            if self._fast_tool_fragment(layout.choice, delta, frame, out):
                                return
        self._chunk(chunk, frame, "message", out)

    def _fast_tool_fragment(
        self, choice: _Choice, delta: dict[str, Any], data: bytes, out: list[Event]
    ) -> bool:
        """Decode a delta that is one argument fragment of a known call; ``False`` leaves
        anything else to the general path."""
        calls = delta.get("tool_calls")
        if calls.__class__ is not list or len(calls) != 1:
            return False
        call = calls[0]
        if call.__class__ is not dict or len(call) != 2:  # "index" and "function" alone
            return False
        key = call.get("index")  # (any other key, hashable or not, is the general path's)
        entry = choice.tools.get(key) if key.__class__ is int else None
        function = call.get("function")
        if entry is None or function.__class__ is not dict or len(function) != 1:
            return False
        arguments = function.get("arguments")
        if arguments.__class__ is not str:
            return False
        choice.last_tool = entry[0]
        if arguments:
            out.append(new_event(ToolArgsDelta, (entry[0], arguments)))
            self._learn(data, b'"function":{"arguments":"', arguments, ToolArgsDelta, entry[0],
                        False)
        return True

    def _after_shortcuts(self) -> None:
        """Bring the state the shortcuts skipped up to date: the call the last fragment went
        to is the call an index-less, id-less fragment continues."""
        hit = self._template_hit
        self._template_hit = None
        if hit is not None and hit[4] is ToolArgsDelta:
            choice = self._tool_choice.get(hit[5])  # (not a scan of every call: O(1))
            if choice is not None:
                choice.last_tool = hit[5]

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
        if self._template_hit is not None:
            self._after_shortcuts()
        self._layout = None
        self._forget()
        self._to_learn = None
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
        if self._shortcuts and choices and len(choices) == 1:
            raw = choices[0]
            delta = raw.get("delta") if raw.__class__ is dict else None
            if delta.__class__ is dict and len(delta) == 1:  # (see ``_learn_layout``)
                # Learnt when the next frame arrives, not now: this frame's events go out first.
                self._to_learn = (chunk, raw, data)

    def _kept(self, chunk: dict[str, Any]) -> dict[str, Any]:
        """The fields of a chunk a reply may keep (those the fast path skips unread are
        dropped by the general path too): what the nesting limit applies to."""
        kept = {key: value for key, value in chunk.items() if key not in _NEVER_KEPT}
        if "created" in self._fields.values:  # (only the first one is kept)
            kept.pop("created", None)
        choices = kept.get("choices")
        if choices.__class__ is list:
            kept["choices"] = [
                {key: value for key, value in choice.items() if key not in _CHOICE_NEVER_KEPT}
                if choice.__class__ is dict else choice
                for choice in choices
            ]
        return kept

    def _learn_layout(self, chunk: dict[str, Any], raw: Any, data: bytes) -> None:
        """Remember the shape of a plain text or argument-fragment chunk for :meth:`_data`
        (and its bytes around the delta string: see :class:`~llm_rx.wire.base.ByteTemplate`)."""
        delta = raw.get("delta") if type(raw) is dict else None
        choice = self._choices.get(raw.get("index", 0)) if delta else None
        if (
            choice is None
            or choice.finished
            or type(delta) is not dict
            or len(delta) != 1
            or not ("content" in delta or "tool_calls" in delta)
            or raw.get("finish_reason") is not None
            or raw.get("logprobs")
            or raw.get("usage") is not None
            or chunk.get("usage") is not None
            or "index" not in raw
            # (the general path still waits for a first "created": a layout would skip it)
            or ("created" in chunk and "created" not in self._fields.values)
        ):
            return
        self._layout = _Layout(
            tuple(chunk),
            tuple((k, v) for k, v in chunk.items() if k not in _LAYOUT_IGNORES),
            tuple(raw),
            tuple((k, v) for k, v in raw.items() if k not in _CHOICE_LAYOUT_IGNORES),
            choice,
        )
        content = delta.get("content")
        if content.__class__ is str and choice.text is not None:
            self._learn(data, b'"delta":{"content":"', content, TextDelta, choice.text, False)


    def _eof(self, out: list[Event]) -> None:
        if self._choices and all(choice.finished for choice in self._choices.values()):
            self._done(out, inferred_from=None)
            return
        raise self._fail(IncompleteStreamError(
            "the stream ended before [DONE] or a finish_reason"), out, start=True)

    # -- pieces ----------------------------------------------------------------------------

    def _metadata(self, chunk: dict[str, Any]) -> None:
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

    def _open(self, choice: _Choice, out: list[Event], kind: Any, **fields: Any) -> int:
        index = self._next_block
        self._next_block += 1
        out.append(BlockStart(index, kind, choice=choice.index, **fields) if fields
                   else new_event(BlockStart, (index, kind, None, None, choice.index, None, None)))
        choice.open[index] = None
        return index

    def _close(self, choice: _Choice, index: int | None, out: list[Event]) -> None:
        if index is not None and index in choice.open:
            del choice.open[index]
            out.append(BlockStop(index))

    def _choice(self, raw: dict[str, Any], out: list[Event]) -> None:
        number = integer(raw.get("index", 0), "a choice's index")
        choice = self._choices.get(number)
        if choice is None:
            choice = self._choices[number] = _Choice(number)
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

    def _delta(self, choice: _Choice, delta: dict[str, Any], out: list[Event]) -> None:
        content = delta.get("content")
        if len(delta) == 1 and content.__class__ is str:  # the common case: one text delta
            if content:
                if choice.text is None:
                    choice.text = self._open(choice, out, "text")
                out.append(new_event(TextDelta, (choice.text, content)))
            return
        if not content and not delta.get("refusal") and delta.keys() <= _OPENING_DELTA:
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
        if not delta.keys() <= _KNOWN_DELTA:
            for key, value in delta.items():
                if value is not None and key not in _KNOWN_DELTA:
                    out.append(Opaque(f"delta.{key}", {"choice": choice.index, key: value}))

    def _text(self, choice: _Choice, text: str, out: list[Event]) -> None:
        if choice.text is None:
            choice.text = self._open(choice, out, "text")
        out.append(TextDelta(choice.text, text))

    def _content_parts(
        self, choice: _Choice, parts: list[Any], out: list[Event]
    ) -> None:
        """Mistral's array content: ``{"type": "text"}`` and ``{"type": "thinking"}`` parts."""
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and part.get("text"):
                self._text(choice, string(part["text"], "a text part's text"), out)
            elif kind == "thinking":
                pieces = part.get("thinking")
                texts = (
                    [string(p.get("text", ""), "a thinking piece's text")
                     for p in pieces if isinstance(p, dict)]
                    if isinstance(pieces, list)
                    else [pieces] if isinstance(pieces, str) else []
                )
                if choice.thinking is None:
                    choice.thinking = self._open(
                        choice, out, "thinking", meta={"field": "content_parts"}
                    )
                for text in texts:
                    if text:
                        out.append(ThinkingDelta(choice.thinking, text))
            else:
                out.append(Opaque(f"content.{kind}", {"choice": choice.index, "part": part}))

    def _reasoning_details(
        self, choice: _Choice, details: list[Any], delta: dict[str, Any], out: list[Event]
    ) -> None:
        also_plain = "reasoning" in delta
        for position, item in enumerate(details):
            if not isinstance(item, dict):
                continue
            key = item.get("index", position)
            if not isinstance(key, (int, str)):
                raise WireTypeError(f"a reasoning_details index is {key!r}")
            kind = item.get("type")
            index = choice.details.get(key)
            if index is None:
                meta = {
                    "field": "reasoning_details",
                    "detail_type": kind,
                    "format": item.get("format"),
                    "plain": also_plain,
                }
                if "id" in item:
                    meta["id"] = item["id"]
                block_kind = "redacted_thinking" if kind == "reasoning.encrypted" else "thinking"
                index = choice.details[key] = self._open(choice, out, block_kind, meta=meta)
                if block_kind == "thinking":
                    choice.thinking = index
            text = item.get("text") if kind != "reasoning.summary" else item.get("summary")
            if isinstance(text, str) and text:
                out.append(ThinkingDelta(index, text))
            signature = item.get("signature") or item.get("data")
            if isinstance(signature, str) and signature:
                out.append(SignatureDelta(index, signature))

    def _tool_call(
        self, choice: _Choice, position: int, call: dict[str, Any], out: list[Event]
    ) -> None:
        choice.had_tools = True
        call_id = optional_string(call.get("id") or None, "a tool call's id")
        function = mapping(call.get("function") or {}, "a tool call's function")
        key = call.get("index")
        if not isinstance(key, (int, str, type(None))):
            raise WireTypeError(f"a tool call's index is {key!r}")
        if key is None:  # Mistral: no index; each listed call with an id is its own call
            key = ("id", call_id) if call_id else None
        entry = choice.tools.get(key) if key is not None else None
        if entry is not None and call_id and entry[1] and entry[1] != call_id:
            entry = None  # same index, another id: a parallel call, not a continuation
        if entry is None and key is None and call_id is None:
            last = choice.last_tool
            entry = (last, None) if last is not None else None
        arguments = function.get("arguments")
        fragment = arguments if isinstance(arguments, str) or arguments is None else (
            orjson.dumps(arguments).decode())
        if entry is None and key is not None and call_id is None and not function.get("name"):
            if fragment:  # before the call's id and name: held until they come (PITFALLS 37)
                choice.early.setdefault(key, []).append(fragment)
            return
        if entry is None:
            meta = {"type": call["type"]} if call.get("type") else None
            index = self._open(
                choice, out, "tool_call", id=call_id,
                name=optional_string(function.get("name"), "a tool call's name"), meta=meta
            )
            entry = (index, call_id)
            if key is not None:
                replaced = choice.tools.get(key)
                if replaced is not None:
                    self._tool_choice.pop(replaced[0], None)
                choice.tools[key] = entry
                self._tool_choice[index] = choice
                for held in choice.early.pop(key, ()):
                    out.append(ToolArgsDelta(index, held))
        index = entry[0]
        choice.last_tool = index
        if fragment:
            out.append(ToolArgsDelta(index, fragment))

    def _open_early(self, choice: _Choice, out: list[Event]) -> None:
        """Calls whose id and name never came, opened without them (their arguments kept)."""
        for key, fragments in choice.early.items():
            index = self._open(choice, out, "tool_call")
            choice.tools[key] = (index, None)
            self._tool_choice[index] = choice
            out.extend(ToolArgsDelta(index, fragment) for fragment in fragments)
        choice.early.clear()

    def _fail(self, error: LlmRxError, out: list[Event], *, start: bool) -> LlmRxError:
        for choice in self._choices.values():
            self._open_early(choice, out)
        return super()._fail(error, out, start=start)

    def _done(self, out: list[Event], inferred_from: str | None) -> None:
        first: _Choice | None = self._choices.get(0) or next(iter(self._choices.values()), None)
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
