"""What the readers of the two browser protocols (``ag-ui``, ``vercel-ui``) share: a part (or
message, or call) named by the stream's own id becomes a block of the reply, numbered in the
order the parts open; the usage counts both protocols write in the AI SDK's names; and the
stop reason an llm-rx encoder put in the end frame's metadata."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from ..events import BlockKind, BlockStart, BlockStop, Event
from ..response import StopReason, Usage
from ._approvals import approval_events

__all__ = ["Parts", "stop_reason", "ui_usage"]

_STOPS: frozenset[str] = frozenset(get_args(StopReason))


def _count(fields: Mapping[str, Any], *names: str) -> int | None:
    for name in names:
        value = fields.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def ui_usage(fields: Any) -> Usage | None:
    """The usage a UI stream reports (the AI SDK's ``LanguageModelUsage`` names, which
    AG-UI's ``TokenUsage`` shares), ``None`` when it names no count; the counts are totals,
    as llm-rx's own usage is."""
    if not isinstance(fields, Mapping):
        return None
    details = fields.get("inputTokenDetails")
    details = details if isinstance(details, Mapping) else {}
    usage = Usage(
        input_tokens=_count(fields, "inputTokens"),
        output_tokens=_count(fields, "outputTokens"),
        cache_read_tokens=_count(details, "cacheReadTokens")
        if _count(details, "cacheReadTokens") is not None
        else _count(fields, "cachedInputTokens"),
        cache_write_tokens=_count(details, "cacheWriteTokens")
        if _count(details, "cacheWriteTokens") is not None
        else _count(fields, "cacheWriteInputTokens"),
        reasoning_tokens=_count(fields, "reasoningTokens"),
        native=dict(fields),
    )
    return usage if usage.reported else None


def stop_reason(metadata: Any) -> StopReason | None:
    """The stop reason an end frame's ``metadata`` names (``stopReason``, as llm-rx's own
    encoders write it), if it is one."""
    if isinstance(metadata, Mapping):
        told = metadata.get("stopReason")
        if isinstance(told, str) and told in _STOPS:
            return told  # type: ignore[return-value]  # (checked against the Literal)
    return None


class Parts:
    """The blocks of a reply, each named by the stream's own id for it: opened once, in
    order, closed once; what is open at the end is closed there (a block left open at the
    end of a finished run is closed implicitly)."""

    __slots__ = ("_kinds", "_next", "_open", "_seen")

    def __init__(self) -> None:
        self._open: dict[str, int] = {}  # the stream's id -> the open block's index
        self._kinds: dict[str, BlockKind] = {}
        self._seen: set[str] = set()  # every id that ever opened (a closed one stays closed)
        self._next = 0

    def index(self, key: str) -> int | None:
        """The open block named ``key``, if there is one."""
        return self._open.get(key)

    def kind(self, key: str) -> BlockKind | None:
        return self._kinds.get(key) if key in self._open else None

    def open(self, key: str, kind: BlockKind, out: list[Event], **fields: Any) -> int:
        """Open the block ``key`` names (a key used again, once closed, opens a new one)."""
        index = self._open.get(key)
        if index is not None:
            return index
        index = self._next
        self._next += 1
        self._open[key] = index
        self._kinds[key] = kind
        self._seen.add(key)
        out.append(BlockStart(index, kind, **fields))
        return index

    def block(self, kind: BlockKind, out: list[Event], **fields: Any) -> int:
        """A block that opens and closes at once (a whole result, a part given whole)."""
        index = self._next
        self._next += 1
        out.append(BlockStart(index, kind, **fields))
        out.append(BlockStop(index))
        return index

    def approval(self, out: list[Event], request: Any, name: Any, arguments: Any,
                 **fields: Any) -> None:
        """An approval request, whole (`llm_rx.wire._approvals.approval_events`)."""
        index = self._next
        self._next += 1
        out += approval_events(index, request, name, arguments, **fields)

    def close(self, key: str, out: list[Event]) -> bool:
        """Close the block ``key`` names; whether it was open."""
        index = self._open.pop(key, None)
        if index is None:
            return False
        self._kinds.pop(key, None)
        out.append(BlockStop(index))
        return True

    def close_all(self, out: list[Event]) -> None:
        for key in list(self._open):
            self.close(key, out)
