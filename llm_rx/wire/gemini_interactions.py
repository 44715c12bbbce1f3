"""Gemini Interactions API streams (``POST /v1beta/interactions`` with ``stream: true``).

SSE events whose payload names its kind in ``event_type``: ``interaction.created`` (the id,
the model), ``interaction.status_update``, then per step ``step.start`` / ``step.delta`` /
``step.stop`` (each with the step's ``index``), ``interaction.completed`` (the status and the
usage) or ``error``, and ``data: [DONE]``. Every event may carry an ``event_id`` (the cursor
a resumed ``GET`` starts after).

Steps, in the order they start, as blocks:

- ``thought``: a ``thinking`` block; ``thought_summary`` deltas are its text, the
  ``thought_signature`` delta its signature (byte for byte, even with no summary).
- ``model_output``: a ``text`` block; ``text`` deltas are its text, the ``url_citation`` (and
  other) annotations of a ``text_annotation_delta`` its citations. An ``image``, ``audio``,
  ``video`` or ``document`` delta is an ``opaque`` block of its own, verbatim.
- ``function_call``: a ``tool_call`` block (``id``, ``name`` from the start). Its arguments
  arrive as ``arguments_delta`` fragments: a string in ``arguments`` (the wire), a string in
  ``partial_arguments``, or an object (the compact JSON of it, key order kept). A start that
  already holds the whole ``arguments`` object (a non-stream body re-framed) gives them once.
- Every other step (``google_search_call`` / ``_result``, ``code_execution_*``,
  ``url_context_*``, MCP, file search ...): an ``opaque`` block, ``kind`` the step's type,
  ``raw`` the step with its deltas' fields laid over it (``type`` kept). Built-in tool steps
  may come after the text step; they are blocks where they come. The client must not run
  them.

The terminal ``interaction.completed`` carries the status and usage but not the steps: the
reply is what the steps built. Its status ends the reply: ``completed`` (``end_turn``, or
``tool_use`` after a function call), ``requires_action`` (a reply that ends in function calls:
``tool_use``, a normal end), ``incomplete`` / ``budget_exceeded`` (``max_tokens``),
``failed`` (the provider's error, with its ``errors``), ``cancelled`` (a cancellation). The
native status is kept as the stop's native value. Usage is read as the ``gemini`` provider
reads ``usageMetadata`` (`usage_from_interactions`); a ``step.stop`` or ``status_update``
that carries a running ``usage`` is a snapshot too. ``error`` is the provider's in-band
error. EOF or ``[DONE]`` before ``interaction.completed`` is a truncation.

A ``store: false`` interaction streams empty ids (``"id": ""``): read as no id. A stream that
starts after ``interaction.created`` (resumed with ``last_event_id``) decodes, and the
terminal interaction fills in its id and model, but it is not the whole reply: at its end a
:class:`ProtocolError` says the start was not seen (to reassemble a resumed reply, decode the
first connection's bytes followed by the resumed ones).

The early-2026 schema decodes too: ``interaction.start``, ``content.start`` /
``content.delta`` / ``content.stop`` (the step under ``content``, text as a ``text``
content, a call as one ``function_call`` delta with ``name`` and an ``arguments`` object,
citations as ``text_annotation``) and ``interaction.complete``. A payload with neither
schema's ``event_type`` is a :class:`WireFormatError` that names the schema.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import (
    CancelledStreamError,
    IncompleteStreamError,
    ProtocolError,
    WireFormatError,
)
from ..events import (
    BlockStart,
    BlockStop,
    CitationDelta,
    Event,
    MessageStart,
    MessageStop,
    MetadataUpdate,
    Opaque,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ._checks import array, integer, mapping
from ._interactions_tables import (
    CALL_STEPS,
    EVENTS,
    FIELDS,
    LEGACY_EVENTS,
    STATUS_STOP,
    TEXT_STEPS,
    THOUGHT_STEPS,
    usage_from_interactions,
)
from .base import KindInPayload
from .http import in_band_error
from .sniffing import foreign_frame
from .sse import DEFAULT_MAX_FRAME

__all__ = ["GeminiInteractionsDecoder", "usage_from_interactions"]

_MEDIA = frozenset({"image", "audio", "video", "document"})
_SCHEMA = (
    "a Gemini Interactions event has an event_type (interaction.created, step.start, "
    "step.delta, step.stop, interaction.completed, error; or the early-2026 "
    "interaction.start, content.start, content.delta, content.stop, interaction.complete)"
)


class _Step:
    """One step of the interaction: its kind, its block once opened, an opaque step's raw."""

    __slots__ = ("block", "call", "kind", "raw")

    def __init__(self, kind: str, raw: dict[str, Any]) -> None:
        self.kind = kind  # "text" | "thinking" | "tool_call" | "opaque"
        self.block = -1  # (not opened yet)
        self.raw = raw  # the step as it stands (an opaque step's block is this)
        self.call: dict[str, Any] | None = None  # a legacy call's start, until its name comes


class GeminiInteractionsDecoder(KindInPayload):
    """The Gemini Interactions stream: typed SSE events of an interaction's steps."""

    provider = "gemini-interactions"

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__(max_frame)
        self._steps: dict[int, _Step] = {}
        self._next_block = 0
        self._had_start = False
        self._model: str | None = None
        self._id: str | None = None
        self._calls = False
        self._usage: Any = None
        self._meta: dict[str, Any] = {}

    # -- frames ----------------------------------------------------------------------------

    def _data(self, data: bytes, out: list[Event]) -> None:
        if data.strip() == b"[DONE]":
            raise self._fail(IncompleteStreamError(
                "[DONE] before interaction.completed", data), out, start=True)
        frame = self._parse(data)
        name = frame.get("event_type")
        action = EVENTS.get(name) or LEGACY_EVENTS.get(name)  # type: ignore[arg-type]
        if action is None:
            if not self.started:
                foreign = foreign_frame(data, self.provider)
                raise foreign or WireFormatError(
                    f"unknown Gemini Interactions event {name!r}: {_SCHEMA}"
                    if isinstance(name, str) else f"the frame has no event_type: {_SCHEMA}",
                    data)
            out.append(Opaque(str(name), frame))  # a newer event: kept, verbatim
            return
        getattr(self, "_on_" + action)(frame, data, out)

    def _begin(self, out: list[Event]) -> None:
        if not self.started:
            self._start(out, self._model, self._id)

    def _on_created(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        interaction = mapping(frame.get("interaction") or {}, "an interaction")
        self._had_start = True
        self._read_interaction(interaction)
        self._begin(out)
        self._metadata(interaction, out)

    def _on_status(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._begin(out)
        self._snapshot(frame.get("usage"), out)

    def _on_start(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._begin(out)
        number = integer(frame.get("index"), "a step's index")
        step = mapping(frame.get("step", frame.get("content")) or {}, "a step")
        kind = str(step.get("type"))
        if number in self._steps:
            self._close(self._steps.pop(number), out)
        if kind in THOUGHT_STEPS:
            state = self._steps[number] = _Step("thinking", step)
            self._open(state, out)
            for part in array(step.get("summary") or [], "a thought's summary"):
                self._thought(state, part, out)
            self._sign(state, step.get("signature"), out)
        elif kind in TEXT_STEPS:  # (its text block opens with its first text or citation)
            state = self._steps[number] = _Step("text", step)
            if kind == "text" and isinstance(step.get("text"), str) and step["text"]:
                self._text(state, step["text"], out)  # (legacy: text given whole)
            for part in array(step.get("content") or [], "a model output's content"):
                self._content(state, mapping(part, "a content"), out)
        elif kind in CALL_STEPS:
            state = self._steps[number] = _Step("tool_call", step)
            self._calls = True
            if isinstance(step.get("name"), str):
                self._open_call(state, step, out)
            else:  # (legacy: the name comes with the call's one delta)
                state.call = step
        else:
            self._steps[number] = _Step("opaque", dict(step))

    def _on_delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._begin(out)
        number = integer(frame.get("index"), "a step's index")
        delta = mapping(frame.get("delta") or {}, "a step's delta")
        kind = delta.get("type")
        state = self._steps.get(number)
        if state is None:  # a delta for a step never announced (a resumed tail): opens it
            implied = {"text": "model_output", "thought_summary": "thought",
                       "thought_signature": "thought", "arguments_delta": "function_call",
                       "text_annotation_delta": "model_output"}.get(str(kind), str(kind))
            self._on_start({"index": number, "step": {"type": implied}}, raw, out)
            state = self._steps[number]
        if state.kind == "opaque":
            state.raw.update({key: value for key, value in delta.items() if key != "type"})
        elif kind == "text" and state.kind == "text":
            self._text(state, delta.get("text"), out)
        elif kind in ("text_annotation_delta", "text_annotation") and state.kind == "text":
            self._cite(state, delta.get("annotations"), out)
        elif kind == "thought_summary" and state.kind == "thinking":
            self._thought(state, delta.get("content", delta), out)
        elif kind == "thought_signature":
            self._sign(state, delta.get("signature"), out)
        elif kind in ("arguments_delta", "function_call") and state.kind == "tool_call":
            self._arguments(state, delta, out)
        elif kind in _MEDIA or state.kind == "text":
            self._media(state, delta, out)
        else:
            out.append(Opaque("step.delta", frame))
        self._snapshot(mapping(frame.get("metadata") or {}, "metadata").get("total_usage"), out)

    def _on_stop(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._begin(out)
        number = integer(frame.get("index"), "a step's index")
        state = self._steps.pop(number, None)
        if state is not None:
            self._close(state, out)
        self._snapshot(frame.get("usage"), out)

    def _on_completed(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        interaction = mapping(frame.get("interaction") or {}, "an interaction")
        self._read_interaction(interaction)
        if not self.started:
            self._begin(out)
        elif not self._had_start and (self._model or self._id):  # (a resumed stream: the
            out.append(MessageStart(self.provider, self._model, self._id))  # id comes late)
        for number in sorted(self._steps):
            self._close(self._steps.pop(number), out)
        self._metadata(interaction, out)
        self._snapshot(interaction.get("usage"), out)
        status = interaction.get("status")
        if status == "failed":
            errors = interaction.get("errors") or [{}]
            first = errors[0] if isinstance(errors, list) and errors else {}
            words = first.get("message") if isinstance(first, dict) else None
            raise self._fail(in_band_error(
                str(words or "the interaction failed"), raw, first), out, start=True)
        if status == "cancelled":
            raise self._fail(CancelledStreamError("the interaction was cancelled", raw),
                             out, start=True)
        if not self._had_start:
            raise self._fail(ProtocolError(
                "the stream started after interaction.created (a resumed tail): not the "
                "whole reply", raw), out, start=True)
        reason = STATUS_STOP.get(str(status), "end_turn")
        if reason == "end_turn" and self._calls:
            reason = "tool_use"
        details = None if status in ("completed", "requires_action") else f"status {status!r}"
        self.finished = True
        out.append(MessageStop(reason, details, status))

    def _on_cancelled(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        self._begin(out)
        self._snapshot(frame.get("usage"), out)
        raise self._fail(CancelledStreamError("the interaction was cancelled", raw),
                         out, start=True)

    def _on_error(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        error = frame.get("error")
        message = "the provider reported an error"
        if isinstance(error, dict):
            words = [str(error[key]) for key in ("code", "message") if error.get(key)]
            message = ": ".join(words) or message
        raise self._fail(in_band_error(message, raw, error), out, start=True)

    def _eof(self, out: list[Event]) -> None:
        for number in sorted(self._steps):  # (what arrived is kept, an opaque step too)
            state = self._steps[number]
            if state.kind == "opaque" or state.call is not None:
                self._close(self._steps.pop(number), out)
        raise self._fail(IncompleteStreamError("the stream ended before interaction.completed"),
                         out, start=True)

    # -- pieces ----------------------------------------------------------------------------

    def _read_interaction(self, interaction: dict[str, Any]) -> None:
        model, id_ = interaction.get("model"), interaction.get("id")
        self._model = self._model or (model if isinstance(model, str) and model else None)
        self._id = self._id or (id_ if isinstance(id_, str) and id_ else None)

    def _metadata(self, interaction: dict[str, Any], out: list[Event]) -> None:
        changed = {key: value for key, value in interaction.items()
                   if key not in FIELDS and self._meta.get(key, ...) != value}
        if changed:
            self._meta.update(changed)
            out.append(MetadataUpdate(changed))

    def _snapshot(self, usage: Any, out: list[Event]) -> None:
        if usage and usage != self._usage:
            self._usage = mapping(usage, "usage")
            out.append(UsageUpdate(usage_from_interactions(self._usage)))

    def _open(self, state: _Step, out: list[Event], **fields: Any) -> int:
        index = state.block = self._next_block
        self._next_block += 1
        out.append(BlockStart(index, state.kind, **fields))  # type: ignore[arg-type]
        return index

    def _open_call(self, state: _Step, step: dict[str, Any], out: list[Event]) -> None:
        id_ = step.get("id")
        meta = {key: value for key, value in step.items()
                if key not in ("id", "name", "arguments", "type")}
        self._open(state, out, id=id_ if isinstance(id_, str) and id_ else None,
                   name=str(step.get("name")), meta={"step": meta} if meta else None)
        state.call = None
        arguments = step.get("arguments")
        if arguments:  # (a start that holds the whole call; the wire's start has ``{}``)
            out.append(ToolArgsDelta(state.block, orjson.dumps(arguments).decode()))
        self._sign(state, step.get("signature"), out)

    def _arguments(self, state: _Step, delta: dict[str, Any], out: list[Event]) -> None:
        if state.call is not None:  # legacy: the call's one delta names it
            self._open_call(state, {**state.call, **delta, "type": "function_call"}, out)
            return
        fragment = delta.get("arguments", delta.get("partial_arguments"))
        if isinstance(fragment, (dict, list)):
            fragment = orjson.dumps(fragment).decode()
        if isinstance(fragment, str) and fragment:
            out.append(ToolArgsDelta(state.block, fragment))

    def _thought(self, state: _Step, part: Any, out: list[Event]) -> None:
        text = part.get("text") if isinstance(part, dict) else None
        if isinstance(text, str) and text:
            out.append(ThinkingDelta(state.block, text))
        elif isinstance(part, dict) and part.get("type") not in (None, "text"):
            out.append(Opaque("thought_summary", part))  # (an image summary: kept, verbatim)

    def _sign(self, state: _Step, signature: Any, out: list[Event]) -> None:
        if isinstance(signature, str) and signature:
            if state.block < 0 and state.call is None:  # (kept: on the step's own block)
                self._open(state, out)
            if state.block >= 0:
                out.append(SignatureDelta(state.block, signature))

    def _text(self, state: _Step, text: Any, out: list[Event]) -> None:
        if isinstance(text, str) and text:
            if state.block < 0:
                self._open(state, out)
            out.append(TextDelta(state.block, text))

    def _cite(self, state: _Step, citations: Any, out: list[Event]) -> None:
        for citation in array(citations or [], "annotations"):
            if state.block < 0:
                self._open(state, out)
            out.append(CitationDelta(state.block, citation))

    def _content(self, state: _Step, part: dict[str, Any], out: list[Event]) -> None:
        if part.get("type") == "text":
            self._text(state, part.get("text"), out)
            self._cite(state, part.get("annotations"), out)
        else:
            self._media(state, part, out)

    def _media(self, state: _Step, part: dict[str, Any], out: list[Event]) -> None:
        if state.block >= 0:  # (text after it is a block of its own, in order)
            out.append(BlockStop(state.block))
            state.block = -1
        index = self._next_block
        self._next_block += 1
        out.append(BlockStart(index, "opaque", name=str(part.get("type")), raw=part))
        out.append(BlockStop(index))

    def _close(self, state: _Step, out: list[Event]) -> None:
        if state.call is not None:  # (a legacy call that never got its delta)
            self._open_call(state, {**state.call, "name": state.call.get("name") or ""}, out)
        if state.kind == "opaque":
            index = self._next_block
            self._next_block += 1
            kind = str(state.raw.get("type"))
            out.append(BlockStart(index, "opaque", name=kind, raw=state.raw))
            out.append(BlockStop(index))
        elif state.block >= 0:
            out.append(BlockStop(state.block))
