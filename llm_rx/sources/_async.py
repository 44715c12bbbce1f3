"""An observable over an async byte iterator (``httpx.Response.aiter_bytes()`` and the like)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable
from typing import Any

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from ..errors import LlmRxError
from ..events import Event
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME
from ._engine import decoded, flushed, source_failed
from ._source import EventSource, Reading

__all__ = ["from_async_bytes"]


class _AsyncSource(EventSource):
    """Events from an async byte iterator, read by a task on the running event loop."""

    def __init__(
        self, chunks: AsyncIterable[bytes], provider: ProviderName | None, max_frame: int
    ) -> None:
        super().__init__(provider, max_frame)
        self._chunks = chunks

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        decoder = self._decoder()
        emit, stopped, end = reading

        async def pump() -> None:
            iterator = self._chunks.__aiter__()
            try:
                while not stopped():
                    try:
                        chunk = await iterator.__anext__()
                    except StopAsyncIteration:
                        break
                    except asyncio.CancelledError:
                        raise
                    except Exception as error:  # the byte source failed: a cut stream
                        raise source_failed(error) from error
                    emit(decoded(decoder, bytes(chunk)))
                else:
                    return
                emit(flushed(decoder))
            except LlmRxError as error:
                emit(getattr(error, "events", []))
                end(error)
                return
            except asyncio.CancelledError:
                raise
            except Exception as error:  # never lost in the task: on_error
                if stopped():  # (delivered already: an on_error that raised)
                    raise
                end(error)
                return
            end(None)

        task: asyncio.Task[Any] = asyncio.get_running_loop().create_task(pump())

        def cancel() -> None:
            task.cancel()

        return Disposable(cancel)


def from_async_bytes(
    chunks: AsyncIterable[bytes],
    provider: ProviderName | None = None,
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Observable[Event]:
    """Events from an async byte iterator, read by a task on the running event loop.

    Subscribe from inside a running loop. Disposing cancels the reading task; nothing is
    emitted after that.
    """
    return _AsyncSource(chunks, provider, max_frame)
