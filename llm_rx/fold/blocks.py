"""A block of a reply being assembled from its events (fragments appended, joined when read)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..events import BlockStart, RefusalDelta, TextDelta, ThinkingDelta, ToolArgsDelta
from ..response import (
    ApprovalRequestBlock,
    Block,
    OpaqueBlock,
    RefusalBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from .history import History, Latest, count_at

__all__ = ["Acc", "appender", "approval_arguments"]

_DELTAS = frozenset({TextDelta, ThinkingDelta, RefusalDelta, ToolArgsDelta})


class Acc:
    """A block being assembled: fragments appended to a list, joined once when read."""

    __slots__ = ("born", "citation_seqs", "citations", "closed_at", "joined", "parts", "seqs",
                 "signature", "start")

    def __init__(self, start: BlockStart, born: int, history: bool = True) -> None:
        self.start = start
        self.born = born
        self.parts: list[str] = []
        self.seqs: list[int] = []  # when each part arrived (kept only with history)
        self.signature: History[str | None] = (History if history else Latest)(None)
        self.citations: list[Any] = []
        self.citation_seqs: list[int] = []
        self.closed_at: int | None = None
        self.joined = 0  # the parts before this one are joined runs (see ``compact``)

    def compact(self) -> None:
        """Join the parts that arrived since the last call into one string (for a builder
        without history, which reads no part by itself): a long reply's many small strings
        cost an object each, a run of them joined costs one."""
        parts, joined = self.parts, self.joined
        parts[joined:] = ["".join(parts[joined:])]
        self.joined = joined + 1

    def block(self, seq: int | None = None) -> Block:
        """The block as it was at ``seq`` (now, for ``None``)."""
        start = self.start
        kind = start.kind
        meta = dict(start.meta) if start.meta else None
        parts = self.parts
        count = count_at(self.seqs, len(parts), seq)
        text = "".join(parts if count == len(parts) else parts[:count])
        signature = self.signature.at(seq)
        closed = self.closed_at is not None and (seq is None or self.closed_at <= seq)
        if kind == "text":
            citations = self.citations[: count_at(self.citation_seqs, len(self.citations), seq)]
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
        if kind == "approval_request":
            return _approval(start, text, closed, meta)
        return OpaqueBlock(kind=start.name or "opaque", raw=start.raw, meta=meta)


def approval_arguments(text: str) -> Any:
    """A whole approval request's arguments: the parsed JSON, the string as it came when it
    is no JSON (the evidence kept), ``{}`` for none."""
    if not text:
        return {}
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _approval(start: BlockStart, text: str, closed: bool,
              meta: dict[str, Any] | None) -> ApprovalRequestBlock:
    """An approval request: its server from ``meta``, its arguments parsed once it ended
    (kept as the string when they are no JSON; ``{}`` for none)."""
    server = meta.pop("server", None) if meta else None
    arguments = approval_arguments(text) if closed else None
    return ApprovalRequestBlock(id=start.id, name=start.name, arguments=arguments,
                                server=server if isinstance(server, str) else None,
                                raw=start.raw, meta=meta or None)


def appender(builder: Any, event_type: Any, index: int, before: list[Any] | None = None
             ) -> Callable[[str], object] | None:
    """Where the strings of ``event_type(index, string)`` deltas may be appended to a
    ``ResponseBuilder`` directly, as feeding each delta would append it: the block's
    ``list.append`` (a text, thinking, refusal or argument delta of a started block, a builder
    without history), else ``None``. Valid until the next event is fed;
    such strings take no sequence number (a builder without history reads none). A source
    gives a live read's string here instead of its event when the events only go to this
    builder (``to_response()`` right after a source, ``reassemble``: see
    ``TemplateFrames.fold_into``). ``before``: the events of the same read before the strings,
    fed first (the list emptied), a failure to fold them raised as ``fold_error`` gives it."""
    if builder.history or event_type not in _DELTAS:
        return None
    if before:
        from .snapshot import fold_error  # (snapshot reads this module's blocks)

        try:
            builder.feed_all(before)
        except Exception as error:
            raise fold_error(error) from error
        finally:
            before.clear()
    acc: Acc | None = builder._blocks.get(index)
    return acc.parts.append if acc is not None else None
