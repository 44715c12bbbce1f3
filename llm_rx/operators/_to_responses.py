"""``to_responses()``: every response a stream carries, each folded to its ``Response``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reactivex
from reactivex import Observable, abc
from reactivex import operators as ops

from ..events import Event, MessageStart, MessageStop
from ..response import Response
from ._responses import responses
from ._to_response import to_response

__all__ = ["to_responses"]


def to_responses() -> Callable[[Observable[Event]], Observable[list[Response]]]:
    """Every response on the stream (split as [`responses()`][llm_rx.operators.responses]
    splits it), each folded as `to_response()` folds one, in order.

    ```text
    events:    -S1-t-M-S2-t-#
    to_responses()
    result:    -------------[R1, R2]|    (R2: complete=False, its error set)
    ```

    An error while a response is open ends that response (its ``Response`` says it, as
    `to_response()`'s does); an error before any, or between two (after one's stop, before
    the next one's start), is passed on as ``on_error``.

    Returns:
        An operator for ``.pipe()``: one list, when the stream ends.
    """

    def operator(source: Observable[Event]) -> Observable[list[Response]]:
        def per_subscription(_scheduler: abc.SchedulerBase | None) -> Observable[list[Response]]:
            # (state per subscription, as responses() splits: once an event came, whether
            # a response is open; an error then is that response's)
            state: list[bool] = []

            def track(event: Event) -> None:
                if isinstance(event, MessageStop):
                    state[:] = [False]
                elif not state or isinstance(event, MessageStart):
                    state[:] = [True]

            def caught(error: Exception, _: Any) -> Observable[Observable[Event]]:
                # (the open response carries the error into its Response already)
                return reactivex.empty() if state and state[0] else reactivex.throw(error)

            def each(response: Observable[Event]) -> Observable[Response]:
                return response.pipe(to_response())

            return source.pipe(ops.do_action(track), responses(), ops.catch(caught),
                               ops.concat_map(each), ops.to_list())

        return reactivex.defer(per_subscription)

    return operator
