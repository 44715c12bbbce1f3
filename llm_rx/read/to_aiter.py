"""``to_aiter``: any observable as an async iterator, on whatever event loop is running.

::

    async for event in llm_rx.to_aiter(events):     # break (or aclose) disposes
        ...

The subscription is made on the running loop (so async sources read there, and time-based
operators downstream get an ``AsyncIOScheduler`` of that loop), at the first ``__anext__``.
Between the observable and the consumer sits one buffer of ``buffer`` items:

- an async source (``from_async_bytes``, ``from_httpx`` on an async response, ``from_sdk`` on
  an async stream, ``from_redis`` on an async client) waits before its next read while the
  buffer is full, so a slow consumer holds the reading back;
- a producer on another thread (``subscribe_on`` / ``observe_on`` a thread pool, a sync
  source read on a thread scheduler given as ``scheduler``) waits in that thread while the
  buffer is full;
- a sync source read on the loop's own thread (``from_bytes``, ``from_file``, a sync httpx
  response with no ``scheduler``) cannot wait without blocking the loop: it is read whole
  as soon as it is subscribed, into the buffer. Its bytes are at hand anyway; to read one
  lazily, pass ``scheduler=ThreadPoolScheduler(1)`` (``reactivex.scheduler``).

An error raises from the ``async for`` after the items before it; the end stops it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Coroutine
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc

from ..sources._engine import consumer_space

__all__ = ["to_aiter"]

_T = TypeVar("_T")


def to_aiter(
    observable: Observable[_T],
    *,
    buffer: int = 256,
    scheduler: abc.SchedulerBase | None = None,
) -> AsyncIterator[_T]:
    """``observable`` as an async iterator: ``async for item in to_aiter(observable)``.

    Works under any running asyncio loop (a Jupyter cell, a FastAPI handler,
    ``asyncio.run``). Leaving the loop early (``break``, an exception, ``aclose()``) disposes
    the subscription, which stops the reading and closes the source; an ``on_error`` raises
    from the loop after the items before it.

    Args:
        observable: Any observable (an llm-rx source, or a pipeline over one).
        buffer: How many items may wait for the consumer. An async source and a producer
            on another thread wait while it is full; a sync source read on the loop's thread
            is read whole when subscribed (see the module's notes).
        scheduler: The subscription's scheduler; ``None``: an ``AsyncIOScheduler`` of the
            running loop.

    Returns:
        An async iterator of the observable's items (also an async context manager).
    """
    if buffer < 1:
        raise ValueError("buffer must be at least 1")
    return _Items(observable, buffer, scheduler)


class _Items(AsyncIterator[_T], Generic[_T]):
    """What the consumer holds. The subscription's callbacks hold only the channel, so the
    consumer's last reference going (``break`` out of ``async for``) disposes at once."""

    def __init__(
        self, observable: Observable[_T], limit: int, scheduler: abc.SchedulerBase | None
    ) -> None:
        self._channel = _Channel(observable, limit, scheduler)

    def __aiter__(self) -> _Items[_T]:
        return self

    async def __aenter__(self) -> _Items[_T]:
        return self

    async def __aexit__(self, *_: object) -> None:
        self._channel.close()

    def __anext__(self) -> Coroutine[Any, Any, _T]:
        return self._channel.next()

    async def aclose(self) -> None:
        """Dispose the subscription (what ``break`` does)."""
        self._channel.close()

    def __del__(self) -> None:
        self._channel.close()


class _Channel(Generic[_T]):
    """The buffer between one subscription and its async consumer."""

    def __init__(
        self, observable: Observable[_T], limit: int, scheduler: abc.SchedulerBase | None
    ) -> None:
        self._observable = observable
        self._limit = limit
        self._scheduler = scheduler
        self._items: deque[_T] = deque()
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)  # (producers on other threads wait here)
        self._ended = False
        self._error: Exception | None = None
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiter: asyncio.Future[None] | None = None  # the consumer, for an item
        self._space: asyncio.Future[None] | None = None  # an async reading, for room
        self._subscription: abc.DisposableBase | None = None

    async def next(self) -> _T:
        if self._loop is None:
            self._start()
        loop = self._loop
        assert loop is not None
        while True:
            with self._lock:
                if self._items:
                    item = self._items.popleft()
                    self._made_room()
                    return item
                if self._closed:
                    raise StopAsyncIteration
                if self._ended:
                    self._closed = True
                    if self._error is not None:
                        error, self._error = self._error, None
                        raise error
                    raise StopAsyncIteration
                waiter = self._waiter = loop.create_future()
            try:
                await waiter
            except asyncio.CancelledError:
                self.close()
                raise

    def close(self) -> None:
        """Dispose the subscription, from any thread."""
        with self._lock:
            if self._closed and self._subscription is None:
                return
            self._closed = True
            self._items.clear()
            subscription, self._subscription = self._subscription, None
            self._room.notify_all()
        self._wake_reading()
        if subscription is not None:
            subscription.dispose()

    def _start(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        if self._scheduler is None:
            from reactivex.scheduler.eventloop import AsyncIOScheduler

            self._scheduler = AsyncIOScheduler(loop)
        token = consumer_space.set(self._wait_for_space)
        try:
            subscription = self._observable.subscribe(
                self._on_next, self._on_error, self._on_completed, scheduler=self._scheduler
            )
        finally:
            consumer_space.reset(token)
        with self._lock:
            if self._closed or self._ended:
                closed = self._closed
            else:
                self._subscription, closed = subscription, False
        if closed:
            subscription.dispose()

    # -- the producer's side ------------------------------------------------------------

    def _on_next(self, item: _T) -> None:
        with self._lock:
            if not self._on_loop():  # (another thread: it waits for room)
                while len(self._items) >= self._limit and not self._closed:
                    self._room.wait()
            if self._closed:
                return
            self._items.append(item)
        self._wake_consumer()

    def _on_error(self, error: Exception) -> None:
        with self._lock:
            self._ended, self._error = True, error
        self._wake_consumer()

    def _on_completed(self) -> None:
        with self._lock:
            self._ended = True
        self._wake_consumer()

    async def _wait_for_space(self) -> None:
        """Awaited by an async reading before each read: room in the buffer (or the end)."""
        loop = self._loop
        assert loop is not None
        while True:
            with self._lock:
                if len(self._items) < self._limit or self._closed:
                    return
                space = self._space = loop.create_future()
            await space

    # -- waking ---------------------------------------------------------------------------

    def _made_room(self) -> None:  # (under the lock)
        self._room.notify()
        if self._space is not None and len(self._items) < self._limit:
            space, self._space = self._space, None
            if not space.done():
                space.set_result(None)

    def _wake_consumer(self) -> None:
        with self._lock:
            future, self._waiter = self._waiter, None
        self._resolve(future)

    def _wake_reading(self) -> None:
        with self._lock:
            future, self._space = self._space, None
        self._resolve(future)

    def _resolve(self, future: asyncio.Future[None] | None) -> None:
        loop = self._loop
        if future is None or loop is None:
            return
        if self._on_loop():
            if not future.done():
                future.set_result(None)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(_settle, future)

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
