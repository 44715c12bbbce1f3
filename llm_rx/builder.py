"""Folding events into a :class:`~llm_rx.response.Response`. Pure: no Rx, no I/O.

``ResponseBuilder.feed(event)`` for each event, then ``build(error)`` once. Merge semantics,
per field: text, thinking, refusal and argument fragments are appended (to lists, joined
once); a signature is *assigned* (the provider sends it whole); usage snapshots *overlay*
(cumulative, never summed); metadata overlays by key; the served model from ``MessageStart``
is kept.

``snapshot()`` gives an immutable :class:`Snapshot` of the reply so far in O(1): every event
gets a sequence number, fragments live in append-only lists beside the number each arrived
at, and the few values that are replaced (usage, metadata, the stop) keep their history; a
snapshot is the builder and a number, and its ``response`` is materialised (joined) only when
read. ``ResponseBuilder(history=False)`` keeps no history (for one final ``build()``); its
snapshots are then materialised at once. A snapshot may be read on another thread while the
builder is still being fed (a display rendering at its own rate): what it reads was appended
before its number was, so it never sees what came after it.

A tool call's ``arguments`` are parsed only once its block has ended: a parseable prefix of
a cut-off call is not a finished call (its ``arguments`` stay ``None``, ``raw_arguments`` keeps
what arrived). Arguments that never parse are kept raw with ``arguments: None``, never ``{}``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from itertools import repeat
from operator import itemgetter
from typing import Any, Generic, TypeVar

import orjson

from .errors import IncompleteStreamError, LlmRxError, WireFormatError
from .events import (
    BlockStart,
    BlockStop,
    ChoiceEnd,
    CitationDelta,
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
from .wire import fast

__all__ = ["ResponseBuilder", "Snapshot", "fold_error"]


def fold_error(error: Exception) -> LlmRxError:
    """``error`` as the typed error of events that could not be folded into a response (an
    event of the wrong shape from upstream): itself when it is an ``LlmRxError`` already."""
    if isinstance(error, LlmRxError):
        return error
    failure = WireFormatError(
        f"an event could not be folded into the response ({type(error).__name__}: {error})"
    )
    failure.__cause__ = error
    return failure

T = TypeVar("T")


class _History(Generic[T]):
    """A value that is replaced over time: ``set(seq, value)``, ``at(seq)``, ``now``."""

    __slots__ = ("initial", "now", "seqs", "values")

    def __init__(self, initial: T) -> None:
        self.initial = initial
        self.now = initial
        self.seqs: list[int] = []
        self.values: list[T] = []

    def set(self, seq: int, value: T) -> None:
        self.seqs.append(seq)
        self.values.append(value)
        self.now = value

    def at(self, seq: int | None) -> T:
        if seq is None:
            return self.now
        # (``set`` appends the number before the value: a value set meanwhile is not seen)
        position = bisect_right(self.seqs, seq)
        return self.values[position - 1] if position else self.initial


class _Latest(_History[T]):
    """A replaced value whose history nobody will read (a builder without history): only
    the latest is kept, so a value set on every frame costs nothing that grows."""

    __slots__ = ()

    def __init__(self, initial: T) -> None:  # (no lists of past values)
        self.initial = self.now = initial

    def set(self, seq: int, value: T) -> None:
        self.now = value

    def at(self, seq: int | None) -> T:
        return self.now


def _count(seqs: list[int], total: int, seq: int | None) -> int:
    """How many items of an append-only list (items numbered by ``seqs``) existed at ``seq``;
    ``seq`` is ``None`` for now, and for a builder that keeps no history."""
    if seq is None:
        return total
    # (items are appended before their numbers: an item appended meanwhile is not counted)
    if not seqs or seqs[-1] <= seq:
        return len(seqs)
    return bisect_right(seqs, seq)


_TEXTS = frozenset({TextDelta, ThinkingDelta, RefusalDelta})
# A longer list of events (a whole body's, read at once) is fed a slice of so many at a time:
# the slices inside a run of text deltas are the usual chunk, appended at C level.
_SLICE = 128
_INDEX, _TEXT = itemgetter(0), itemgetter(1)  # of a text delta


class _Acc:
    """A block being assembled: fragments appended to a list, joined once when read."""

    __slots__ = ("born", "citation_seqs", "citations", "closed_at", "parts", "seqs",
                 "signature", "start")

    def __init__(self, start: BlockStart, born: int, history: bool = True) -> None:
        self.start = start
        self.born = born
        self.parts: list[str] = []
        self.seqs: list[int] = []  # when each part arrived (kept only with history)
        self.signature: _History[str | None] = (_History if history else _Latest)(None)
        self.citations: list[Any] = []
        self.citation_seqs: list[int] = []
        self.closed_at: int | None = None

    def block(self, seq: int | None = None) -> Block:
        """The block as it was at ``seq`` (now, for ``None``)."""
        start = self.start
        kind = start.kind
        meta = dict(start.meta) if start.meta else None
        parts = self.parts
        count = _count(self.seqs, len(parts), seq)
        text = "".join(parts if count == len(parts) else parts[:count])
        signature = self.signature.at(seq)
        closed = self.closed_at is not None and (seq is None or self.closed_at <= seq)
        if kind == "text":
            citations = self.citations[: _count(self.citation_seqs, len(self.citations), seq)]
            return TextBlock(text=text, signature=signature, citations=citations, meta=meta)
        if kind == "thinking":
            return ThinkingBlock(text=text, signature=signature, meta=meta)
        if kind == "redacted_thinking":
            return ThinkingBlock(text=text, signature=signature, redacted=True, meta=meta)
        if kind == "tool_call":
            arguments: Any = None
            if not text:
                arguments = {} if closed else None
            elif closed:
                try:
                    arguments = orjson.loads(text)
                except orjson.JSONDecodeError:
                    arguments = None
            return ToolCallBlock(id=start.id, name=start.name, arguments=arguments,
                                 raw_arguments=text, signature=signature, meta=meta)
        if kind == "refusal":
            return RefusalBlock(text=text, meta=meta)
        return OpaqueBlock(kind=start.name or "opaque", raw=start.raw, meta=meta)


class Snapshot:
    """An immutable view of a reply as far as it arrived.

    O(1) to take; ``response`` materialises it as a :class:`~llm_rx.response.Response` once,
    on first access. A snapshot taken before the reply ended has ``complete: False``,
    ``stop_reason: None`` and no ``error``: in progress.
    """

    __slots__ = ("_builder", "_response", "_seq", "notes")

    _response: Response  # (set on first read)
    error: LlmRxError | None = None  # why the events ended early (an ended snapshot's)
    _final = False  # whether the events ended (a reply without its end is then incomplete)

    def __init__(self, builder: ResponseBuilder, seq: int | None) -> None:
        self._builder = builder
        self._seq = seq
        self.notes: tuple[str, ...] = ()  # what the operators after a display add (at the end)

    @property
    def response(self) -> Response:
        try:
            return self._response
        except AttributeError:  # (not read yet: a snapshot is taken on every event)
            pass
        try:
            response = self._response = self._builder._materialise(
                self._seq, self.error, self._final)
        except (LlmRxError, MemoryError):
            raise
        except Exception as error:  # the boundary: events that do not fold
            raise fold_error(error) from error
        return response

    @property
    def text(self) -> str:
        """The answer's text so far (first choice), without building the whole response."""
        try:
            return self._response.text
        except AttributeError:
            return self._builder._text_at(self._seq)

    def __repr__(self) -> str:
        return f"Snapshot({self.response!r})"


class _Ended(Snapshot):
    """A snapshot taken as the events ended, or with an error."""

    __slots__ = ("_final", "error")

    def __init__(
        self, builder: ResponseBuilder, seq: int | None, error: LlmRxError | None, final: bool
    ) -> None:
        super().__init__(builder, seq)
        self.error = error
        self._final = final


class ResponseBuilder:
    """Accumulates events; ``build()`` gives the ``Response``, ``snapshot()`` a view so far."""

    def __init__(self, provider: str | None = None, *, history: bool = True) -> None:
        self.provider = provider
        self._given = provider  # the provider named by the caller, if any
        self.history = history
        self._seq = 0
        # Without history only the latest of each replaced value is kept (usage on every
        # chunk, thousands of choices: nothing piles up); per choice, so that a choice's
        # end or fields do not copy every other choice's.
        self._kept: type[_History[Any]] = _History if history else _Latest
        self._start: _History[MessageStart | None] = self._kept(None)
        self._usage: _History[Usage] = self._kept(Usage())
        self._stop: _History[MessageStop | None] = self._kept(None)
        self._extra: _History[dict[str, Any]] = self._kept({})
        self._choice_extra: dict[int, _History[dict[str, Any]]] = {}
        self._choice_ends: dict[int, _History[ChoiceEnd | None]] = {}
        self._blocks: dict[int, _Acc] = {}
        self._opaques: list[tuple[int, int, _Acc]] = []  # (seq, index of the block before, block)
        self._logprobs: dict[tuple[int, str], tuple[list[Any], list[int]]] = {}
        self._last_index = -1
        self._handlers: dict[type[Any], Callable[[Any], None]] = {
            TextDelta: self._text if history else self._text_now,
            ThinkingDelta: self._text if history else self._text_now,
            RefusalDelta: self._text if history else self._text_now,
            ToolArgsDelta: self._args,
            BlockStart: self._block_start,
            BlockStop: self._block_stop,
            SignatureDelta: self._signature,
            CitationDelta: self._citation,
            LogprobsDelta: self._logprobs_delta,
            UsageUpdate: self._usage_update,
            MetadataUpdate: self._metadata,
            ChoiceEnd: self._choice_end,
            MessageStart: self._message_start,
            MessageStop: self._message_stop,
            Opaque: self._opaque,
            Dropped: self._dropped,
        }

    def feed(self, event: Event) -> None:
        self._seq += 1
        self._handlers[type(event)](event)

    def feed_all(self, events: Iterable[Event]) -> None:
        """``feed`` each event in turn (one call for a chunk's events)."""
        if not fast.enabled:  # (the shortcuts off: see :mod:`llm_rx.wire.fast`)
            for event in events:
                self.feed(event)
            return
        if not self.history and events.__class__ is list:
            acc = self._one_block(events)
            if acc is not None:  # the usual chunk: appended at C level
                acc.parts.extend(map(_TEXT, events))
                self._seq += len(events)
                return
            if len(events) > _SLICE:  # (a whole body's events: its runs of deltas at C level)
                for start in range(0, len(events), _SLICE):
                    self.feed_all(events[start : start + _SLICE])
                return
        handlers = self._handlers
        for event in events:
            self._seq += 1
            handlers[type(event)](event)

    def advance(self, event: Event) -> Snapshot:
        """``feed`` the event, then the snapshot after it (one call per event, for
        ``accumulate()``; a builder with history)."""
        seq = self._seq = self._seq + 1
        acc = self._blocks.get(event[0]) if event.__class__ in _TEXTS else None
        if acc is not None:  # (the usual event, inlined: ``_text``)
            acc.parts.append(event[1])
            acc.seqs.append(seq)
        else:
            self._handlers[type(event)](event)
        return Snapshot(self, seq)  # (once the end arrived, ``final`` changes nothing)

    def advance_all(self, events: list[Event]) -> tuple[list[Snapshot], Exception | None]:
        """``advance`` over a read's events: the snapshot after each, up to the first event
        that could not be fed, and the error it raised (``None`` when all were fed)."""
        acc = self._one_block(events) if fast.enabled else None
        if acc is not None:  # the usual read: appended and numbered at C level
            seqs = range(self._seq + 1, self._seq + len(events) + 1)
            acc.parts.extend(map(_TEXT, events))  # (then their numbers, as ``advance`` does)
            acc.seqs.extend(seqs)
            self._seq += len(events)
            return list(map(Snapshot, repeat(self), seqs)), None
        if len(events) > _SLICE and fast.enabled:  # (a whole body's: runs at C level)
            done: list[Snapshot] = []
            for start in range(0, len(events), _SLICE):
                part, failure = self.advance_all(events[start : start + _SLICE])
                done += part
                if failure is not None:
                    return done, failure
            return done, None
        snapshots: list[Snapshot] = []
        advance = self.advance
        try:
            for event in events:
                snapshots.append(advance(event))
        except Exception as error:  # noqa: BLE001 - a malformed event, for the caller
            return snapshots, error
        return snapshots, None

    def _one_block(self, events: list[Event]) -> _Acc | None:
        """The started block that all ``events`` (more than one) are text deltas of, if so."""
        if len(events) > 1:
            kinds = set(map(type, events))
            if len(kinds) == 1 and kinds <= _TEXTS and len(set(map(_INDEX, events))) == 1:
                return self._blocks.get(_INDEX(events[0]))
        return None

    @property
    def started(self) -> bool:
        """Whether the reply started (a ``MessageStart`` arrived)."""
        return self._start.now is not None

    @property
    def usage(self) -> Usage:
        return self._usage.now

    @property
    def stop(self) -> MessageStop | None:
        return self._stop.now

    # -- handlers --------------------------------------------------------------------------

    def _acc(self, index: int, kind: Any) -> _Acc:
        acc = self._blocks.get(index)
        if acc is None:  # lenient: a delta with no BlockStart opens its block
            acc = self._blocks[index] = _Acc(BlockStart(index, kind), self._seq, self.history)
        return acc

    def _text(self, event: TextDelta | ThinkingDelta | RefusalDelta) -> None:
        acc = self._blocks.get(event.index) or self._implied(event)
        acc.parts.append(event.text)
        acc.seqs.append(self._seq)

    def _text_now(self, event: TextDelta | ThinkingDelta | RefusalDelta) -> None:
        (self._blocks.get(event.index) or self._implied(event)).parts.append(event.text)

    def _implied(self, event: TextDelta | ThinkingDelta | RefusalDelta) -> _Acc:
        kind = {TextDelta: "text", ThinkingDelta: "thinking"}.get(type(event), "refusal")
        return self._acc(event.index, kind)

    def _args(self, event: ToolArgsDelta) -> None:
        acc = self._acc(event.index, "tool_call")
        acc.parts.append(event.fragment)
        if self.history:
            acc.seqs.append(self._seq)

    def _block_start(self, event: BlockStart) -> None:
        acc = self._blocks.get(event.index)
        if acc is not None and acc.closed_at is None:
            acc.start = event  # deltas came first (lenient): keep them, learn the block's kind
        else:
            self._blocks[event.index] = _Acc(event, self._seq, self.history)
        if event.index > self._last_index:
            self._last_index = event.index

    def _block_stop(self, event: BlockStop) -> None:
        acc = self._blocks.get(event.index)
        if acc is not None and acc.closed_at is None:
            acc.closed_at = self._seq

    def _signature(self, event: SignatureDelta) -> None:
        self._acc(event.index, "thinking").signature.set(self._seq, event.signature)

    def _citation(self, event: CitationDelta) -> None:
        acc = self._acc(event.index, "text")
        acc.citations.append(event.citation)
        if self.history:
            acc.citation_seqs.append(self._seq)

    def _usage_update(self, event: UsageUpdate) -> None:
        self._usage.set(self._seq, self._usage.now.overlay(event.usage))

    def _metadata(self, event: MetadataUpdate) -> None:
        """Overlay by key; a mapping value overlays the earlier mapping one level deep."""
        if event.choice is None:
            if self.history:
                self._extra.set(self._seq, _overlay(self._extra.now, event.fields))
            else:  # (read only through a copy: overlaid in place)
                _overlay_into(self._extra.now, event.fields)
        else:
            fields = self._choice_extra.get(event.choice)
            if fields is None:
                fields = self._choice_extra[event.choice] = self._kept({})
            fields.set(self._seq, _overlay(fields.now, event.fields))

    def _logprobs_delta(self, event: LogprobsDelta) -> None:
        items, seqs = self._logprobs.setdefault((event.choice, event.channel), ([], []))
        items.extend(event.items)
        if self.history:
            seqs.extend([self._seq] * len(event.items))

    def _choice_end(self, event: ChoiceEnd) -> None:
        end = self._choice_ends.get(event.choice)
        if end is None:
            end = self._choice_ends[event.choice] = self._kept(None)
        end.set(self._seq, event)

    def _message_start(self, event: MessageStart) -> None:
        first = self._start.now
        if first is None:
            self.provider = self.provider or event.provider
            self._start.set(self._seq, event)
        elif (first.model is None and event.model) or (first.id is None and event.id):
            # a later start may only fill in what the first one lacked
            self._start.set(self._seq, MessageStart(
                first.provider, first.model or event.model, first.id or event.id))

    def _message_stop(self, event: MessageStop) -> None:
        self._stop.set(self._seq, event)

    def _opaque(self, event: Opaque) -> None:
        """A frame nobody models becomes an opaque block after the blocks seen so far."""
        acc = _Acc(BlockStart(-1, "opaque", name=event.kind, raw=event.raw), self._seq,
                   self.history)
        acc.closed_at = self._seq
        self._opaques.append((self._seq, self._last_index, acc))

    def _dropped(self, event: Dropped) -> None:
        """What a translation left out is not part of the reply it folds to."""

    # -- reading ---------------------------------------------------------------------------

    def block(self, index: int) -> Block | None:
        """Block ``index`` as it stands now (only that block is materialised)."""
        acc = self._blocks.get(index)
        return acc.block() if acc is not None else None

    def snapshot(self, error: BaseException | None = None, *, final: bool = False) -> Snapshot:
        """The reply so far, immutable; ``final`` says the events ended (so a reply without
        its end is incomplete), ``error`` why they ended early."""
        failure: LlmRxError | None = None
        if error is not None:
            failure = error if isinstance(error, LlmRxError) else IncompleteStreamError(
                f"the stream failed: {type(error).__name__}: {error}"
            )
        seq = self._seq if self.history else None
        snapshot = (_Ended(self, seq, failure, final) if failure is not None or final
                    else Snapshot(self, seq))
        if not self.history:
            snapshot.response  # noqa: B018 - no history: materialise while it is still true
        return snapshot

    def build(self, error: BaseException | None = None) -> Response:
        """The response once the events ended; ``error`` is why they ended early, if they did."""
        return self.snapshot(error, final=True).response

    def _blocks_at(self, seq: int | None) -> list[_Acc]:
        # (``list()`` copies at once: another thread may be feeding while a snapshot is read)
        return [acc for acc in list(self._blocks.values()) if seq is None or acc.born <= seq]

    def _ends_at(self, seq: int | None) -> dict[int, ChoiceEnd]:
        """Each choice's end as it was at ``seq``."""
        ends = ((choice, end.at(seq)) for choice, end in list(self._choice_ends.items()))
        return {choice: end for choice, end in ends if end is not None}

    def _first_choice(self, seq: int | None, ends: dict[int, ChoiceEnd] | None = None) -> int:
        choices = {acc.start.choice for acc in self._blocks_at(seq)}
        choices |= set(self._ends_at(seq) if ends is None else ends)
        return min(choices) if choices else 0

    def _text_at(self, seq: int | None) -> str:
        first = self._first_choice(seq)
        accs = sorted(
            (acc for acc in self._blocks_at(seq)
             if acc.start.kind == "text" and acc.start.choice == first),
            key=lambda acc: acc.start.index,
        )
        return "".join(
            "".join(acc.parts[: _count(acc.seqs, len(acc.parts), seq)]) for acc in accs
        )

    def _materialise(self, seq: int | None, failure: LlmRxError | None, final: bool) -> Response:
        stop = self._stop.at(seq)
        start = self._start.at(seq)
        if failure is None and stop is None and final:
            failure = IncompleteStreamError("the events ended before the end of the message")
        ordered: list[tuple[tuple[int, int, int], _Acc]] = [
            ((acc.start.index, 0, 0), acc) for acc in self._blocks_at(seq)
        ]
        ordered += [
            ((after, 1, n), acc)
            for n, (born, after, acc) in enumerate(list(self._opaques))
            if seq is None or born <= seq
        ]
        ordered.sort(key=lambda item: item[0])
        contents: dict[int, list[Block]] = {}
        for _, acc in ordered:
            contents.setdefault(acc.start.choice, []).append(acc.block(seq))
        logprobs: dict[int, dict[str, list[Any]]] = {}
        for (choice, channel), (items, seqs) in list(self._logprobs.items()):
            count = _count(seqs, len(items), seq)
            if count:
                logprobs.setdefault(choice, {})[channel] = items[:count]
        stop_reason: StopReason | None = None
        details = native_stop = info = None
        if failure is not None:
            stop_reason = "interrupted" if failure.kind in ("incomplete", "cancelled") else "error"
            info = ErrorInfo(kind=failure.kind, message=failure.message, raw=failure.raw)
        elif stop is not None:
            stop_reason, details, native_stop = stop.stop_reason, stop.details, stop.native
        choice_ends = self._ends_at(seq)
        choice_extra = {choice: fields.at(seq)
                        for choice, fields in list(self._choice_extra.items())}
        first = self._first_choice(seq, choice_ends)
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
            provider=self._given or (start.provider if start else None) or "unknown",
            model=start.model if start else None,
            id=start.id if start else None,
            content=contents.get(first, []),
            stop_reason=stop_reason,
            complete=stop is not None and info is None,
            usage=self._usage.at(seq),
            stop_details=details,
            choices=choices,
            error=info,
            logprobs=logprobs.get(first),
            extra=dict(self._extra.at(seq)),
            native_stop_reason=native_stop,
            choice_extra=dict(choice_extra.get(first, {})),
        )


def _overlay(old: dict[str, Any], fields: Any) -> dict[str, Any]:
    new = dict(old)
    _overlay_into(new, fields)
    return new


def _overlay_into(target: dict[str, Any], fields: Any) -> None:
    """Overlay ``fields`` on ``target`` in place (a mapping value is merged into a new one:
    the earlier one may be in a response already given out)."""
    for key, value in fields.items():
        previous = target.get(key)
        if isinstance(previous, dict) and isinstance(value, dict):
            value = {**previous, **value}
        target[key] = value
