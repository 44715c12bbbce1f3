"""``decode()``: events from an ``Observable[bytes]`` someone else's transport feeds."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, abc
from reactivex.disposable import SingleAssignmentDisposable

from ..errors import LlmRxError
from ..events import Event, MessageStop
from ..sources import EventSource
from ..sources._body import BodyDecoding
from ..sources._source import Reading, under
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME

__all__ = ["decode"]


def decode(
    provider: ProviderName | None = None, *, max_frame: int = DEFAULT_MAX_FRAME
) -> Callable[[Observable[bytes]], Observable[Event]]:
    """Decode byte chunks into events; the provider is sniffed when not given.

    ```text
    bytes:   -b"data: {..."-b"...}\\n\\n"-b"data: [DONE]\\n\\n"-|
    decode(provider)
    events:  -----------------S-b-t------------b-E-M---------|
    ```

    A new decoder per subscription; a decoding error arrives as ``on_error`` after the events
    decoded before it; EOF (``on_completed``) without the terminal frame is an
    ``IncompleteStreamError``.

    The events complete at the reply's end (its terminal frame, ``MessageStop``), whether
    or not the byte source completes, and the subscription to it is then disposed: on a
    long-lived bus (a ``Subject`` that stays open, or carries more replies) each reply can be
    folded with ``to_response()``. One ``decode()`` subscription decodes one reply; for the
    next reply on the same bus, subscribe again, or ``repeat()`` the pipeline:

    ```python
    replies = bus.pipe(lxo.decode(), lxo.to_response(), ops.repeat())
    ```

    Bytes after the end in the same chunk are not part of the reply and are not given (a
    transport that pushes several replies cuts its chunks at their ends; to read every reply
    of one stream, decode it with a source and split it with ``responses()``). A reply whose end
    is known only at EOF (a host that sends no terminal frame) ends when the source completes;
    so does a non-stream body (one JSON object), read then as the reply it is, as every
    source reads it (the chunks mean what they mean to ``from_bytes``: one reading state
    machine decodes them).

    Args:
        provider: The provider id (or an alias); told from the first frame when ``None``.
        max_frame: The largest frame accepted, in bytes; a larger one is a `FrameTooLargeError`.

    Returns:
        An operator for ``.pipe()``.
    """

    def operator(source: Observable[bytes]) -> Observable[Event]:
        return _Decoded(source, provider, max_frame)

    return operator


class _Decoded(EventSource):
    """The events of the byte chunks an upstream observable gives (``decode()``)."""

    def __init__(
        self, source: Observable[bytes], provider: ProviderName | None, max_frame: int
    ) -> None:
        super().__init__(provider, max_frame)
        self._source = source

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        emit, stopped, end = reading.emit, reading.stopped, reading.end  # (every event emitted)
        shortcuts = reading.shortcuts  # (the bytes may be pushed from any thread or task)
        upstream = SingleAssignmentDisposable()  # (assigned after a synchronous source too)
        over = False  # the reply ended: its terminal frame, an error, or the source's end

        def finish(error: Exception | None) -> None:
            nonlocal over
            over = True
            end(error)
            upstream.dispose()  # a bus that stays open is not listened to after the end

        def emitted(events: list[Event]) -> None:
            if over:
                return
            if decoder.settled().several:  # (a read may hold the next response: not this one's)
                kinds = [*map(type, events)]  # (looked through at C level: one per read)
                if MessageStop in kinds:
                    events = events[: kinds.index(MessageStop) + 1]
            emit(events)
            if events and events[-1].__class__ is MessageStop:  # (the last event of a reply)
                finish(None)

        # The reads mean what they mean to every source: one state machine reads them.
        decoder = self._decoder()
        body = BodyDecoding(decoder, emitted, max_frame=self._max_frame)

        def fail(error: LlmRxError) -> None:
            body.failed(error)
            if not over:
                finish(error)

        def on_next(chunk: bytes) -> None:
            if over or stopped():
                return
            try:
                under(shortcuts, body.read, chunk)
            except LlmRxError as error:
                fail(error)

        def on_error(error: Exception) -> None:
            if not over:
                finish(error)

        def on_completed() -> None:
            if over:
                return
            try:
                under(shortcuts, body.end)
            except LlmRxError as error:
                fail(error)
                return
            if not over:
                finish(None)

        upstream.disposable = self._source.subscribe(
            on_next, on_error, on_completed, scheduler=scheduler
        )
        return upstream

