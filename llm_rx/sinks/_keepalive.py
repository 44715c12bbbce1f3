"""Keep-alive comments on an idle SSE response: a ``: keep-alive`` line (an SSE comment, which
every SSE reader skips) whenever nothing was sent for a while, so proxies and load balancers
that close idle connections (often after 30 to 60 s) leave a reply whose model is thinking
alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

__all__ = ["DEFAULT_KEEPALIVE", "KEEPALIVE", "kept_alive"]

#: Seconds without a byte sent after which an SSE response sends a keep-alive comment.
DEFAULT_KEEPALIVE = 15.0
KEEPALIVE = b": keep-alive\n\n"


async def kept_alive(frames: AsyncIterator[bytes], every: float | None) -> AsyncIterator[bytes]:
    """``frames``, with `KEEPALIVE` between two of them when ``every`` seconds pass without
    one (``None``: ``frames`` as they are). The next frame is awaited in a task of its own,
    so the wait that times out never cancels ``frames``; leaving early closes it."""
    if every is None:
        async for frame in frames:
            yield frame
        return
    pending: asyncio.Task[bytes] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(frames))
            done, _ = await asyncio.wait({pending}, timeout=every)
            if not done:
                yield KEEPALIVE
                continue
            try:
                frame = pending.result()
            except StopAsyncIteration:
                return
            finally:
                pending = None
            yield frame
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending
        closing = getattr(frames, "aclose", None)
        if closing is not None:
            await closing()
