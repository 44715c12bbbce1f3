"""The encoder interface: events in, a target provider's stream bytes out. Sans-I/O.

An :class:`Encoder` is the mirror of a decoder: ``encode(events)`` gives the target's bytes
for those events as soon as they can go out, ``finish(error)`` the bytes that end the stream
(the target's terminal frames after a complete reply; after a cut source nothing that means
a finished reply: no terminal at all, or the target's own error frame for a provider error).
What the target has no place for is not written and is listed in ``dropped``, one
:class:`~llm_rx.events.Dropped` per thing lost, by the rules in :mod:`._tables`.

The base class keeps what every target needs to know about the reply so far (the blocks by
index, the usage snapshot, the stop, the message's metadata) and calls one ``_on_*`` method
per event; a target encoder overrides those it writes something for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import orjson

from ..errors import IncompleteStreamError, LlmRxError, ProviderError
from ..events import (
    BlockStart,
    BlockStop,
    ChoiceEnd,
    CitationDelta,
    Custom,
    Dropped,
    Event,
    LogprobsDelta,
    MessageStart,
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
from ..response import Usage
from ._approvals import Asking
from ._counts import counted

__all__ = ["Encoder", "ObjectArguments", "dumps", "raw_data", "sse", "sse_data"]

dumps = orjson.dumps

_TEXTUAL = frozenset({TextDelta, ThinkingDelta, RefusalDelta, ToolArgsDelta})
# Events that name their choice (the others name a block, or none)
_BY_CHOICE = frozenset({BlockStart, MetadataUpdate, ChoiceEnd, LogprobsDelta})
_BY_BLOCK = frozenset({TextDelta, ThinkingDelta, RefusalDelta, SignatureDelta, ToolArgsDelta,
                       CitationDelta, BlockStop})
_SENTINEL = "\x00llm-rx\x00"  # (a text no reply has, to find where a text goes in a frame)
_SENTINEL_JSON = dumps(_SENTINEL)


def sse(name: str, payload: Any) -> bytes:
    """One SSE event with an ``event:`` name (Anthropic, Responses)."""
    return b"event: " + name.encode() + b"\ndata: " + dumps(payload) + b"\n\n"


def sse_data(payload: Any) -> bytes:
    """One SSE event of a ``data:`` line only (OpenAI chat, Gemini)."""
    return b"data: " + dumps(payload) + b"\n\n"


def raw_data(raw: str, name: str | None = None) -> bytes:
    """A frame's text given back verbatim as one SSE event (each line a ``data:`` line)."""
    head = b"event: " + name.encode() + b"\n" if name else b""
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return head + b"".join(b"data: " + line.encode() + b"\n" for line in lines) + b"\n"


class ObjectArguments:
    """Argument fragments for a target whose tool input is a JSON object (Anthropic, Bedrock).

    Arguments that are an object go through as they are; others (a Responses custom tool's
    free text) are streamed as the string of ``{"_raw_arguments": "..."}``, escaped fragment
    by fragment: the first fragment tells which, so nothing waits, and the evidence is kept
    as ``to_native`` keeps it.
    """

    __slots__ = ("text",)

    def __init__(self) -> None:
        self.text: bool | None = None  # whether the arguments are free text (None: unknown)

    def fragment(self, fragment: str) -> str:
        if self.text is None:
            head = fragment.lstrip()
            if not head:
                return fragment
            self.text = not head.startswith("{")
            if self.text:
                return '{"_raw_arguments":"' + dumps(fragment).decode()[1:-1]
        return dumps(fragment).decode()[1:-1] if self.text else fragment

    def end(self) -> str:
        """What closes the arguments (the free text's string and object)."""
        return '"}' if self.text else ""


class Encoder:
    """Incremental encoding of one reply's events into ``provider``'s stream bytes."""

    provider = ""
    #: whether the target's stream carries several choices (``n>1``); a target that carries
    #: one writes choice 0 and reports each block of another choice as `Dropped`
    choices = False
    #: whether the target writes approval requests (``_on_approval``, the request whole);
    #: any other reports each `Dropped` (``approval_request``)
    approvals = False
    #: whether the target's stream carries several responses (else each next is `Dropped`)
    several = False

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        #: what was not written, in order (the caller's own list, when it passed one)
        self.dropped: list[Dropped] = [] if dropped is None else dropped
        self.source: str | None = None  # the provider the events were decoded from
        self.model: str | None = None
        self.id: str | None = None
        self.blocks: dict[int, BlockStart] = {}
        self.metadata: dict[str, Any] = {}
        self.usage: Usage | None = None
        self.stop: MessageStop | None = None
        self.ends: dict[int, ChoiceEnd] = {}
        #: block index -> (delta class, the frame's bytes around each place of its text's
        #: JSON string, what wraps the frame, where the texts go)
        self._templates: dict[int, tuple[type[Any], tuple[bytes, ...],
                                         Callable[[bytes], bytes] | None,
                                         list[str] | None]] = {}
        self._untemplated: set[int] = set()
        self._asking = Asking()  # the open approval requests
        self.holding = False  # whether a frame waits for the next event (no template then)
        self._elsewhere = False  # whether an event of another choice than 0 arrived
        self._left_out: set[int] = set()  # blocks of another choice (a one-choice target)
        self.started = False  # whether MessageStart arrived
        self.finished = False  # whether finish() ran (nothing is written after it)
        self._handlers: dict[type[Any], Callable[[Any, list[bytes]], None]] = {
            MessageStart: self._message_start,
            MetadataUpdate: self._metadata,
            BlockStart: self._block_start,
            TextDelta: self._on_text,
            ThinkingDelta: self._on_thinking,
            RefusalDelta: self._on_refusal,
            SignatureDelta: self._on_signature,
            ToolArgsDelta: self._args_delta,
            CitationDelta: self._on_citation,
            LogprobsDelta: self._on_logprobs,
            BlockStop: self._block_stop,
            UsageUpdate: self._usage,
            ChoiceEnd: self._choice_end,
            MessageStop: self._message_stop,
            Opaque: self._on_opaque,
            Dropped: self._passed_drop,
            Custom: self._on_custom,
        }

    @property
    def same(self) -> bool:
        """Whether the events came from this target's own stream (then its spellings,
        native usage and stop values are given back verbatim)."""
        return self.source == self.provider

    # -- the interface -------------------------------------------------------------------

    def encode(self, events: list[Event]) -> bytes:
        """The target's bytes for ``events`` (possibly none yet: see the wait table)."""
        out: list[bytes] = []
        if self.finished:
            return self._after_end(events)
        handlers = self._handlers
        templates = self._templates
        append = out.append
        one = not self.choices
        for position, event in enumerate(events):
            cls = event.__class__
            if self.finished or (cls is MessageStart and self._another(event)):
                append(self._after_end(events[position:]))  # (another response's events)
                break
            if one and (self._elsewhere or cls in _BY_CHOICE) and self._other_choice(event):
                continue
            if self.holding:
                self._while_holding(event, out)
            elif cls in _TEXTUAL:
                index, text = cast("tuple[int, str]", event)  # (a text delta's fields)
                template = templates.get(index)
                if template is not None and template[0] is cls:  # the usual delta
                    data = dumps(text).join(template[1])  # (the text where it goes)
                    cls, _, wrap, texts = template
                    append(data if wrap is None else wrap(data))
                    if texts is not None:
                        texts.append(text)
                    continue
            handlers[cls](event, out)
        return b"".join(out)

    def learn(self, index: int, cls: type[Any], frame: Callable[[str], bytes],
              wrap: Callable[[bytes], bytes] | None = None,
              texts: list[str] | None = None) -> None:
        """Remember how a ``cls`` delta of block ``index`` is written: ``frame(text)`` is its
        frame, all of whose bytes but the text's JSON string (in one place or more) stay the
        same while nothing else changes (the metadata it carries); ``wrap`` frames it (an
        event-stream message); ``texts`` gets each text (a target that repeats the whole
        text at the block's end).
        The next such deltas are then written with no other work."""
        if index in self._untemplated:
            return
        parts = tuple(frame(_SENTINEL).split(_SENTINEL_JSON))
        if len(parts) > 1:
            self._templates[index] = (cls, parts, wrap, texts)
        else:  # (a frame that does not carry the text as a string of its own)
            self._untemplated.add(index)

    def forget(self) -> None:
        """What the templates were learnt on changed: learn them again."""
        self._templates.clear()

    def finish(self, error: LlmRxError | None = None) -> bytes:
        """The bytes that end the stream: after a complete reply its terminal frames (those
        not written yet); for a provider error the target's error frame; for a cut or
        otherwise failed source nothing that reads as a finished reply."""
        if self.finished:
            return b""
        self.finished = True
        out: list[bytes] = []
        if error is None and self.stop is None:
            error = IncompleteStreamError("the events ended before the reply's end")
        if error is None:
            return b""
        if isinstance(error, ProviderError):
            self._on_error(error, out)
        else:
            self._on_cut(error, out)
        return b"".join(out)

    # -- bookkeeping (then the target's hook) ---------------------------------------------

    def _message_start(self, event: MessageStart, out: list[bytes]) -> None:
        if self.started:  # (a repeated start: the target's opening was written once; its
            self.model = event.model or self.model  # model writes the frames from here on)
            return
        self.started = True
        self.source, self.model, self.id = event.provider, event.model, event.id
        self._on_start(event, out)

    def _metadata(self, event: MetadataUpdate, out: list[bytes]) -> None:
        self.forget()  # (the frames carry the metadata)
        if event.choice is None:
            self.metadata.update(event.fields)
        self._on_metadata(event, out)

    def _block_start(self, event: BlockStart, out: list[bytes]) -> None:
        self.blocks[event.index] = event
        if event.kind == "approval_request":
            self._asking.open(self, event)
            return
        self._on_block_start(event, out)

    def _args_delta(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        if not (self._asking and self._asking.add(event)):
            self._on_args(event, out)

    def _block_stop(self, event: BlockStop, out: list[bytes]) -> None:
        self._templates.pop(event.index, None)
        if event.index in self._asking:
            self._asking.end(self, event.index, out)
        elif event.index in self.blocks:
            self._on_block_stop(self.blocks[event.index], out)

    def _usage(self, event: UsageUpdate, out: list[bytes]) -> None:
        usage = counted(event.usage)
        self.usage = usage if self.usage is None else self.usage.overlay(usage)
        self._on_usage(usage, out)

    def _choice_end(self, event: ChoiceEnd, out: list[bytes]) -> None:
        self.ends[event.choice] = event
        self._on_choice_end(event, out)

    def _message_stop(self, event: MessageStop, out: list[bytes]) -> None:
        if self.stop is not None:
            return
        self.stop = event
        for index in list(self._asking):  # (a request its source left open)
            self._asking.end(self, index, out)
        self._on_stop(event, out)
        self.finished = True

    def _another(self, event: Any) -> bool:
        """Whether a start opens another response now (as ``responses()`` splits them)."""
        return bool(self.started and self.id and event.id and (event.id != self.id or self.blocks))

    def _after_end(self, events: list[Event]) -> bytes:
        """The responses after this one (which, if open, ends here cut, never merged): a
        target that carries `several` writes each afresh; any other reports each `Dropped`
        (``"response"``, its id as ``raw``)."""
        out = [] if self.finished else [self.finish(IncompleteStreamError(
            "another response started before this one's end"))]
        for position, event in enumerate(events):
            if event.__class__ is not MessageStart:
                continue
            if self.several:
                type(self).__init__(self, self.dropped)  # (the next response, afresh)
                out.append(self.encode(events[position:]))
                break
            self.drop("response", None, "another response on the same stream: one is "
                      "written (split them with responses())", event.id)
        return b"".join(out)

    def _other_choice(self, event: Event) -> bool:
        """Whether ``event`` belongs to another choice than 0 (for a one-choice target: it is
        left out; each block of it is reported once, as `Dropped` ``"choice"``)."""
        cls = event.__class__
        if cls in _BY_BLOCK:
            return cast("tuple[int, Any]", event)[0] in self._left_out
        if cls not in _BY_CHOICE:
            return False
        choice = cast("BlockStart | MetadataUpdate | ChoiceEnd | LogprobsDelta", event).choice
        if choice is None or choice == 0:
            return False
        self._elsewhere = True
        if cls is BlockStart:
            start = cast("BlockStart", event)
            self._left_out.add(start.index)
            self.drop("choice", start.index,
                      f"{self.provider} carries one choice: choice {choice} is left out "
                      "(choice 0 is the reply)", {"choice": choice, "kind": start.kind})
        return True

    def _passed_drop(self, event: Dropped, out: list[bytes]) -> None:
        self.dropped.append(event)  # (dropped upstream: nothing to write, still reported)

    def drop(self, what: str, index: int | None, reason: str, raw: Any = None) -> None:
        """Record that ``what`` (of block ``index``) was not written, and why."""
        self.dropped.append(Dropped(what, index, reason, raw))

    def kind(self, index: int) -> str | None:
        start = self.blocks.get(index)
        return start.kind if start is not None else None

    # -- the target's hooks (each writes to ``out``) ---------------------------------------

    def _while_holding(self, event: Event, out: list[bytes]) -> None:
        """The next event arrived while a frame waits for it (``holding``)."""

    def _on_start(self, event: MessageStart, out: list[bytes]) -> None: ...
    def _on_metadata(self, event: MetadataUpdate, out: list[bytes]) -> None: ...
    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None: ...
    def _on_text(self, event: TextDelta, out: list[bytes]) -> None: ...
    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None: ...
    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None: ...
    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None: ...
    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None: ...
    def _on_approval(self, start: BlockStart, arguments: Any, out: list[bytes]) -> None: ...
    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None: ...
    def _on_usage(self, usage: Usage, out: list[bytes]) -> None: ...
    def _on_choice_end(self, event: ChoiceEnd, out: list[bytes]) -> None: ...
    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None: ...
    def _on_error(self, error: ProviderError, out: list[bytes]) -> None: ...
    def _on_cut(self, error: LlmRxError, out: list[bytes]) -> None: ...

    def _on_citation(self, event: CitationDelta, out: list[bytes]) -> None:
        self.drop("citation", event.index, f"{self.provider} has no place for citations",
                  event.citation)

    def _on_logprobs(self, event: LogprobsDelta, out: list[bytes]) -> None:
        self.drop("logprobs", None, f"{self.provider} has no place for log-probabilities",
                  list(event.items))

    def _on_opaque(self, event: Opaque, out: list[bytes]) -> None:
        self.drop(f"opaque:{event.kind}", None,
                  f"a frame of {self.source} that {self.provider} cannot carry", event.raw)

    def _on_custom(self, event: Custom, out: list[bytes]) -> None:
        self.drop(f"custom:{event.name}", None,
                  f"{self.provider} has no place for an application's events", event.data)
