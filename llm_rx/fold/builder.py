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

from collections.abc import Callable, Iterable
from itertools import repeat
from operator import itemgetter
from typing import Any

from ..errors import IncompleteStreamError, LlmRxError
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
from ..response import Block, Response, Usage
from .blocks import Acc
from .history import History, Latest, overlay, overlay_into
from .snapshot import Ended, Reading, Snapshot, another_response, fold_error

__all__ = ["ResponseBuilder", "Snapshot", "fold_error"]

_TEXTS = frozenset({TextDelta, ThinkingDelta, RefusalDelta})
_DELTAS = _TEXTS | {ToolArgsDelta}
# A longer list of events (a whole body's) is fed in slices: each a usual chunk, at C level.
_SLICE = 128
_INDEX, _TEXT = itemgetter(0), itemgetter(1)  # of a text delta
# A block's parts joined into one string past this many (a builder without history: bounded
# memory for a long reply of small deltas, each a string object until joined).
_PARTS = 4096


class ResponseBuilder(Reading):
    """Accumulates events; `build()` gives the `Response`, `snapshot()` a view so far.

    Pure (no Rx, no I/O): what `to_response()`, `accumulate()` and the live displays fold with.
    """

    def __init__(self, provider: str | None = None, *, history: bool = True) -> None:
        """A builder with nothing fed yet.

        Args:
            provider: The provider id the events were decoded from (the response's
                `provider`); `None` takes it from the `MessageStart`.
            history: Keep every value a later event replaces, so that each snapshot taken
                along the way still reads the reply as it was then (what `accumulate()`
                needs). Without it only the latest of each is kept (for one final `build()`:
                nothing piles up), and `snapshot()` materialises at once.
        """
        self.provider = provider
        self._given = provider  # the provider named by the caller, if any
        self.history = history
        self._seq = 0
        # Without history only the latest of each replaced value is kept (nothing piles
        # up); per choice, so that a choice's end or fields do not copy every other's.
        self._kept: type[History[Any]] = History if history else Latest
        self._start: History[MessageStart | None] = self._kept(None)
        self._usage: History[Usage] = self._kept(Usage())
        self._stop: History[MessageStop | None] = self._kept(None)
        self._extra: History[dict[str, Any]] = self._kept({})
        self._choice_extra: dict[int, History[dict[str, Any]]] = {}
        self._choice_ends: dict[int, History[ChoiceEnd | None]] = {}
        self._blocks: dict[int, Acc] = {}
        self._opaques: list[tuple[int, int, Acc]] = []  # (seq, index of the block before, block)
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
            Custom: self._dropped,  # (an application's event: no part of the model's reply)
        }

    def feed(self, event: Event) -> None:
        """Fold one event into the reply.

        Args:
            event: The next event of the reply, in stream order.
        """
        self._seq += 1
        self._handlers[type(event)](event)

    def feed_all(
        self, events: Iterable[Event], kinds: frozenset[type[Event]] | None = None
    ) -> None:
        """`feed` each event in turn: one call for a chunk's events, the same fold.

        Args:
            events: The events, in stream order.
            kinds: The types of `events` when the caller has them already (a `fan_out()`'s
                hub finds them once a read).
        """
        if self.history or events.__class__ is not list:
            for event in events:
                self.feed(event)
            return
        acc = self._one_block(events, kinds)
        if acc is not None:  # the usual read of a live stream: appended at C level
            acc.parts.extend(map(_TEXT, events))
            self._seq += len(events)
            if len(acc.parts) - acc.joined > _PARTS:
                acc.compact()
            return
        # Without history a delta of a started block only appends its string: inline here,
        # every other event by its handler (under its own number).
        blocks, handlers = self._blocks, self._handlers
        start = seq = self._seq
        try:
            for seq, event in enumerate(events, start + 1):
                kind = event.__class__
                if kind in _DELTAS and (acc := blocks.get(event[0])) is not None:
                    acc.parts.append(event[1])
                else:
                    self._seq = seq
                    handlers[kind](event)
        except Exception:
            self._seq = seq  # (the event that failed took its number: the ones before are in)
            raise
        self._seq = start + len(events)
        if acc is not None and len(acc.parts) - acc.joined > _PARTS:  # (the last block fed)
            acc.compact()

    def advance(self, event: Event) -> Snapshot:
        """`feed` the event, then the snapshot after it (for `accumulate()`: with history).

        Args:
            event: The next event of the reply, in stream order.

        Returns:
            The reply up to and including `event`.
        """
        seq = self._seq = self._seq + 1
        acc = self._blocks.get(event[0]) if event.__class__ in _TEXTS else None
        if acc is not None:  # (the usual event, inlined: ``_text``)
            acc.parts.append(event[1])
            acc.seqs.append(seq)
        else:
            self._handlers[type(event)](event)
        return Snapshot(self, seq)  # (once the end arrived, ``final`` changes nothing)

    def advance_all(self, events: list[Event]) -> tuple[list[Snapshot], Exception | None]:
        """`advance` over a read's events.

        Args:
            events: The events of one read, in stream order.

        Returns:
            The snapshot after each event, up to the first that could not be fed, and the
                error that one raised (`None` when all were fed: nothing already arrived is
                lost to a bad event).
        """
        acc = self._one_block(events)
        if acc is not None:  # the usual read: appended and numbered at C level
            seqs = list(range(self._seq + 1, self._seq + len(events) + 1))  # (made once)
            acc.parts.extend(map(_TEXT, events))  # (then their numbers, as ``advance`` does)
            acc.seqs += seqs
            self._seq += len(events)
            return list(map(Snapshot, repeat(self), seqs)), None
        if len(events) > _SLICE:  # (a whole body's: runs at C level)
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

    def _one_block(
        self, events: list[Event], kinds: frozenset[type[Event]] | None = None
    ) -> Acc | None:
        """The started block all ``events`` (more than one; types ``kinds``) are text deltas of."""
        if len(events) > 1:
            kinds = kinds or frozenset(map(type, events))
            if len(kinds) == 1 and kinds <= _TEXTS and len(set(map(_INDEX, events))) == 1:
                return self._blocks.get(_INDEX(events[0]))
        return None

    @property
    def started(self) -> bool:
        """Whether the reply started (a ``MessageStart`` arrived)."""
        return self._start.now is not None

    @property
    def usage(self) -> Usage:
        """The token usage so far (the `UsageUpdate`s merged)."""
        return self._usage.now

    @property
    def stop(self) -> MessageStop | None:
        """The `MessageStop` that ended the reply; `None` until it arrives."""
        return self._stop.now

    # -- handlers --------------------------------------------------------------------------

    def _acc(self, index: int, kind: Any) -> Acc:
        acc = self._blocks.get(index)
        if acc is None:  # lenient: a delta with no BlockStart opens its block
            acc = self._blocks[index] = Acc(BlockStart(index, kind), self._seq, self.history)
        return acc

    def _text(self, event: TextDelta | ThinkingDelta | RefusalDelta) -> None:
        acc = self._blocks.get(event.index) or self._implied(event)
        acc.parts.append(event.text)
        acc.seqs.append(self._seq)

    def _text_now(self, event: TextDelta | ThinkingDelta | RefusalDelta) -> None:
        (self._blocks.get(event.index) or self._implied(event)).parts.append(event.text)

    def _implied(self, event: TextDelta | ThinkingDelta | RefusalDelta) -> Acc:
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
            self._blocks[event.index] = Acc(event, self._seq, self.history)
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
                self._extra.set(self._seq, overlay(self._extra.now, event.fields))
            else:  # (read only through a copy: overlaid in place)
                overlay_into(self._extra.now, event.fields)
        else:
            fields = self._choice_extra.get(event.choice)
            if fields is None:
                fields = self._choice_extra[event.choice] = self._kept({})
            fields.set(self._seq, overlay(fields.now, event.fields))

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
        """The first start; a later one fills in what it lacked, and its model (a fallback
        model's) served the rest of the reply; one that starts another response is an error."""
        first, content = self._start.now, bool(self._blocks or self._opaques)
        if first is not None and (error := another_response(first, self._stop.now, event, content)):
            raise error
        if first is None:
            self.provider = self.provider or event.provider
            self._start.set(self._seq, event)
        elif (event.model and event.model != first.model) or (first.id is None and event.id):
            self._start.set(self._seq, MessageStart(
                first.provider, event.model or first.model, first.id or event.id))

    def _message_stop(self, event: MessageStop) -> None:
        self._stop.set(self._seq, event)

    def _opaque(self, event: Opaque) -> None:
        """A frame nobody models becomes an opaque block after the blocks seen so far."""
        acc = Acc(BlockStart(-1, "opaque", name=event.kind, raw=event.raw), self._seq,
                   self.history)
        acc.closed_at = self._seq
        self._opaques.append((self._seq, self._last_index, acc))

    def _dropped(self, event: Dropped) -> None:
        """What a translation left out is not part of the reply it folds to."""

    # -- reading ---------------------------------------------------------------------------

    def block(self, index: int) -> Block | None:
        """Block `index` as it stands now (only that block is materialised).

        Args:
            index: The block's index, as its events carry it.

        Returns:
            The block so far, or `None` when no event of it arrived yet.
        """
        acc = self._blocks.get(index)
        return acc.block() if acc is not None else None

    def snapshot(self, error: BaseException | None = None, *, final: bool = False) -> Snapshot:
        """The reply so far, immutable.

        Args:
            error: Why the events ended early, if they did: an `LlmRxError` as it is, any
                other exception as an `IncompleteStreamError` naming it.
            final: The events ended, so a reply without its `MessageStop` is incomplete (not
                in progress).

        Returns:
            A snapshot (O(1) to take; its `response` is materialised on first access).
        """
        failure: LlmRxError | None = None
        if error is not None:
            failure = error if isinstance(error, LlmRxError) else IncompleteStreamError(
                f"the stream failed: {type(error).__name__}: {error}"
            )
        seq = self._seq if self.history else None
        snapshot = (Ended(self, seq, failure, final) if failure is not None or final
                    else Snapshot(self, seq))
        if not self.history:
            snapshot.response  # noqa: B018 - no history: materialise while it is still true
        return snapshot

    def build(self, error: BaseException | None = None) -> Response:
        """The response once the events ended.

        Args:
            error: Why the events ended early, if they did (the response then has
                `complete: False` and that error).

        Returns:
            The reply as a non-streamed call returns it.
        """
        return self.snapshot(error, final=True).response
