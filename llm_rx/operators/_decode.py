"""``decode()``: events from an ``Observable[bytes]`` someone else's transport feeds."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, abc

from ..errors import LlmRxError
from ..events import Event
from ..sources import EventSource
from ..sources._source import Reading
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
        return _Decoded(source, provider, max_frame)

    return operator


class _Decoded(EventSource):
    """The events of the byte chunks an upstream observable gives (``decode()``)."""

    def __init__(self, source: Observable[bytes], provider: str | None, max_frame: int) -> None:
        super().__init__(provider, max_frame)
        self._source = source

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        decoder = self._decoder()
        emit, stopped, end = reading
        failed = False

        def fail(error: LlmRxError) -> None:
            nonlocal failed
            failed = True
            emit(getattr(error, "events", []))
            end(error)

        def on_next(chunk: bytes) -> None:
            if failed or stopped():
                return
            try:
                events = decoder.decode(bytes(chunk))
            except LlmRxError as error:
                fail(error)
                return
            emit(events)

        def on_error(error: Exception) -> None:
            if not failed:
                end(error)

        def on_completed() -> None:
            if failed:
                return
            try:
                events = decoder.flush()
            except LlmRxError as error:
                fail(error)
                return
            emit(events)
            end(None)

        return self._source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)
