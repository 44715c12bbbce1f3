"""``accumulate()``: an immutable snapshot of the reply after every event."""

from __future__ import annotations

from collections.abc import Callable

import reactivex
from reactivex import Observable, abc

from .. import speed as fast
from ..errors import LlmRxError
from ..events import Event
from ..fold.builder import ResponseBuilder, Snapshot, fold_error
from ..sources import EventSource

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

    def operator(source: Observable[Event]) -> Observable[Snapshot]:
        def subscribe(
            observer: abc.ObserverBase[Snapshot], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            builder = ResponseBuilder()
            advance = builder.advance
            emit = observer.on_next

            def on_next(event: Event) -> None:
                try:
                    snapshot = advance(event)
                except Exception as error:  # noqa: BLE001 - a malformed event from upstream
                    on_error(fold_error(error))
                    return
                emit(snapshot)

            def on_error(error: Exception) -> None:
                if not builder.started:
                    observer.on_error(error)
                    return
                observer.on_next(builder.snapshot(error, final=True))
                observer.on_completed()

            def advance_all(events: list[Event]) -> tuple[list[Snapshot], Exception | None]:
                snapshots, error = builder.advance_all(events)
                return snapshots, None if error is None else fold_error(error)

            def on_step_error(error: Exception) -> None:
                # A read's events that did not fold end the reply, as an upstream error
                # does; what a consumer's on_next raised is its own, passed on as it is.
                if isinstance(error, LlmRxError):
                    on_error(error)
                else:
                    observer.on_error(error)

            def on_completed() -> None:
                if builder.stop is None:
                    observer.on_next(builder.snapshot(final=True))
                observer.on_completed()

            if isinstance(source, EventSource) and fast.active():  # no hop per event
                return source.subscribe_steps(
                    advance_all, emit, on_step_error, on_error, on_completed, scheduler,
                )
            return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator
