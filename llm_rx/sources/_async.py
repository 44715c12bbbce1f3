"""An observable over an async byte iterator (``httpx.Response.aiter_bytes()`` and the like)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable
from typing import Any

import reactivex
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from ..errors import LlmRxError
from ..events import Event
from ..wire.sse import DEFAULT_MAX_FRAME
from ._engine import new_decoder, source_failed

__all__ = ["from_async_bytes"]


def from_async_bytes(
    chunks: AsyncIterable[bytes],
    provider: str | None = None,
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Observable[Event]:
    """Events from an async byte iterator, read by a task on the running event loop.

    Subscribe from inside a running loop. Disposing cancels the reading task; nothing is
    emitted after that.
    """

    def subscribe(
        observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        decoder = new_decoder(provider, max_frame)

        async def pump() -> None:
            iterator = chunks.__aiter__()
            try:
                while True:
                    try:
                        chunk = await iterator.__anext__()
                    except StopAsyncIteration:
                        break
                    except asyncio.CancelledError:
                        raise
                    except Exception as error:  # the byte source failed: a cut stream
                        raise source_failed(error) from error
                    for event in decoder.decode(bytes(chunk)):
                        observer.on_next(event)
                for event in decoder.flush():
                    observer.on_next(event)
            except LlmRxError as error:
                for event in getattr(error, "events", ()):
                    observer.on_next(event)
                observer.on_error(error)
                return
            observer.on_completed()

        task: asyncio.Task[Any] = asyncio.get_running_loop().create_task(pump())

        def cancel() -> None:
            task.cancel()

        return Disposable(cancel)

    return reactivex.create(subscribe)
