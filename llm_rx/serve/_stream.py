"""Sending a recorded body as a provider does: frame by frame at a pace, with the faults the
request asked for, watching for the client to go away.

A ``drop-after`` fault really cuts the connection: the app returns without the end of the
body, and the server closes the socket after the bytes already written (the client sees a
chunked body that never ended, not a clean end). The server logs that as an app error; the
log filter here drops that one line for a cut the request asked for, and only for it.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ._faults import Fault
from ._stats import Stats

__all__ = ["DropLogFilter", "Pacing", "ReplayResponse", "writes"]

Ending = Literal["completed", "disconnected", "dropped"]

_DROPPING: ContextVar[bool] = ContextVar("llm_rx_serve_dropping", default=False)
_INCOMPLETE = "ASGI callable returned without completing response."


class DropLogFilter(logging.Filter):
    """Drops the server's complaint about an unfinished body when the cut was a fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.msg == _INCOMPLETE and _DROPPING.get())


@dataclass(frozen=True)
class Pacing:
    """How fast a body goes out: ``pace`` frames (about one token each) per second, ``0`` as
    fast as it can; no write carries more than ``read_size`` bytes. ``schedule``: the time
    of each piece instead (a recorded timing), in seconds after the first."""

    pace: float = 0.0
    read_size: int = 16 * 1024
    schedule: tuple[float, ...] | None = None


def writes(pieces: Iterable[bytes], pacing: Pacing) -> Iterator[tuple[float, bytes]]:
    """``(seconds after the first byte, bytes)`` of each write of a body cut into frames."""
    size = max(1, pacing.read_size)
    if pacing.schedule is not None:
        for when, piece in zip(pacing.schedule, pieces, strict=False):
            for at in range(0, len(piece), size):
                yield when, piece[at : at + size]
        return
    if pacing.pace <= 0:
        body = b"".join(pieces)
        for at in range(0, len(body), size):
            yield 0.0, body[at : at + size]
        return
    for index, piece in enumerate(pieces):
        for at in range(0, len(piece), size):
            yield index / pacing.pace, piece[at : at + size]


def _split(
    items: Iterable[tuple[float, bytes]], offsets: set[int]
) -> Iterator[tuple[float, bytes]]:
    """The same writes, a write that spans one of ``offsets`` split there."""
    sent = 0
    for when, data in items:
        cuts = sorted(at - sent for at in offsets if sent < at < sent + len(data))
        start = 0
        for cut in [*cuts, len(data)]:
            yield when, data[start:cut]
            start = cut
        sent += len(data)


async def _gone_within(gone: asyncio.Event, seconds: float) -> bool:
    """Waits up to ``seconds``; whether the client went away (or the server stops) first."""
    if math.isinf(seconds):
        await gone.wait()
        return True
    try:
        await asyncio.wait_for(gone.wait(), seconds)
    except TimeoutError:
        return False
    return True


async def _listen(receive: Receive, gone: asyncio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()


class ReplayResponse(Response):
    """An ASGI response that sends ``pieces`` (a body cut into frames) as ``pacing`` says,
    with ``fault``'s drop and stall; counts how it ended in ``stats``."""

    def __init__(
        self,
        pieces: list[bytes],
        *,
        media_type: str,
        pacing: Pacing,
        fault: Fault,
        stats: Stats,
        live: set[asyncio.Event],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.status_code = 200
        self.media_type = media_type
        self.background = None
        self.init_headers(headers)
        self._pieces = pieces
        self._pacing = pacing
        self._fault = fault
        self._stats = stats
        self._live = live

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gone = asyncio.Event()
        self._live.add(gone)
        listener = asyncio.get_running_loop().create_task(_listen(receive, gone))
        try:
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})
            ending = await self._body(send, gone)
        finally:
            listener.cancel()
            self._live.discard(gone)
        self._stats.add(ending)
        if ending == "completed":
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        else:  # returning unfinished makes the server cut the socket: a cut asked for
            _DROPPING.set(True)

    async def _body(self, send: Send, gone: asyncio.Event) -> Ending:
        fault = self._fault
        offsets = {at for at in (fault.drop_after, fault.stall_after) if at is not None}
        loop = asyncio.get_running_loop()
        start, sent, stall_at = loop.time(), 0, fault.stall_after
        for when, data in _split(writes(self._pieces, self._pacing), offsets):
            if stall_at is not None and sent >= stall_at:
                stall_at, paused = None, loop.time()
                if await _gone_within(gone, fault.stall):
                    return "disconnected"
                start += loop.time() - paused  # (the pace goes on from where it stopped)
            if fault.drop_after is not None and sent >= fault.drop_after:
                return "dropped"
            delay = start + when - loop.time()
            if (delay > 0 and await _gone_within(gone, delay)) or gone.is_set():
                return "disconnected"
            await send({"type": "http.response.body", "body": data, "more_body": True})
            sent += len(data)
        if stall_at is not None and await _gone_within(gone, fault.stall):
            return "disconnected"
        return "dropped" if fault.drop_after is not None else "completed"
