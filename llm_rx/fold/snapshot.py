"""Reading a reply as it stood at an event's sequence number: :class:`Snapshot`, and the
builder's side of it (:class:`Reading`: the blocks, ends and choices at a number, and the
``Response`` they materialise to)."""

from __future__ import annotations

from typing import Any

from ..errors import (
    IncompleteStreamError,
    LlmRxError,
    ProtocolError,
    ProviderError,
    WireFormatError,
)
from ..events import ChoiceEnd, MessageStart, MessageStop
from ..response import Block, Choice, ErrorInfo, Response, StopReason, Usage
from .blocks import Acc
from .history import History, count_at

__all__ = ["Ended", "Reading", "Snapshot", "another_response", "fold_error"]


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


def another_response(first: MessageStart, stop: MessageStop | None,
                     event: MessageStart, content: bool = False) -> LlmRxError | None:
    """The error a fold of one response meets when ``event`` starts another one on the same
    stream (after the first one's stop, with another id, or with the same id once the first
    one had ``content``): two replies are never merged into one
    (`llm_rx.operators.responses` splits such a stream)."""
    stopped = stop is not None
    again = bool(first.id and event.id and (event.id != first.id or content))
    if not stopped and not again:
        return None
    return ProtocolError(
        "the stream holds another response after this one (a second start"
        + (" after its end" if stopped else f", id {event.id!r}") + "): split it with "
        "llm_rx.operators.responses() or fold it with to_responses()")


class Reading:
    """The reading half of :class:`~llm_rx.fold.builder.ResponseBuilder` (which keeps these)."""

    _given: str | None
    _start: History[MessageStart | None]
    _usage: History[Usage]
    _stop: History[MessageStop | None]
    _extra: History[dict[str, Any]]
    _choice_extra: dict[int, History[dict[str, Any]]]
    _choice_ends: dict[int, History[ChoiceEnd | None]]
    _blocks: dict[int, Acc]
    _opaques: list[tuple[int, int, Acc]]
    _logprobs: dict[tuple[int, str], tuple[list[Any], list[int]]]

    def _blocks_at(self, seq: int | None) -> list[Acc]:
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
            "".join(acc.parts[: count_at(acc.seqs, len(acc.parts), seq)]) for acc in accs
        )

    def _materialise(self, seq: int | None, failure: LlmRxError | None, final: bool) -> Response:
        stop = self._stop.at(seq)
        start = self._start.at(seq)
        if failure is None and stop is None and final:
            failure = IncompleteStreamError("the events ended before the end of the message")
        ordered: list[tuple[tuple[int, int, int], Acc]] = [
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
            count = count_at(seqs, len(items), seq)
            if count:
                logprobs.setdefault(choice, {})[channel] = items[:count]
        stop_reason: StopReason | None = None
        details = native_stop = info = None
        if failure is not None:
            stop_reason = "interrupted" if failure.kind in ("incomplete", "cancelled") else "error"
            info = ErrorInfo(kind=failure.kind, message=failure.message, raw=failure.raw,
                             retryable=isinstance(failure, ProviderError) and failure.retryable)
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



class Snapshot:
    """An immutable view of a reply as far as it arrived.

    O(1) to take; `response` materialises it as a [`Response`][llm_rx.Response] once, on
    first access. A snapshot taken before the reply ended has `complete: False`,
    `stop_reason: None` and no `error`: in progress. Made by a builder (its `snapshot()`,
    `advance()`), not by hand.

    Args:
        builder: The builder it reads.
        seq: The number of the last event it includes (`None`: all, as they stand now).
    """

    __slots__ = ("_builder", "_notes", "_response", "_seq")

    _response: Response  # (set on first read)
    error: LlmRxError | None = None  # why the events ended early (an ended snapshot's)
    _final = False  # whether the events ended (a reply without its end is then incomplete)

    _notes: tuple[str, ...]  # (set by the operators after a display: see ``notes``)

    def __init__(self, builder: Reading, seq: int | None) -> None:
        self._builder = builder  # (two stores only: ``accumulate()`` makes one per event)
        self._seq = seq

    @property
    def notes(self) -> tuple[str, ...]:
        """What the operators after a display add to its footer at the end (none: `()`)."""
        try:
            return self._notes
        except AttributeError:
            return ()

    @notes.setter
    def notes(self, notes: tuple[str, ...]) -> None:
        self._notes = notes

    @property
    def response(self) -> Response:
        """The reply up to this snapshot, as a `Response` (materialised once, then kept)."""
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


class Ended(Snapshot):
    """A snapshot taken as the events ended, or with an error."""

    __slots__ = ("_final", "error")

    def __init__(
        self, builder: Reading, seq: int | None, error: LlmRxError | None, final: bool
    ) -> None:
        super().__init__(builder, seq)
        self.error = error
        self._final = final
