"""``keyed(key)``: one reply's items and its end as values tagged with the reply's key, for a
bus that several concurrent replies share."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, NamedTuple, TypeVar

import reactivex
from reactivex import Observable
from reactivex import operators as ops
from reactivex.notification import Notification

__all__ = ["Keyed", "keyed"]

_T = TypeVar("_T")


class Keyed(NamedTuple, Generic[_T]):
    """One reply's item, error or end on a shared bus: ``key`` names the reply,
    ``notification`` is RxPY's ``Notification`` (``kind`` ``"N"`` with ``value``, ``"E"``
    with ``exception``, ``"C"``)."""

    key: Hashable
    notification: Notification[_T]


def keyed(key: Hashable) -> Callable[[Observable[_T]], Observable[Keyed[_T]]]:
    """Tag each item of a reply with ``key`` and turn its end and its error into values too
    (RxPY's ``materialize``), so one reply's error travels on a shared bus as a value and
    never ends the bus for the other replies' consumers.

    ```text
    reply:    -S-t-t-#              (# an error)
    keyed("a")
    result:   -a:S-a:t-a:t-a:#|     (each a Keyed; the error is a value, then the end)
    ```

    Subscribe a bus's ``on_next`` (not the bus itself, whose ``on_completed`` would end it
    at the first reply's end): ``reply.pipe(lxo.keyed(key)).subscribe(bus.on_next)``; a
    consumer of one reply takes it back with [`for_key(key)`][llm_rx.operators.for_key].

    Args:
        key: What names the reply on the bus (any hashable: a request id, a tab, a user).

    Returns:
        An operator for ``.pipe()``.
    """

    def tag(notification: Notification[_T]) -> Keyed[_T]:
        return Keyed(key, notification)

    return reactivex.compose(ops.materialize(), ops.map(tag))
