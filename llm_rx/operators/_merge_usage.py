"""``merge_usage()``: one running, cumulative ``Usage`` from the usage snapshots."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, compose
from reactivex import operators as ops

from ..events import Event, UsageUpdate
from ..response import Usage

__all__ = ["merge_usage"]


def _is_usage(event: Event) -> bool:
    return type(event) is UsageUpdate


def _overlay(total: Usage, event: Event) -> Usage:
    assert isinstance(event, UsageUpdate)
    return total.overlay(event.usage)


def merge_usage() -> Callable[[Observable[Event]], Observable[Usage]]:
    """The usage so far, each time a snapshot arrives.

    ```text
    events:  -S-u(in=10)-t-u(in=10,out=5)-u(out=7)-M-|
    merge_usage()
    result:  ---U(10,-)------U(10,5)--------U(10,7)----|
    ```

    Snapshots are cumulative: a later one's reported counts replace the earlier ones, its
    unreported counts keep them. Nothing is ever added, and a count nobody reported stays
    ``None``.
    """
    return compose(
        ops.filter(_is_usage),
        ops.scan(_overlay, Usage()),
        ops.distinct_until_changed(),
    )
