"""``from_durable_stream(url, provider=...)``: a reply that ``sinks.to_durable_stream(...,
to=<wire>)`` appended as a provider's (or a UI stream's) own bytes, read as the byte pieces
of its answers and decoded like any body of that wire (``from_bytes`` /
``from_async_bytes``): the wire's own end says whether the reply finished, so a stream closed
or abandoned before it is a cut reply. The asking is `_Follower`'s, as for JSON items."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import reactivex
from reactivex import Observable

from ..events import Event
from ..wire.providers import ProviderName
from ._async import from_async_bytes
from ._bytes import from_bytes
from ._durable import _Follower, _transient

__all__ = ["wire_reply"]


def _answered(follower: _Follower, response: Any) -> tuple[bytes, bool, float]:
    """An answer's bytes, whether the stream ends there, and the seconds to wait."""
    wait = follower.judged(response.status_code, response.content)
    if wait is not None:
        return b"", False, wait
    data = response.content if response.status_code == 200 else b""
    if data:
        follower.deadline = time.monotonic() + follower.timeout
    closed = follower.advanced(response.headers)
    return data, closed or (follower.caught_up and not follower.live), 0.0


def _pieces(client: Any, follower: _Follower) -> Iterator[bytes]:
    owned = None
    if client is None:  # (a client of its own, closed when the reading ends)
        import httpx

        client = owned = httpx.Client()
    try:
        while True:
            params, left = follower.request()
            try:
                response = client.get(follower.url, params=params, timeout=left + 5.0)
            except Exception as error:
                if not _transient(error):
                    raise
                time.sleep(follower.failed(type(error).__name__, error))
                continue
            data, ended, wait = _answered(follower, response)
            if data:
                yield data
            if ended:
                return
            if wait:
                time.sleep(wait)
    finally:
        if owned is not None:
            owned.close()


async def _async_pieces(client: Any, follower: _Follower) -> AsyncIterator[bytes]:
    while True:
        params, left = follower.request()
        try:
            response = await client.get(follower.url, params=params, timeout=left + 5.0)
        except Exception as error:
            if not _transient(error):
                raise
            await asyncio.sleep(follower.failed(type(error).__name__, error))
            continue
        data, ended, wait = _answered(follower, response)
        if data:
            yield data
        if ended:
            return
        if wait:
            await asyncio.sleep(wait)


def wire_reply(client: Any, url: str, offset: str, live: bool, timeout: float, retries: int,
               provider: ProviderName, is_async: bool) -> Observable[Event]:
    """The events of a wire's bytes in a Durable Stream (a fresh reading per subscription)."""

    def read(_: Any) -> Observable[Event]:
        follower = _Follower(url, offset, live, timeout, retries)
        if is_async:
            return from_async_bytes(_async_pieces(client, follower), provider)
        return from_bytes(_pieces(client, follower), provider)

    return reactivex.defer(read)
