"""``to_response()``: fold a reply's events into one [`Response`][llm_rx.Response]."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import reactivex
from reactivex import Observable, abc

from .. import speed as fast
from ..events import Event
from ..fold.blocks import appender
from ..fold.builder import ResponseBuilder, fold_error
from ..response import Response
from ..sources import EventSource
from ._fold import Fold
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

    def operator(source: Observable[Event]) -> Observable[Response]:
        def subscribe(
            observer: abc.ObserverBase[Response], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            shared = shared_fold(source)  # (applied to a fan_out: the builder it shares)
            builder = shared.builder if shared is not None else ResponseBuilder(history=False)
            finished = False

            def on_next(event: Event) -> None:
                try:
                    builder.feed(event)
                except Exception as error:  # noqa: BLE001 - a malformed event from upstream
                    finish(fold_error(error))

            def finish(error: Exception | None = None) -> None:
                nonlocal finished
                if finished:  # (the consumer's on_next failed on the response: theirs)
                    if error is not None:
                        observer.on_error(error)
                    return
                finished = True
                if error is not None and not builder.started:
                    observer.on_error(error)
                    return
                try:
                    response = _built(builder, error, shared)
                except Exception as failure:  # noqa: BLE001 - events that do not fold
                    observer.on_error(fold_error(failure))
                    return
                observer.on_next(response)
                observer.on_completed()

            def on_error(error: Exception) -> None:
                finish(error)

            def on_completed() -> None:
                finish()

            if isinstance(source, EventSource) and fast.active():  # a read at a time
                steps = (partial(_fed, shared.feed_all) if shared is not None
                         else partial(_fed_own, builder))
                return source.subscribe_steps(
                    steps, observer.on_next, on_error, on_error, on_completed, scheduler,
                    None if shared is not None else partial(appender, builder),
                )
            return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator


def _fed(
    feed: Callable[[list[Event]], tuple[int, Exception | None]], events: list[Event]
) -> tuple[list[Response], Exception | None]:
    """Feed a read's events (no value before the end; a malformed event ends the reply)."""
    failure = feed(events)[1]
    return [], None if failure is None else fold_error(failure)


def _fed_own(
    builder: ResponseBuilder, events: list[Event]
) -> tuple[list[Response], Exception | None]:
    """Feed a read's events to the operator's own builder (a live stream's read is a frame,
    its events often one: then fed as one)."""
    try:
        if len(events) == 1:
            builder.feed(events[0])
        else:
            builder.feed_all(events)
    except Exception as error:  # noqa: BLE001 - a malformed event from upstream
        return [], fold_error(error)
    return [], None


def _built(builder: ResponseBuilder, error: Exception | None, shared: Fold | None) -> Response:
    """The response (a shared builder is read under its fold's lock: a display's frame may
    be materialised from it on another thread meanwhile)."""
    if shared is None:
        return builder.build(error)
    with shared.lock:
        return builder.build(error)
