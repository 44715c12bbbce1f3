"""Values of a reply that are replaced or appended over time, readable as they were at any
event's sequence number: what makes a :class:`~llm_rx.fold.builder.Snapshot` O(1) to take."""

from __future__ import annotations

from bisect import bisect_right
from typing import Any, Generic, TypeVar

__all__ = ["History", "Latest", "count_at", "overlay", "overlay_into"]

T = TypeVar("T")


class History(Generic[T]):
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


class Latest(History[T]):
    """A replaced value whose history nobody will read (a builder without history): only
    the latest is kept, so a value set on every frame costs nothing that grows."""

    __slots__ = ()

    def __init__(self, initial: T) -> None:  # (no lists of past values)
        self.initial = self.now = initial

    def set(self, seq: int, value: T) -> None:
        self.now = value

    def at(self, seq: int | None) -> T:
        return self.now


def count_at(seqs: list[int], total: int, seq: int | None) -> int:
    """How many items of an append-only list (items numbered by ``seqs``) existed at ``seq``;
    ``seq`` is ``None`` for now, and for a builder that keeps no history."""
    if seq is None:
        return total
    # (items are appended before their numbers: an item appended meanwhile is not counted)
    if not seqs or seqs[-1] <= seq:
        return len(seqs)
    return bisect_right(seqs, seq)

def overlay(old: dict[str, Any], fields: Any) -> dict[str, Any]:
    new = dict(old)
    overlay_into(new, fields)
    return new


def overlay_into(target: dict[str, Any], fields: Any) -> None:
    """Overlay ``fields`` on ``target`` in place (a mapping value is merged into a new one:
    the earlier one may be in a response already given out)."""
    for key, value in fields.items():
        previous = target.get(key)
        if isinstance(previous, dict) and isinstance(value, dict):
            value = {**previous, **value}
        target[key] = value
