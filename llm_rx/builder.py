"""Folding events into a :class:`~llm_rx.response.Response`. Pure: no Rx, no I/O.

``ResponseBuilder.feed(event)`` for each event, then ``build(error)`` once. Merge semantics, per
field: text, thinking, refusal and argument fragments are appended (to lists, joined once);
a signature is *assigned* (the provider sends it whole); usage snapshots *overlay* (cumulative,
never summed); metadata overlays by key; the served model from ``MessageStart`` is kept.

A tool call's ``arguments`` are parsed only once its block has ended: a parseable prefix of
a cut-off call is not a finished call (its ``arguments`` stay ``None``, ``raw_arguments`` keeps
what arrived). Arguments that never parse are kept raw with ``arguments: None``, never ``{}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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

__all__ = ["ResponseBuilder"]


class _Acc:
    """A block being assembled: fragments in a list, joined once at the end."""

    __slots__ = ("citations", "closed", "parts", "signature", "start")

    def __init__(self, start: BlockStart) -> None:
        self.start = start
        self.parts: list[str] = []
        self.signature: str | None = None
        self.citations: list[Any] = []
        self.closed = False

    def block(self) -> Block:
        start = self.start
        kind = start.kind
        meta = dict(start.meta) if start.meta else None
        text = "".join(self.parts)
        if kind == "text":
            return TextBlock(text=text, signature=self.signature, citations=self.citations,
                             meta=meta)
        if kind == "thinking":
            return ThinkingBlock(text=text, signature=self.signature, meta=meta)
        if kind == "redacted_thinking":
            return ThinkingBlock(text=text, signature=self.signature, redacted=True, meta=meta)
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
                                 raw_arguments=text, signature=self.signature, meta=meta)
        if kind == "refusal":
            return RefusalBlock(text=text, meta=meta)
        return OpaqueBlock(kind=start.name or "opaque", raw=start.raw, meta=meta)


class ResponseBuilder:
    """Accumulates events; ``build()`` gives the ``Response`` (any number of times)."""

    def __init__(self, provider: str | None = None) -> None:
        self.provider = provider
        self.started = False
        self.model: str | None = None
        self.id: str | None = None
        self.usage = Usage()
        self.extra: dict[str, Any] = {}
        self.stop: MessageStop | None = None
        self._blocks: dict[int, _Acc] = {}
        self._choice_ends: dict[int, ChoiceEnd] = {}
        self._choice_extra: dict[int, dict[str, Any]] = {}
        self._logprobs: dict[int, dict[str, list[Any]]] = {}
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
        target = self.extra if event.choice is None else self._choice_extra.setdefault(
            event.choice, {}
        )
        for key, value in event.fields.items():
            previous = target.get(key)
            if isinstance(previous, dict) and isinstance(value, dict):
                value = {**previous, **value}
            target[key] = value

    def _logprobs_delta(self, event: LogprobsDelta) -> None:
        channels = self._logprobs.setdefault(event.choice, {})
        channels.setdefault(event.channel, []).extend(event.items)

    def _choice_end(self, event: ChoiceEnd) -> None:
        self._choice_ends[event.choice] = event

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

    def build(self, error: BaseException | None = None) -> Response:
        """The response so far; ``error`` is why the stream ended early, if it did."""
        failure: LlmRxError | None = None
        if error is not None:
            failure = error if isinstance(error, LlmRxError) else IncompleteStreamError(
                f"the stream failed: {type(error).__name__}: {error}"
            )
        elif self.stop is None:
            failure = IncompleteStreamError("the events ended before the end of the message")
        contents: dict[int, list[Block]] = {}
        ordered = [((index, 0, 0), acc) for index, acc in self._blocks.items()]
        ordered += [((after, 1, n), acc) for n, (after, acc) in enumerate(self._opaques)]
        ordered.sort(key=lambda item: item[0])
        for _, acc in ordered:
            contents.setdefault(acc.start.choice, []).append(acc.block())
        choice_ids = sorted(set(contents) | set(self._choice_ends)) or [0]
        first = choice_ids[0]
        if failure is None and self.stop is not None:
            stop_reason: StopReason = self.stop.stop_reason
            details = self.stop.details
            native_stop = self.stop.native
            info = None
        else:
            assert failure is not None
            stop_reason = "interrupted" if failure.kind in ("incomplete", "cancelled") else "error"
            details = None
            native_stop = None
            info = ErrorInfo(kind=failure.kind, message=failure.message, raw=failure.raw)
        choices: list[Choice] = []
        if len(choice_ids) > 1:
            for number in choice_ids:
                end = self._choice_ends.get(number)
                choices.append(
                    Choice(
                        index=number,
                        content=contents.get(number, []),
                        stop_reason=(end.stop_reason if end else None)
                        if info is None else stop_reason,
                        logprobs=self._logprobs.get(number),
                        native_stop_reason=end.native if end else None,
                        extra=dict(self._choice_extra.get(number, {})),
                    )
                )
        return Response(
            provider=self.provider or "unknown",
            model=self.model,
            id=self.id,
            content=contents.get(first, []),
            stop_reason=stop_reason,
            complete=info is None,
            usage=self.usage,
            stop_details=details,
            choices=choices,
            error=info,
            logprobs=self._logprobs.get(first),
            extra=dict(self.extra),
            native_stop_reason=native_stop,
            choice_extra=dict(self._choice_extra.get(first, {})),
        )
