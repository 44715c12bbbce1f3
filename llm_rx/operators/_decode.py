"""``decode()``: events from an ``Observable[bytes]`` someone else's transport feeds."""

from __future__ import annotations

from collections.abc import Callable

import reactivex
from reactivex import Observable, abc

from ..errors import LlmRxError
from ..events import Event
from ..sources._engine import new_decoder
from ..wire.sse import DEFAULT_MAX_FRAME

__all__ = ["decode"]


def decode(
    provider: str | None = None, *, max_frame: int = DEFAULT_MAX_FRAME
) -> Callable[[Observable[bytes]], Observable[Event]]:
    """Decode byte chunks into events; the provider is sniffed when not given.

    ::

        bytes:   -b"data: {..."-b"...}\\n\\n"-b"data: [DONE]\\n\\n"-|
        decode(provider)
        events:  -----------------S-b-t------------b-E-M---------|

    A new decoder per subscription; a decoding error arrives as ``on_error`` after the events
    decoded before it; EOF (``on_completed``) without the terminal frame is an
    ``IncompleteStreamError``.
    """

    def operator(source: Observable[bytes]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            decoder = new_decoder(provider, max_frame)
            failed = False

            def fail(error: Exception) -> None:
                nonlocal failed
                failed = True
                for event in getattr(error, "events", ()):
                    observer.on_next(event)
                observer.on_error(error)

            def on_next(chunk: bytes) -> None:
                if failed:
                    return
                try:
                    events = decoder.decode(bytes(chunk))
                except LlmRxError as error:
                    fail(error)
                    return
                for event in events:
                    observer.on_next(event)

            def on_completed() -> None:
                if failed:
                    return
                try:
                    events = decoder.flush()
                except LlmRxError as error:
                    fail(error)
                    return
                for event in events:
                    observer.on_next(event)
                observer.on_completed()

            return source.subscribe(on_next, observer.on_error, on_completed, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator
