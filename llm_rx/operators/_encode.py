"""``encode(to)``: a reply's events as the target provider's stream bytes, live."""

from __future__ import annotations

from collections.abc import Callable

import reactivex
from reactivex import Observable, abc

from ..encoders import Encoder, make_encoder
from ..errors import IncompleteStreamError, LlmRxError
from ..events import Dropped, Event
from ..fold.builder import fold_error
from ..sources import EventSource

__all__ = ["encode"]


def encode(
    to: str, *, dropped: list[Dropped] | None = None
) -> Callable[[Observable[Event]], Observable[bytes]]:
    """Encode the events as the stream of the target ``to`` (a key of
    ``llm_rx.encoders.ENCODERS``: a provider id, or one's other form): bytes as soon as
    each event's frame can go out (see the wait table in the translation guide).

    ```text
    events:  -S-b-t---t-e-U-M-|          events:  -S-b-t-#
    encode(P)                            encode(P)
    bytes:   -----x---x-x---y|           bytes:   -----x-#    (no terminal frame)
    ```

    Right after a source (``from_bytes``, ``from_file``, ``decode()``) it runs in the
    source's loop: one ``bytes`` value per read, not per event. After the reply's end come
    the target's terminal frames, then completion. When the events fail, the target's error
    frame (for a provider error; nothing that reads as a finished reply for a cut stream) is
    emitted, then the error is passed on, so a gateway both tells its client and knows.

    What the target cannot carry is not written: each such thing is appended, as a
    [`Dropped`][llm_rx.Dropped], to ``dropped`` (the caller's list; one encoder per
    subscription appends to it) — e.g. ``lost = []; events.pipe(encode(target,
    dropped=lost))``.

    Args:
        to: The target: a key of ``llm_rx.encoders.ENCODERS``.
        dropped: A list to append a `Dropped` to for each thing the target cannot carry.

    Returns:
        An operator for ``.pipe()``.
    """
    make_encoder(to)  # (an unknown target is refused here, not at subscription)

    def operator(source: Observable[Event]) -> Observable[bytes]:
        def subscribe(
            observer: abc.ObserverBase[bytes], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            encoder = make_encoder(to, dropped)

            def steps(events: list[Event]) -> tuple[list[bytes], Exception | None]:
                try:
                    data = encoder.encode(events)
                except Exception as error:  # noqa: BLE001 - a malformed event from upstream
                    return [], fold_error(error)
                return ([data] if data else []), None

            def on_next(event: Event) -> None:
                values, failure = steps([event])
                for value in values:
                    observer.on_next(value)
                if failure is not None:
                    on_error(failure)

            def on_error(error: Exception) -> None:
                _end(encoder, observer, error)

            def on_completed() -> None:
                _end(encoder, observer, None)

            if isinstance(source, EventSource):  # right after a source: a read at a time
                return source.subscribe_steps(
                    steps, observer.on_next, on_error, on_error, on_completed, scheduler
                )
            return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator


def _end(encoder: Encoder, observer: abc.ObserverBase[bytes], error: Exception | None) -> None:
    """The terminal bytes, then completion (or the error, passed on)."""
    if encoder.finished and error is None:
        observer.on_completed()
        return
    typed = error if isinstance(error, LlmRxError) or error is None else (
        IncompleteStreamError(f"the events failed: {type(error).__name__}: {error}"))
    try:
        data = encoder.finish(typed)
    except Exception as failure:  # noqa: BLE001 - the boundary
        observer.on_error(fold_error(failure))
        return
    if data:
        observer.on_next(data)
    if error is not None:
        observer.on_error(error)
    elif encoder.stop is None:  # the events completed without the reply's end: a cut
        observer.on_error(IncompleteStreamError("the events ended before the reply's end"))
    else:
        observer.on_completed()
