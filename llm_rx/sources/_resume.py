"""A reading that goes on after a dropped connection: the continuation is read by the same
decoder, from the event after the last whole one, so the reply is the one an unbroken
connection gives.

```text
read(chunk)   ─► the tap (the `Cursor`: last SSE id, last sequence_number) and the body
lost(failure) ─► the connection ended (EOF, or the socket failed): the reply ended there
                 (the decoder finished, an error that is no cut, the tries spent: None), or
                 the wait before asking ``reconnect(cursor)`` for the continuation; the
                 decoder drops the frame cut in half and keeps every state of the reply
```

`Resuming` decides, once; `decode_resuming` and `decode_resuming_async` only move bytes
(the sync and the async reading of ``from_httpx``), as ``_engine``'s two loops do.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any

from ..errors import IncompleteStreamError, LlmRxError, ProviderError
from ..events import Event, MessageStart
from ..wire.base import Decoder, TextFold
from ..wire.resume import Cursor, ResumeTap
from ._body import BodyDecoding
from ._engine import consumer_space, source_failed

__all__ = ["Resuming", "backoff_delay", "decode_resuming", "decode_resuming_async"]

#: The longest wait a provider's ``Retry-After`` on a continuation can ask for (seconds).
_MAX_RETRY_AFTER = 60.0


def backoff_delay(attempt: int, base_delay: float, max_delay: float, draw: float) -> float:
    """The wait after the ``attempt``-th failed attempt (1 first): the exponential backoff,
    capped at ``max_delay``, times a jitter of ``1 - draw / 4`` (``draw`` in ``[0, 1)``)."""
    backoff = min(max_delay, base_delay * 2.0 ** (attempt - 1))
    return backoff * (1.0 - draw / 4)


class Resuming:
    """One reply read over one or more connections (see the module's diagram).

    ``fresh()`` makes a decoder; ``reconnects`` bounds the continuations asked in a row
    without a whole event between them; the waits before them back off from ``delay``
    seconds (jittered, doubling, at most ``max_delay``)."""

    def __init__(
        self,
        fresh: Callable[[], Decoder],
        emit: Callable[[list[Event]], None],
        fold: TextFold | None,
        max_frame: int,
        reconnects: int,
        delay: float,
        max_delay: float = 30.0,
    ) -> None:
        self._fresh = fresh
        self._emit = emit
        self._fold = fold
        self._max_frame = max_frame
        self._reconnects = reconnects
        self._delay = delay
        self._max_delay = max_delay
        self._tries = 0
        self._seen = 0  # whole events when the last connection began
        self._start()

    def _start(self) -> None:
        self.body = BodyDecoding(self._fresh(), self._emitted, self._fold, self._max_frame)
        self.tap = ResumeTap(self._max_frame)

    def _emitted(self, events: list[Event]) -> None:
        tap = self.tap
        if tap.reply_id is None:
            for event in events:
                if type(event) is MessageStart:
                    tap.reply_id = event.id
                    break
        self._emit(events)

    def read(self, chunk: bytes) -> None:
        """One read of the connection."""
        self.tap.read(chunk)
        self.body.read(chunk)

    @property
    def cursor(self) -> Cursor:
        return self.tap.cursor

    @property
    def finished(self) -> bool:
        """The provider's end arrived (a connection that fails after it lost nothing)."""
        return self.body.decoder.settled().finished

    def lost(self, failure: LlmRxError | None) -> float | None:
        """The connection ended (``failure``: how, ``None`` for EOF): the seconds to wait
        before the continuation is asked for, or ``None`` when the reading ends here (then
        ``end`` it, or raise ``failure``)."""
        if failure is not None and not (isinstance(failure, IncompleteStreamError) or (
                isinstance(failure, ProviderError) and failure.retryable)):
            return None  # (a provider's error it would give again, a frame too large)
        if self.finished:
            return None
        decoder = self.body.decoder
        if self.tap.frames > self._seen:
            self._tries = 0  # (the last connection brought something: a new gap)
        self._seen = self.tap.frames
        if self._tries >= self._reconnects:
            if failure is not None:
                failure.add_note(f"from_httpx gave up resuming after {self._tries} "
                                 "reconnections without an event between them (reconnects)")
            return None
        if decoder.settled().reconnected():
            self.tap.reconnected()
        elif decoder.started:
            return None  # (a wire with no event ids: it cannot go on)
        else:  # (nothing of the reply yet: it starts over)
            self._start()
            self._seen = 0
        self._tries += 1
        wait = backoff_delay(self._tries, self._delay, self._max_delay, random.random())
        if self.tap.retry is not None:  # (the stream's own ``retry:``: its reconnection time)
            wait = max(wait, min(self.tap.retry, self._max_delay))
        asked = failure.retry_after if isinstance(failure, ProviderError) else None
        return wait if asked is None else max(wait, min(asked, _MAX_RETRY_AFTER))

    def end(self) -> None:
        """EOF of the last connection: what the decoder still holds."""
        self.body.end()

    def failed(self, error: LlmRxError) -> None:
        self.body.failed(error)


Reopen = Callable[[Cursor], Iterable[bytes]]


def decode_resuming(
    resuming: Resuming,
    chunks: Iterable[bytes],
    stopped: Callable[[], bool],
    reopen: Reopen,
    wait: Callable[[float], object],
) -> None:
    """Read ``chunks``, and after a drop the chunks ``reopen(cursor)`` gives, after
    ``wait(seconds)``, until the reply ends or the reading is ``stopped()``."""
    try:
        while True:
            failure: LlmRxError | None = None
            iterator = iter(chunks)
            try:
                while not stopped():
                    try:
                        chunk = next(iterator)
                    except StopIteration:
                        break
                    except Exception as error:  # noqa: BLE001 - the connection failed
                        failure = source_failed(error)
                        break
                    resuming.read(chunk)
                else:
                    return
            finally:
                if inspect.isgenerator(iterator):
                    iterator.close()
            delay = resuming.lost(failure)
            if delay is None:
                if failure is not None and not resuming.finished:
                    raise failure from failure.__cause__
                resuming.end()
                return
            wait(delay)
            if stopped():
                return
            try:
                chunks = reopen(resuming.cursor)
            except ProviderError as error:  # (a 503 for the continuation: a try of the gap)
                if not error.retryable:
                    raise
                chunks = _refused(error)
    except LlmRxError as error:
        resuming.failed(error)
        raise


async def decode_resuming_async(
    resuming: Resuming,
    chunks: AsyncIterator[bytes],
    stopped: Callable[[], bool],
    reopen: Callable[[Cursor], Awaitable[AsyncIterator[bytes]]],
    idle_timeout: float | None = None,
) -> None:
    """`decode_resuming` for async reads, each bounded by ``idle_timeout`` seconds."""
    space = consumer_space.get()
    try:
        while True:
            failure: LlmRxError | None = None
            while not stopped():
                if space is not None:
                    await space()
                    if stopped():
                        return
                try:
                    async with asyncio.timeout(idle_timeout):
                        chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as error:  # noqa: BLE001 - the connection failed
                    failure = source_failed(error)
                    break
                resuming.read(chunk)
            else:
                return
            await _closed(chunks)
            delay = resuming.lost(failure)
            if delay is None:
                if failure is not None and not resuming.finished:
                    raise failure from failure.__cause__
                resuming.end()
                return
            await asyncio.sleep(delay)
            try:
                chunks = await reopen(resuming.cursor)
            except ProviderError as error:  # (a 503 for the continuation: a try of the gap)
                if not error.retryable:
                    raise
                chunks = _arefused(error)
    except LlmRxError as error:
        resuming.failed(error)
        raise
    finally:
        await _closed(chunks)


def _refused(error: ProviderError) -> Iterator[bytes]:
    """A continuation the provider refused for now: a connection that failed at once."""
    raise error
    yield b""  # (a generator)


async def _arefused(error: ProviderError) -> AsyncIterator[bytes]:
    raise error
    yield b""  # (an async generator)


async def _closed(chunks: Any) -> None:
    close = getattr(chunks, "aclose", None)
    if close is not None:
        await close()
