"""An observable over an async byte iterator (``httpx.Response.aiter_bytes()`` and the like)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from ..events import Event
from ..wire.base import Decoder
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME
from ._engine import decode_all_async
from ._source import EventSource, Reading, settle

__all__ = ["check_async_chunks", "from_async_bytes", "read_async"]


def read_async(
    reading: Reading,
    pump: Callable[[], Awaitable[None]],
    on_cancel: Callable[[], None] = lambda: None,
) -> abc.DisposableBase:
    """Run ``pump`` (which reads and emits) as a task on the running loop, ending ``reading``
    with what it raised; disposing from outside cancels the task (``on_cancel`` runs when the
    task never got to start, so whatever it would have closed is closed anyway)."""
    started = False

    async def run() -> None:
        nonlocal started
        started = True
        failure: Exception | None = None
        try:
            await pump()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - settled below: never lost in the task
            failure = error
        settle(reading, failure)

    task: asyncio.Task[Any] = asyncio.get_running_loop().create_task(run())

    def cancel() -> None:
        if _current_task() is task:  # (disposed by a consumer, from inside the task: the
            return  # reading stops before its next read and closes; a cancellation now
            # would interrupt that closing at its first await)
        task.cancel()
        if not started:
            on_cancel()

    return Disposable(cancel)


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # (no loop runs in this thread)
        return None


class _AsyncSource(EventSource):
    """Events from an async byte iterator, read by a task on the running event loop."""

    def __init__(
        self, chunks: AsyncIterable[bytes], provider: ProviderName | None, max_frame: int
    ) -> None:
        super().__init__(provider, max_frame)
        self._chunks = chunks

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        decoder: Decoder = self._decoder()

        async def pump() -> None:
            iterator: AsyncIterator[bytes] = self._chunks.__aiter__()
            await decode_all_async(
                decoder, iterator, reading.emit, reading.stopped, fold=reading.fold
            )

        return read_async(reading, pump)


def check_async_chunks(chunks: object, caller: str) -> None:
    """Refuse at the call what is no async iterable of bytes, saying what to pass instead."""
    if hasattr(chunks, "__aiter__"):
        return
    if callable(chunks) and not hasattr(chunks, "__iter__"):
        hint = "a function: pass what it returns (call it)"
    elif isinstance(chunks, (bytes, bytearray, memoryview)) or hasattr(chunks, "__iter__"):
        hint = "a sync iterable: use from_bytes()"
    else:
        hint = type(chunks).__name__
    raise TypeError(f"{caller} takes an async iterable of bytes (such as "
                    f"response.aiter_bytes()), not {hint}")


def from_async_bytes(
    chunks: AsyncIterable[bytes],
    provider: ProviderName | None = None,
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Observable[Event]:
    """Events from an async byte iterator, read by a task on the running event loop.

    Subscribe from inside a running loop. Disposing cancels the reading task; nothing is
    emitted after that. Anything but an async iterable (a function, a sync iterable) is a
    ``TypeError`` here, at the call.

    Args:
        chunks: An async iterator of bytes (``response.aiter_bytes()``, an SDK's raw stream).
        provider: The provider id (or an alias); told from the first frame when ``None``.
        max_frame: The largest frame accepted, in bytes; a larger one is a `FrameTooLargeError`.

    Returns:
        A cold observable of the reply's events, read by a task on the running loop.
    """
    check_async_chunks(chunks, "from_async_bytes()")
    return _AsyncSource(chunks, provider, max_frame)
