"""Folding events into a :class:`~llm_rx.response.Response`. Pure: no Rx, no I/O.

``ResponseBuilder.feed(event)`` for each event, then ``build(error)`` once; ``snapshot()`` at
any point gives an immutable :class:`Snapshot` of the reply so far, in O(blocks): fragments
live in append-only lists, a snapshot records how many there were, and the text is joined
only when the snapshot's ``response`` is asked for. Merge semantics, per
field: text, thinking, refusal and argument fragments are appended (to lists, joined once);
a signature is *assigned* (the provider sends it whole); usage snapshots *overlay* (cumulative,
never summed); metadata overlays by key; the served model from ``MessageStart`` is kept.

A tool call's ``arguments`` are parsed only once its block has ended: a parseable prefix of
a cut-off call is not a finished call (its ``arguments`` stay ``None``, ``raw_arguments`` keeps
what arrived). Arguments that never parse are kept raw with ``arguments: None``, never ``{}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import orjson

from .errors import IncompleteStreamError, LlmRxError
from .events import (
    BlockStart,
    BlockStop,
    ChoiceEnd,
    CitationDelta,
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
from .response import (
    Block,
    Choice,
    ErrorInfo,
    OpaqueBlock,
    RefusalBlock,
    Response,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)

__all__ = ["ResponseBuilder", "Snapshot"]


class _Acc:
    """A block being assembled: fragments appended to a list, joined once when read."""

    __slots__ = ("citations", "closed", "parts", "signature", "start")

    def __init__(self, start: BlockStart) -> None:
        self.start = start
        self.parts: list[str] = []
        self.signature: str | None = None
        self.citations: list[Any] = []
        self.closed = False

    def view(self) -> _View:
        return _View(self, len(self.parts), self.signature, len(self.citations), self.closed)


class _View(NamedTuple):
    """A block as it was at one moment (its lists only ever grow, so counts suffice)."""

    acc: _Acc
    parts: int
    signature: str | None
    citations: int
    closed: bool

    def block(self) -> Block:
        acc = self.acc
        start = acc.start
        kind = start.kind
        meta = dict(start.meta) if start.meta else None
        parts = acc.parts
        text = "".join(parts if self.parts == len(parts) else parts[: self.parts])
        signature = self.signature
        if kind == "text":
            return TextBlock(text=text, signature=signature,
                             citations=acc.citations[: self.citations], meta=meta)
        if kind == "thinking":
            return ThinkingBlock(text=text, signature=signature, meta=meta)
        if kind == "redacted_thinking":
            return ThinkingBlock(text=text, signature=signature, redacted=True, meta=meta)
        if kind == "tool_call":
            arguments: Any = None
            if not text:
                arguments = {} if self.closed else None
            elif self.closed:
                try:
                    arguments = orjson.loads(text)
                except orjson.JSONDecodeError:
                    arguments = None
            return ToolCallBlock(id=start.id, name=start.name, arguments=arguments,
                                 raw_arguments=text, signature=signature, meta=meta)
        if kind == "refusal":
            return RefusalBlock(text=text, meta=meta)
        return OpaqueBlock(kind=start.name or "opaque", raw=start.raw, meta=meta)


class _State(NamedTuple):
    """What a snapshot holds: values never mutated afterwards, and views of the blocks."""

    provider: str | None
    model: str | None
    id: str | None
    usage: Usage
    stop: MessageStop | None
    views: tuple[_View, ...]
    opaques: tuple[tuple[int, _Acc], ...]
    choice_ends: dict[int, ChoiceEnd]
    choice_extra: dict[int, dict[str, Any]]
    first: int
    extra: dict[str, Any]
    logprobs: tuple[tuple[tuple[int, str], list[Any], int], ...]


class Snapshot:
    """An immutable view of a reply as far as it arrived.

    Cheap to take (no text is joined); ``response`` materialises it as a
    :class:`~llm_rx.response.Response` once, on first access. A snapshot taken before the
    reply ended has ``complete: False``, ``stop_reason: None`` and no ``error``: in progress.
    """

    __slots__ = ("_final", "_response", "_state", "error")

    def __init__(self, state: _State, error: LlmRxError | None, final: bool) -> None:
        self._state = state
        self.error = error
        self._final = final
        self._response: Response | None = None

    @property
    def response(self) -> Response:
        if self._response is None:
            self._response = _materialise(self._state, self.error, self._final)
        return self._response

    @property
    def text(self) -> str:
        """The answer's text so far (first choice), without building the whole response."""
        state = self._state
        return "".join(
            "".join(view.acc.parts[: view.parts])
            for view in sorted(state.views, key=_view_index)
            if view.acc.start.kind == "text" and view.acc.start.choice == state.first
        )

    def __repr__(self) -> str:
        return f"Snapshot({self.response!r})"


def _view_index(view: _View) -> int:
    return int(view.acc.start.index)


class ResponseBuilder:
    """Accumulates events; ``build()`` gives the ``Response`` (any number of times)."""

    def __init__(self, provider: str | None = None) -> None:
        self.provider = provider
        self.started = False
        self.model: str | None = None
        self.id: str | None = None
        self.usage = Usage()
        # Dicts below are replaced, never mutated, so snapshots may share them.
        self.extra: dict[str, Any] = {}
        self.stop: MessageStop | None = None
        self._blocks: dict[int, _Acc] = {}
        self._choice_ends: dict[int, ChoiceEnd] = {}
        self._choice_extra: dict[int, dict[str, Any]] = {}
        self._logprobs: dict[tuple[int, str], list[Any]] = {}
        self._opaques: list[tuple[int, _Acc]] = []  # (index of the block before it, block)
        self._last_index = -1
        self._handlers: dict[type[Any], Callable[[Any], None]] = {
            TextDelta: self._text,
            ThinkingDelta: self._text,
            RefusalDelta: self._text,
            ToolArgsDelta: self._args,
            BlockStart: self._block_start,
            BlockStop: self._block_stop,
            SignatureDelta: self._signature,
            CitationDelta: self._citation,
            LogprobsDelta: self._logprobs_delta,
            UsageUpdate: self._usage,
            MetadataUpdate: self._metadata,
            ChoiceEnd: self._choice_end,
            MessageStart: self._message_start,
            MessageStop: self._message_stop,
            Opaque: self._opaque,
        }

    def feed(self, event: Event) -> None:
        self._handlers[type(event)](event)

    # -- handlers --------------------------------------------------------------------------

    def _acc(self, index: int, kind: Any) -> _Acc:
        acc = self._blocks.get(index)
        if acc is None:  # lenient: a delta with no BlockStart opens its block
            acc = self._blocks[index] = _Acc(BlockStart(index, kind))
        return acc

    def _text(self, event: TextDelta | ThinkingDelta | RefusalDelta) -> None:
        acc = self._blocks.get(event.index)
        if acc is None:
            kind = {TextDelta: "text", ThinkingDelta: "thinking"}.get(type(event), "refusal")
            acc = self._acc(event.index, kind)
        acc.parts.append(event.text)

    def _args(self, event: ToolArgsDelta) -> None:
        self._acc(event.index, "tool_call").parts.append(event.fragment)

    def _block_start(self, event: BlockStart) -> None:
        self._blocks[event.index] = _Acc(event)
        if event.index > self._last_index:
            self._last_index = event.index

    def _block_stop(self, event: BlockStop) -> None:
        acc = self._blocks.get(event.index)
        if acc is not None:
            acc.closed = True

    def _signature(self, event: SignatureDelta) -> None:
        self._acc(event.index, "thinking").signature = event.signature

    def _citation(self, event: CitationDelta) -> None:
        self._acc(event.index, "text").citations.append(event.citation)

    def _usage(self, event: UsageUpdate) -> None:
        self.usage = self.usage.overlay(event.usage)

    def _metadata(self, event: MetadataUpdate) -> None:
        """Overlay by key; a mapping value overlays the earlier mapping one level deep."""
        if event.choice is None:
            self.extra = _overlay(self.extra, event.fields)
        else:
            self._choice_extra = {
                **self._choice_extra,
                event.choice: _overlay(self._choice_extra.get(event.choice, {}), event.fields),
            }

    def _logprobs_delta(self, event: LogprobsDelta) -> None:
        self._logprobs.setdefault((event.choice, event.channel), []).extend(event.items)

    def _choice_end(self, event: ChoiceEnd) -> None:
        self._choice_ends = {**self._choice_ends, event.choice: event}

    def _message_start(self, event: MessageStart) -> None:
        if not self.started:
            self.started = True
            self.provider = self.provider or event.provider
            self.model = event.model
            self.id = event.id
        else:  # a later start may only fill in what the first one lacked
            self.model = self.model or event.model
            self.id = self.id or event.id

    def _message_stop(self, event: MessageStop) -> None:
        self.stop = event

    def _opaque(self, event: Opaque) -> None:
        """A frame nobody models becomes an opaque block after the blocks seen so far."""
        acc = _Acc(BlockStart(-1, "opaque", name=event.kind, raw=event.raw))
        acc.closed = True
        self._opaques.append((self._last_index, acc))

    # -- result ----------------------------------------------------------------------------

    def snapshot(self, error: BaseException | None = None, *, final: bool = False) -> Snapshot:
        """The reply so far, immutable; ``final`` says the events ended (so a reply without
        its end is incomplete), ``error`` why they ended early."""
        failure: LlmRxError | None = None
        if error is not None:
            failure = error if isinstance(error, LlmRxError) else IncompleteStreamError(
                f"the stream failed: {type(error).__name__}: {error}"
            )
        logprobs = (
            tuple((key, items, len(items)) for key, items in self._logprobs.items())
            if self._logprobs else ()
        )
        choices = {acc.start.choice for acc in self._blocks.values()} | set(self._choice_ends)
        state = _State(
            self.provider, self.model, self.id, self.usage, self.stop,
            tuple(acc.view() for acc in self._blocks.values()),
            tuple(self._opaques), self._choice_ends, self._choice_extra,
            min(choices) if choices else 0, self.extra, logprobs,
        )
        return Snapshot(state, failure, final)

    def block(self, index: int) -> Block | None:
        """Block ``index`` as it stands now (only that block is materialised)."""
        acc = self._blocks.get(index)
        return acc.view().block() if acc is not None else None

    def indexes(self, *kinds: str) -> list[int]:
        """The indexes of the blocks of these kinds so far, in index order."""
        return sorted(i for i, acc in self._blocks.items() if acc.start.kind in kinds)

    def is_closed(self, index: int) -> bool:
        acc = self._blocks.get(index)
        return acc is not None and acc.closed

    def build(self, error: BaseException | None = None) -> Response:
        """The response once the events ended; ``error`` is why they ended early, if they did."""
        return self.snapshot(error, final=True).response


def _overlay(old: dict[str, Any], fields: Any) -> dict[str, Any]:
    new = dict(old)
    for key, value in fields.items():
        previous = new.get(key)
        if isinstance(previous, dict) and isinstance(value, dict):
            value = {**previous, **value}
        new[key] = value
    return new


def _materialise(state: _State, failure: LlmRxError | None, final: bool) -> Response:
    (provider, model, id_, usage, stop, views, opaques, choice_ends, choice_extra, first,
     extra, logprob_views) = state
    if failure is None and stop is None and final:
        failure = IncompleteStreamError("the events ended before the end of the message")
    ordered = [((view.acc.start.index, 0, 0), view) for view in views]
    ordered += [((after, 1, n), acc.view()) for n, (after, acc) in enumerate(opaques)]
    ordered.sort(key=lambda item: item[0])
    contents: dict[int, list[Block]] = {}
    for _, view in ordered:
        contents.setdefault(view.acc.start.choice, []).append(view.block())
    logprobs: dict[int, dict[str, list[Any]]] = {}
    for (choice, channel), items, count in logprob_views:
        logprobs.setdefault(choice, {})[channel] = items[:count]
    stop_reason: StopReason | None = None
    details = native_stop = info = None
    if failure is not None:
        stop_reason = "interrupted" if failure.kind in ("incomplete", "cancelled") else "error"
        info = ErrorInfo(kind=failure.kind, message=failure.message, raw=failure.raw)
    elif stop is not None:
        stop_reason, details, native_stop = stop.stop_reason, stop.details, stop.native
    choice_ids = sorted(set(contents) | set(choice_ends)) or [first]
    choices: list[Choice] = []
    if len(choice_ids) > 1:
        for number in choice_ids:
            end = choice_ends.get(number)
            choices.append(
                Choice(
                    index=number,
                    content=contents.get(number, []),
                    stop_reason=stop_reason if info is not None else (
                        end.stop_reason if end else None
                    ),
                    logprobs=logprobs.get(number),
                    native_stop_reason=end.native if end else None,
                    extra=dict(choice_extra.get(number, {})),
                )
            )
    return Response(
        provider=provider or "unknown",
        model=model,
        id=id_,
        content=contents.get(first, []),
        stop_reason=stop_reason,
        complete=stop is not None and info is None,
        usage=usage,
        stop_details=details,
        choices=choices,
        error=info,
        logprobs=logprobs.get(first),
        extra=dict(extra),
        native_stop_reason=native_stop,
        choice_extra=dict(choice_extra.get(first, {})),
    )
