"""``fan_out(*operators)``: one read of the events feeding several operators at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reactivex
from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable

from ..events import Event
from ..response import Response
from ._adapter import reads
from ._fold import SharedFold
from ._hub import Hub
from ._notes import gathering

__all__ = ["fan_out"]

Branch = Callable[[Observable[Event]], Observable[Any]]


def fan_out(*branches: Branch) -> Callable[[Observable[Event]], Observable[tuple[Any, ...]]]:
    """Apply every operator in ``branches`` to one upstream subscription; emit the tuple of
    their last values (``None`` for a branch that emitted none) when all have ended.

    ```text
    events:    -S-t-t-U-M-|
    fan_out(terminal_display(), to_response(), cost(), trace())
    result:    -----------(e,R,c,e)|
    ```

    Every branch is subscribed before the upstream is, so all see every event (also over a
    synchronous source), and each gets each read's events as one batch, as right after a
    source: ``to_response()``, ``cost()``, ``trace()`` fold a read at a time, and the live
    displays and ``to_response()`` applied to it share one builder (each still gets a response
    of its own from it). When a branch ends with an error the tuple is still emitted (the
    values of every branch once all ended), then the first error is passed on — except the
    upstream's own error once a branch's ``Response`` carries it: a reply cut short after
    it started gives the tuple with ``to_response()``'s interrupted ``Response`` (its
    ``error`` says why) and completes, as ``to_response()`` alone does. Disposing disposes
    every branch.

    Args:
        *branches: Operators (``to_response()``, ``cost()``, a display, ...), each applied to
            the same events.

    Returns:
        An operator for ``.pipe()``.
    """
    if not branches:
        raise ValueError("fan_out() needs at least one operator")

    def operator(source: Observable[Event]) -> Observable[tuple[Any, ...]]:
        def subscribe(
            observer: abc.ObserverBase[tuple[Any, ...]],
            scheduler: abc.SchedulerBase | None = None,
        ) -> abc.DisposableBase:
            hub: Hub
            lasts: list[Any] = [None] * len(branches)
            pending = [len(branches)]
            errors: list[Exception] = []

            def ended() -> None:
                pending[0] -= 1
                if pending[0]:
                    return
                observer.on_next(tuple(lasts))
                failure = _passed_on(errors, hub.upstream_error(), lasts)
                if failure is not None:
                    observer.on_error(failure)
                else:
                    observer.on_completed()

            def subscribe_branch(number: int, branch: Branch) -> abc.DisposableBase:
                def on_next(value: Any) -> None:
                    lasts[number] = value

                def on_error(error: Exception) -> None:
                    errors.append(error)
                    ended()

                return reads(branch(hub)).subscribe_steps(  # (only the last value of each
                    _last, on_next, on_error, on_error, ended, scheduler)  # read is kept)

            with gathering() as board:  # (a display in one branch shows the others' notes)
                hub = Hub(source, auto_connect=False, board=board,
                          fold=SharedFold())  # (one fold for the displays and the reply)
                subscriptions = [subscribe_branch(n, b) for n, b in enumerate(branches)]
            return CompositeDisposable(*subscriptions, hub.connect(scheduler))

        return reactivex.create(subscribe)

    return operator


def _passed_on(
    errors: list[Exception], upstream: Exception | None, lasts: list[Any]
) -> Exception | None:
    """The error a ``fan_out`` ends with: the first of its branches', but not the upstream's
    when a branch's ``Response`` carries it already (the reply started: it is on the
    ``Response``, as with ``to_response()`` alone)."""
    carried = upstream is not None and any(
        isinstance(value, Response) and value.error is not None for value in lasts
    )
    return next((error for error in errors if not (carried and error is upstream)), None)


def _last(values: list[Any]) -> tuple[list[Any], Exception | None]:
    """The last of a read's values (a branch's last value is all ``fan_out`` keeps)."""
    return values[-1:], None
