"""OpenAI Chat Completions with shortcuts: a plain decoder that learns from the chunks it read.

A plain chunk (one choice, whose delta is one text string or one argument fragment of a known
call, no finish reason, no usage) is noted when the plain decoder has decoded it
(``_declare``), and learnt as the next frame arrives:
as its :class:`Layout` (its keys and the metadata values that must stay the same; the delta
varies) and as a byte template (:mod:`.templates`: its bytes around the delta string, to
``TextDelta`` or ``ToolArgsDelta``). A later chunk with the same bytes but for that string is
read by parsing the string alone, a run of them at C level (:mod:`.batches`): a chunk's
last key ``"obfuscation"`` (random padding the general path drops, ``NEVER_KEPT``) is the
template's skipped string, which may vary too (:class:`~.templates.ByteTemplate`); one of the same
layout with a handful of lookups; anything else is handed to the plain decoder, which gives
the same events. Before it takes a frame, ``_general_path()`` brings the state the shortcuts
skipped up to date and drops what they learnt.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from ..events import Event, TextDelta, ToolArgsDelta
from ..wire._boundary import new_event
from ..wire._chat_tables import CHUNK_FIELDS, Choice
from ..wire.openai_chat import OpenAIChatDecoder
from ..wire.sse import SSEEvent
from .batches import TemplateFrames

__all__ = ["Layout", "OpenAIChatShortcuts"]

_loads = orjson.loads

# Fields a chunk of the same layout may change without changing what it decodes to: the ones
# the general path reads only once (id, model, ...), padding, and per-token values.
_LAYOUT_IGNORES = CHUNK_FIELDS - {"usage"} | {"choices"}
_CHOICE_LAYOUT_IGNORES = frozenset({"delta", "token_ids", "text"})
# The chunk's key of random padding (letters and digits) the general path drops: a template
# skips its value.
_SKIP = b'"obfuscation":"'


class Layout(NamedTuple):
    """The shape of the last plain chunk (one choice, one text delta or argument fragment):
    a chunk of the same shape, whose metadata values are the same, decodes without the
    general path."""

    keys: tuple[str, ...]
    extras: tuple[tuple[str, Any], ...]  # metadata fields and their values
    choice_keys: tuple[str, ...]
    choice_extras: tuple[tuple[str, Any], ...]  # the choice's index and metadata fields
    choice: Choice


class OpenAIChatShortcuts(TemplateFrames, OpenAIChatDecoder):
    """The hot path over :class:`~llm_rx.wire.openai_chat.OpenAIChatDecoder`: a frame it
    does not recognise goes to the decoder's own ``_data`` / ``_chunk``."""

    _layout: Layout | None = None  # the last plain chunk's layout
    _to_learn: tuple[dict[str, Any], Any, bytes] | None = None  # declared, learnt next frame

    def _chunk(self, chunk: Any, data: bytes, name: str, out: list[Event]) -> None:
        self._general_path()
        super()._chunk(chunk, data, name, out)

    def _declare(self, chunk: dict[str, Any], raw: Any, data: bytes) -> None:
        """The plain decoder decoded ``chunk``, of one choice ``raw``: a plain one is learnt
        when the next frame arrives, not now (this frame's events go out first)."""
        delta = raw.get("delta") if raw.__class__ is dict else None
        if delta.__class__ is dict and len(delta) == 1:  # (see ``_learn_layout``)
            self._to_learn = (chunk, raw, data)

    def _general_path(self) -> None:
        """A chunk takes the general path: bring the state the shortcuts skipped up to date,
        and drop what they learnt (the chunk may change what a layout stands for)."""
        if self._template_hit is not None:
            self._after_shortcuts()
        self._layout = None
        self._forget()
        self._to_learn = None

    def _data(self, frame: bytes, out: list[Event]) -> None:
        """The hot path. A chunk shaped like the last plain one (see :class:`Layout`), with
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
        if not self._hit(chunk, frame, out):
            self._chunk(chunk, frame, "message", out)  # (the plain decoder's, parsed once)
            choices = chunk.get("choices") if chunk.__class__ is dict else None
            if choices.__class__ is list and len(choices) == 1 and not self.finished:
                self._declare(chunk, choices[0], frame)

    def _hit(self, chunk: Any, frame: bytes, out: list[Event]) -> bool:
        """Decode ``chunk`` if it is shaped like the last plain one (see :class:`Layout`),
        with the same metadata values: whether it was."""
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
                                return True
                            return self._fast_tool_fragment(layout.choice, delta, frame, out)
        return False

    def _fast_tool_fragment(
        self, choice: Choice, delta: dict[str, Any], data: bytes, out: list[Event]
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
                        False, _SKIP)
        return True

    def _after_shortcuts(self) -> None:
        """Bring the state the shortcuts skipped up to date: the call the last fragment went
        to is the call an index-less, id-less fragment continues."""
        hit = self._template_hit
        self._template_hit = None
        if hit is not None and hit.event_type is ToolArgsDelta:
            choice = self._tool_choice.get(hit.block)  # (not a scan of every call: O(1))
            if choice is not None:
                choice.last_tool = hit.block

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
        self._layout = Layout(
            tuple(chunk),
            tuple((k, v) for k, v in chunk.items() if k not in _LAYOUT_IGNORES),
            tuple(raw),
            tuple((k, v) for k, v in raw.items() if k not in _CHOICE_LAYOUT_IGNORES),
            choice,
        )
        content = delta.get("content")
        if content.__class__ is str and choice.text is not None:
            self._learn(data, b'"delta":{"content":"', content, TextDelta, choice.text, False,
                        _SKIP)
