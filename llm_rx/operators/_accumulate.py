"""``accumulate()``: an immutable snapshot of the reply after every event."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reactivex import Observable, abc

from ..events import Event
from ..fold.builder import ResponseBuilder, Snapshot, fold_error
from ._adapter import Fold, folded

__all__ = ["accumulate"]


def accumulate() -> Callable[[Observable[Event]], Observable[Snapshot]]:
    """A [`Snapshot`][llm_rx.Snapshot] of the reply so far, after each event.

    ```text
    events:   -S---b---t("Hel")---t("lo")---M-|
    accumulate()
    result:   -s1--s2--s3---------s4--------s5|     s4.text == "Hello"
    ```

    Taking a snapshot costs O(blocks), not O(text): fragments are kept in append-only lists
    and joined only when ``snapshot.response`` is read. The last snapshot's ``response``
    equals what ``to_response()`` gives: when the events end without the reply's end, or
    with an error after the reply started, one more snapshot carries that (``complete``
    false); an error before anything arrived is passed on.
    """
    return folded(_Snapshots)


class _Snapshots(Fold[Snapshot]):
    """One subscription's builder, with history: a snapshot after each event."""

    def __init__(self, _source: Observable[Any], _scheduler: abc.SchedulerBase | None) -> None:
        self._builder = ResponseBuilder()

    def step(self, events: list[Event]) -> tuple[list[Snapshot], Exception | None]:
        snapshots, error = self._builder.advance_all(events)
        return snapshots, None if error is None else fold_error(error)

    def end(self, error: Exception | None) -> tuple[list[Snapshot], Exception | None]:
        # (a read's events that did not fold end the reply, as an upstream error does)
        builder = self._builder
        if error is None:
            return ([builder.snapshot(final=True)] if builder.stop is None else []), None
        if not builder.started:
            return [], error
        return [builder.snapshot(error, final=True)], None
