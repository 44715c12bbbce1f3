"""``for_key(key)``: one reply back from a bus of ``keyed()`` replies."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import reactivex
from reactivex import Observable
from reactivex import operators as ops
from reactivex.notification import Notification

from ._keyed import Keyed

__all__ = ["for_key"]

_T = TypeVar("_T")


def for_key(key: Hashable) -> Callable[[Observable[Keyed[_T]]], Observable[_T]]:
    """The reply ``key`` names, from a bus of [`keyed()`][llm_rx.operators.keyed] replies:
    its items, then its own end or its own error (RxPY's ``dematerialize``); the other
    replies' items and errors never reach it.

    ```text
    bus:      -a:S-b:S-a:t-b:#-a:t-a:|-
    for_key("a")
    result:   -S-------t-------t---|
    ```

    Args:
        key: The reply's key, as given to ``keyed()``.

    Returns:
        An operator for ``.pipe()``: subscribe it before the reply starts (a ``Subject``
        keeps no past).
    """

    def mine(item: Keyed[_T]) -> bool:
        return item.key == key

    def notification(item: Keyed[_T]) -> Notification[_T]:
        return item.notification

    return reactivex.compose(ops.filter(mine), ops.map(notification), ops.dematerialize())
