"""``to_response()``: fold a reply's events into one [`Response`][llm_rx.Response]."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from reactivex import Observable, abc

from ..events import Event
from ..fold.blocks import appender
from ..fold.builder import ResponseBuilder, fold_error
from ..response import Response
from ._adapter import Fold, folded
from ._fold import SharedFold
from ._hub import shared_fold

__all__ = ["to_response"]


def to_response() -> Callable[[Observable[Event]], Observable[Response]]:
    """Emit the assembled ``Response`` once, when the events end.

    ```text
    events:    -S-b-t-t-e-U-M-|        events:  -S-b-t-t-#
    to_response()                      to_response()
    result:    ---------------R|       result:  ---------R|   (complete=False, error set)
    ```

    A stream that errors after its reply started still gives a ``Response`` (marked
    interrupted or error, with what arrived); an error before anything arrived (not a stream
    at all, a failed connection) is passed on as ``on_error``.
    """
    return folded(_Reply)


class _Reply(Fold[Response]):
    """One subscription's builder: its own, or, applied to a ``fan_out()``, the one its hub
    feeds (then read under that fold's lock: a display's frame may be materialised from it
    on another thread meanwhile)."""

    def __init__(self, source: Observable[Any], _scheduler: abc.SchedulerBase | None) -> None:
        self._shared = shared = shared_fold(source)
        self._builder = builder = (
            shared.builder if shared is not None else ResponseBuilder(history=False))
        if shared is None:  # (the events only go to this builder: a string may, directly)
            self.text = partial(appender, builder)

    def step(self, events: list[Event]) -> tuple[list[Response], Exception | None]:
        """Feed a read's events (no value before the end; a malformed event ends the reply).
        Every read goes through ``feed_all``, a live read of one event too: it keeps a long
        reply's parts joined (bounded memory)."""
        if self._shared is not None:
            failure = self._shared.feed_all(events)[1]
            return [], None if failure is None else fold_error(failure)
        try:
            self._builder.feed_all(events)
        except Exception as error:  # noqa: BLE001 - a malformed event from upstream
            return [], fold_error(error)
        return [], None

    def end(self, error: Exception | None) -> tuple[list[Response], Exception | None]:
        builder = self._builder
        if error is not None and not builder.started:
            return [], error
        try:
            response = _built(builder, error, self._shared)
        except Exception as failure:  # noqa: BLE001 - events that do not fold
            return [], fold_error(failure)
        return [response], None


def _built(
    builder: ResponseBuilder, error: Exception | None, shared: SharedFold | None
) -> Response:
    if shared is None:
        return builder.build(error)
    with shared.lock:
        return builder.build(error)
