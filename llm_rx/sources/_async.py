"""An observable over an async byte iterator (``httpx.Response.aiter_bytes()`` and the like)."""

from __future__ import annotations

import asyncio
import contextvars
import sys
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

__all__ = [
    "NO_LOOP", "RUN_IN_LOOP", "check_async_chunks", "from_async_bytes", "loop_for", "read_async",
    "running_loop",
]


#: What ``.run()`` inside a running loop is told (it would block the loop the reading needs).
RUN_IN_LOOP = (
    "{caller} reads on the event loop that is running in this thread, and .run() would block "
    "that loop forever: `await` the observable instead (`response = await "
    "events.pipe(lxo.to_response())`), or iterate it with "
    "`async for event in llm_rx.to_aiter(events)`"
)
#: What a subscription with no loop to read on is told.
NO_LOOP = (
    "{caller} reads on an asyncio event loop and none runs in this thread: subscribe inside "
    "a coroutine (`await` the observable, or `llm_rx.to_aiter(events)`), or pass "
    "`scheduler=AsyncIOScheduler(loop)` (reactivex.scheduler.eventloop) to read on that loop"
)


def read_async(
    reading: Reading,
    pump: Callable[[], Awaitable[None]],
    on_cancel: Callable[[], None] = lambda: None,
    scheduler: abc.SchedulerBase | None = None,
    caller: str = "this async source",
) -> abc.DisposableBase:
    """Run ``pump`` (which reads and emits) as a task on the event loop, ending ``reading``
    with what it raised; disposing cancels the task (``on_cancel`` runs when the task never
    got to start, so whatever it would have closed is closed anyway).

    The loop is the one running in this thread, or the loop of an asyncio ``scheduler``
    (``AsyncIOScheduler(loop)``: then the subscription may come from any thread, and the task
    starts and is cancelled on that loop's own thread). ``.run()`` called inside a running
    loop is a ``RuntimeError`` at once (see `RUN_IN_LOOP`), as is a subscription with no
    loop at all."""
    loop = loop_for(scheduler, caller)
    started = False
    cancelled = False
    task: asyncio.Task[Any] | None = None

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

    def start() -> None:
        nonlocal task
        if not cancelled:
            task = loop.create_task(run())

    def cancel_here() -> None:
        nonlocal cancelled
        if cancelled:
            return
        if task is not None and _current_task() is task:  # (disposed by a consumer, from
            return  # inside the task: the reading stops before its next read and closes; a
            # cancellation now would interrupt that closing at its first await)
        cancelled = True
        if task is not None:
            task.cancel()
        if not started:
            on_cancel()

    def cancel() -> None:
        if running_loop() is loop:
            cancel_here()
        elif not loop.is_closed():  # (a closed loop ran its tasks to their end already)
            loop.call_soon_threadsafe(cancel_here)

    if running_loop() is loop:
        start()
    else:  # (from another thread, or before the loop runs: the loop's thread starts it)
        loop.call_soon_threadsafe(start, context=contextvars.copy_context())
    return Disposable(cancel)


def loop_for(scheduler: abc.SchedulerBase | None, caller: str) -> asyncio.AbstractEventLoop:
    running = running_loop()
    if running is not None and scheduler is not None and scheduler is _run_scheduler():
        raise RuntimeError(RUN_IN_LOOP.format(caller=caller))
    from reactivex.scheduler.eventloop import AsyncIOScheduler

    given = getattr(scheduler, "_loop", None) if isinstance(scheduler, AsyncIOScheduler) else None
    if isinstance(given, asyncio.AbstractEventLoop):
        return given
    if running is None:
        raise RuntimeError(NO_LOOP.format(caller=caller))
    return running


def _run_scheduler() -> object:
    """The scheduler ``Observable.run()`` subscribes with (``reactivex.run``'s default)."""
    module = sys.modules.get("reactivex.run")
    return getattr(module, "_default_scheduler", _NOTHING)


_NOTHING = object()


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # (no loop runs in this thread)
        return None


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # (no loop runs in this thread)
        return None


class _AsyncSource(EventSource):
    """Events from an async byte iterator, read by a task on the running event loop."""

    def __init__(
        self,
        chunks: AsyncIterable[bytes],
        provider: ProviderName | None,
        max_frame: int,
        caller: str = "from_async_bytes()",
        idle_timeout: float | None = None,
    ) -> None:
        super().__init__(provider, max_frame)
        self._chunks = chunks
        self._caller = caller
        self._idle_timeout = idle_timeout

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        decoder: Decoder = self._decoder()

        async def pump() -> None:
            iterator: AsyncIterator[bytes] = self._chunks.__aiter__()
            await decode_all_async(
                decoder, iterator, reading.emit, reading.stopped, self._idle_timeout,
                reading.fold, self._max_frame,
            )

        return read_async(reading, pump, scheduler=scheduler, caller=self._caller)


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

    Subscribe from inside a running loop (``await`` the observable, or iterate it with
    `llm_rx.to_aiter`), or from anywhere with ``scheduler=AsyncIOScheduler(loop)`` to read
    on that loop; ``.run()`` inside a running loop is a ``RuntimeError`` at once (it would
    block the loop the reading needs). Disposing cancels the reading task; nothing is
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
