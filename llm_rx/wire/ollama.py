"""Ollama native streams: NDJSON from ``/api/chat`` and ``/api/generate``.

Each line is one JSON object. ``/api/chat`` lines carry ``message.content``,
``message.thinking`` and whole ``message.tool_calls`` (each call arrives complete, its
``arguments`` an object: every call is its own block, never concatenated with another, its
``raw_arguments`` the compact JSON of the object in its key order); ``/api/generate`` lines
carry ``response`` and ``thinking`` at the top level. Text and thinking alternate in blocks in
arrival order (think -> text -> think is three blocks).

The terminal frame is the ``done: true`` line: it carries ``done_reason`` (``stop``,
``length``, ``load``, ``unload``), the counts (``prompt_eval_count`` -> input,
``eval_count`` -> output) and the timings, kept as metadata with the other fields the
non-streamed body has (``created_at``, ``context``, ...). EOF without it is a truncation. The
served ``model`` of the first line is the reply's model. An ``{"error": ...}`` line is a
:class:`ProviderError`. A body whose first line is no chat or generate line (``/api/pull``
progress, ``{"status": ...}``) is not an Ollama reply: :class:`WireFormatError`.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import (
    IncompleteStreamError,
    ProviderError,
    WireFormatError,
)
from ..events import (
    BlockKind,
    BlockStart,
    BlockStop,
    ChoiceEnd,
    Event,
    LogprobsDelta,
    MessageStop,
    MetadataUpdate,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from ..response import StopReason, Usage
from ._boundary import count_of, new_event
from ._checks import MAX_DEPTH, SHALLOW, maybe_too_deep, optional_string, too_deep
from .ndjson import NDJSONPayloadDecoder
from .sse import DEFAULT_MAX_FRAME

__all__ = ["OllamaDecoder", "usage_from_ollama"]

_loads = orjson.loads

_DONE: dict[str, StopReason] = {"stop": "end_turn", "length": "max_tokens"}
# Line fields read as content, usage or end of stream; the others of the first and the done
# line are the reply's metadata (``created_at``, timings, ``context``, host extras).
_READ = frozenset(
    {"model", "message", "response", "thinking", "done", "done_reason", "prompt_eval_count",
     "eval_count", "logprobs", "error"}
)
# The keys of a usual line: nothing on it but the reply's model, a time and a delta.
_USUAL = frozenset({"model", "created_at", "message", "done"})
_MESSAGE_READ = frozenset({"role", "content", "thinking", "tool_calls"})
_USAGE_FIELDS = ("prompt_eval_count", "eval_count")
_NONE = object()



def usage_from_ollama(line: dict[str, Any]) -> Usage | None:
    """Canonical usage from a ``done`` line's counts; ``None`` if it has none."""
    native = {key: line[key] for key in _USAGE_FIELDS if key in line}
    if not native:
        return None
    return Usage(
        input_tokens=count_of(native.get("prompt_eval_count")),
        output_tokens=count_of(native.get("eval_count")),
        native=native,
    )


class OllamaDecoder(NDJSONPayloadDecoder):
    """Ollama's `/api/chat` and `/api/generate`: NDJSON, one object per line."""

    provider = "ollama"

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__(max_frame)
        self._next_block = 0
        self._open: int | None = None  # the text or thinking block taking deltas
        self._open_kind: BlockKind | None = None
        self._had_tools = False
        self._generate = False  # /api/generate (``response``) rather than /api/chat
        self._seen: dict[str, Any] = {}  # metadata fields given so far

    def _line(self, line: bytes, out: list[Event]) -> None:
        try:
            frame = _loads(line)
        except orjson.JSONDecodeError:
            frame = None
        if frame.__class__ is not dict:
            frame = self._parse(line)  # (says what is wrong with it)
        elif self.started and frame.keys() == _USUAL and frame["done"] is False:
            # The usual line: model, created_at, and a message of role and content.
            message = frame.get("message")
            if message.__class__ is dict and len(message) == 2 and "role" in message:
                content = message.get("content")
                if content.__class__ is str:
                    index = self._open
                    if not content:
                        return
                    if index is not None and self._open_kind == "text":
                        out.append(new_event(TextDelta, (index, content)))
                        return
        if len(line) > SHALLOW and maybe_too_deep(line) and too_deep(self._kept(frame)):
            raise WireFormatError(f"a frame is nested deeper than {MAX_DEPTH} levels", line)
        if not self.started:
            self._first(frame, line, out)
        message = frame.get("message")
        if message is not None:
            if message.__class__ is dict:
                content = message.get("content")
                if content.__class__ is str and len(message) == 2 and "role" in message:
                    if content:  # role and content only: the usual line
                        self._text(content, "text", out)
                else:
                    self._message(message, out)
        else:
            thinking = frame.get("thinking")
            if thinking and isinstance(thinking, str):
                self._text(thinking, "thinking", out)
            response = frame.get("response")
            if response and isinstance(response, str):
                self._text(response, "text", out)
        # The usual line is model, created_at, message (or response) and done: false.
        if frame.keys() != _USUAL or frame["done"] is not False:
            self._extras(frame, line, out)

    def _kept(self, frame: dict[str, Any]) -> dict[str, Any]:
        """The fields of a line a reply may keep whole (the usual line's shortcut skips the
        others unread, and so does the general path): what the nesting limit applies to."""
        kept = {key: value for key, value in frame.items() if key != "model"}
        if self.started and frame.get("done") is not True:  # (a middle line's is not kept)
            kept.pop("created_at", None)
        message = kept.get("message")
        if message.__class__ is dict and "role" in message:
            kept["message"] = {key: value for key, value in message.items() if key != "role"}
        return kept

    def _first(self, frame: dict[str, Any], line: bytes, out: list[Event]) -> None:
        if "message" not in frame and "response" not in frame and "done" not in frame:
            if "error" in frame:
                return  # read with the other fields, as a provider error
            what = " (it looks like /api/pull progress)" if "status" in frame else ""
            raise WireFormatError(
                f"the body is not an Ollama /api/chat or /api/generate stream{what}", line
            )
        self._generate = "message" not in frame
        self._start(out, frame.get("model"))
        first = {key: value for key, value in frame.items() if key not in _READ}
        if first:
            self._seen.update(first)
            out.append(MetadataUpdate(first))

    def _extras(self, frame: dict[str, Any], line: bytes, out: list[Event]) -> None:
        error = frame.get("error")
        if error:
            message = error if isinstance(error, str) else str(
                error.get("message") if isinstance(error, dict) else error
            )
            raise self._fail(ProviderError(message, line), out, start=True)
        logprobs = frame.get("logprobs")
        if logprobs and isinstance(logprobs, list):
            out.append(LogprobsDelta(0, "content", tuple(logprobs)))
        if frame.get("done") is True:
            self._done(frame, out)
            return
        changed = {  # fields nobody reads, on a line in the middle: kept when they change
            key: value for key, value in frame.items()
            if key not in _READ and key != "created_at" and self._seen.get(key, _NONE) != value
        }
        if changed:
            self._seen.update(changed)
            out.append(MetadataUpdate(changed))

    def _message(self, message: dict[str, Any], out: list[Event]) -> None:
        thinking = message.get("thinking")
        if thinking and isinstance(thinking, str):
            self._text(thinking, "thinking", out)
        content = message.get("content")
        if content and isinstance(content, str):
            self._text(content, "text", out)
        calls = message.get("tool_calls")
        if calls and isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    self._tool_call(call, out)
        if not message.keys() <= _MESSAGE_READ:
            extra = {key: value for key, value in message.items() if key not in _MESSAGE_READ}
            out.append(MetadataUpdate(extra, 0))

    def _text(self, text: str, kind: BlockKind, out: list[Event]) -> None:
        index = self._open
        if index is None or self._open_kind != kind:
            index = self._block(kind, out)
        if kind == "text":
            out.append(new_event(TextDelta, (index, text)))
        else:
            out.append(ThinkingDelta(index, text))

    def _block(
        self, kind: BlockKind, out: list[Event], meta: dict[str, Any] | None = None, **fields: Any
    ) -> int:
        """Open a block of ``kind``, closing the text or thinking block open before it."""
        self._close(out)
        index = self._next_block
        self._next_block += 1
        if self._generate and kind != "tool_call":
            meta = {"endpoint": "generate"}  # so to_native gives the /api/generate body back
        out.append(BlockStart(index, kind, meta=meta, **fields))
        if kind != "tool_call":
            self._open, self._open_kind = index, kind
        return index

    def _close(self, out: list[Event]) -> None:
        if self._open is not None:
            out.append(BlockStop(self._open))
            self._open = self._open_kind = None

    def _tool_call(self, call: dict[str, Any], out: list[Event]) -> None:
        self._had_tools = True
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        meta = {f"call.{key}": value for key, value in call.items()
                if key not in ("id", "function")}
        meta.update(
            {f"function.{key}": value for key, value in function.items()
             if key not in ("name", "arguments")}
        )
        index = self._block(
            "tool_call", out, id=optional_string(call.get("id"), "a tool call's id"),
            name=optional_string(function.get("name"), "a tool call's name"), meta=meta or None
        )
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            if arguments:
                out.append(ToolArgsDelta(index, arguments))
        elif arguments is not None:
            out.append(ToolArgsDelta(index, orjson.dumps(arguments).decode()))
        out.append(BlockStop(index))

    def _done(self, frame: dict[str, Any], out: list[Event]) -> None:
        self._close(out)
        extra = {key: value for key, value in frame.items() if key not in _READ}
        if extra:
            out.append(MetadataUpdate(extra))
        usage = usage_from_ollama(frame)
        if usage is not None:
            out.append(UsageUpdate(usage))
        native = frame.get("done_reason")
        if isinstance(native, str) and native:
            reason = _DONE.get(native, "end_turn")
            if reason == "end_turn" and self._had_tools:
                reason = "tool_use"
            details = None if native in _DONE else native
        else:
            native = None
            reason = "tool_use" if self._had_tools else "end_turn"
            details = "inferred: done without a done_reason"
        out.append(ChoiceEnd(0, reason, native))
        self.finished = True
        out.append(MessageStop(reason, details, native))

    def _eof(self, out: list[Event]) -> None:
        raise IncompleteStreamError("the stream ended before the done line")
