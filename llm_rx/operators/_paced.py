"""``paced()``: re-emit a recorded stream at a readable pace, losing nothing at its end."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import reactivex
from reactivex import Notification, Observable, abc
from reactivex import operators as ops
from reactivex.notification import OnNext

__all__ = ["paced"]

_T = TypeVar("_T")


def paced(
    seconds: float, scheduler: abc.SchedulerBase | None = None
) -> Callable[[Observable[_T]], Observable[_T]]:
    """Re-emit each item ``seconds`` after the one before it (the first ``seconds`` after
    it arrived): a recorded reply replayed at a simulated pace.

    ```text
    events:  -S-b-t-#                     events:  -S-b-t-|
    paced(3)                              paced(3)
    result:  ---S--b--t#                  result:  ---S--b--t|
    ```

    Items that arrive faster than the pace wait their turn; an error or the completion comes
    right after the last item, never before it: a stream cut short shows everything that
    arrived, then the error (a plain ``concat_map`` of timers drops the waiting items when
    the source errors). Timers run on ``scheduler``, else on the subscription's scheduler,
    else on a timer thread; disposing cancels the pending ones.

    Args:
        seconds: The time between two items.
        scheduler: The scheduler the timers run on (see above).

    Returns:
        An operator for ``.pipe()``.
    """
    if not seconds >= 0:
        raise ValueError(f"paced() needs seconds >= 0, not {seconds!r}")

    def later(notification: Notification[_T]) -> Observable[Notification[_T]]:
        if isinstance(notification, OnNext):
            return reactivex.timer(seconds, scheduler=scheduler).pipe(
                ops.map(lambda _: notification)
            )
        return reactivex.of(notification)  # the end, once every item before it is out

    operator: Callable[[Observable[_T]], Observable[_T]] = reactivex.compose(
        ops.materialize(), ops.concat_map(later), ops.dematerialize()
    )
    return operator
