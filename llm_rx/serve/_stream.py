"""The HTTP transport of a plan (``_plan.py``): an ASGI response that performs its steps as
a chunked body on the server's loop, watching for the client to go away.

A ``Send`` is a body chunk; a ``Wait`` or ``Stall`` sleeps on the loop (``Pacer``, which the
WebSocket transport shares), cut short when the client goes or the server stops; ``End`` ends
the body. A ``Cut`` (a ``drop-after`` fault) really cuts the connection: the app returns
without the end of the body, and the server closes the socket after the bytes already
written (the client sees a chunked body that never ended, not a clean end). The server logs
that as an app error; the log filter here drops that one line for a cut the request asked
for, and only for it.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Literal

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ._plan import Cut, End, Open, Stall, Step, Wait
from ._plan import Send as Write
from ._stats import Stats

__all__ = ["DropLogFilter", "Pacer", "ReplayResponse", "quiet_refusal"]

Ending = Literal["completed", "disconnected", "dropped"]

_DROPPING: ContextVar[bool] = ContextVar("llm_rx_serve_dropping", default=False)
_INCOMPLETE = "ASGI callable returned without completing response."
_UNSHAKEN = "ASGI callable returned without completing handshake."


class DropLogFilter(logging.Filter):
    """Drops the server's complaint about an unfinished body when the cut was a fault, and
    about an unfinished WebSocket handshake when it was refused with an HTTP answer."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.msg in (_INCOMPLETE, _UNSHAKEN) and _DROPPING.get())


def quiet_refusal() -> None:
    """The app ends this WebSocket with an HTTP answer (a refusal): the server's complaint
    that no handshake completed is dropped."""
    _DROPPING.set(True)


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


class Pacer:
    """A plan's timeline on the running loop, from now: ``wait`` performs a ``Wait`` or a
    ``Stall``, cut short when ``gone`` is set (the client went away, or the server stops)."""

    def __init__(self, gone: asyncio.Event) -> None:
        self._gone = gone
        self._loop = asyncio.get_running_loop()
        self._origin = self._loop.time()

    async def wait(self, step: Wait | Stall) -> bool:
        """Performs ``step``; whether ``gone`` was set first."""
        if isinstance(step, Stall):
            paused = self._loop.time()
            if await _gone_within(self._gone, step.seconds):
                return True
            self._origin += self._loop.time() - paused  # (the pace goes on where it stopped)
            return False
        delay = self._origin + step.until - self._loop.time()
        return delay > 0 and await _gone_within(self._gone, delay)


class ReplayResponse(Response):
    """An ASGI response that performs a plan's ``steps`` after its ``opened`` step: a body
    sent chunk by chunk, at the plan's times, cut where it says; counts how it ended in
    ``stats``."""

    def __init__(
        self,
        opened: Open,
        steps: Iterator[Step],
        *,
        stats: Stats,
        live: set[asyncio.Event],
    ) -> None:
        self.status_code = 200
        self.media_type = opened.media_type
        self.background = None
        self.init_headers(opened.headers)
        self._steps = steps
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
        pacer = Pacer(gone)
        for step in self._steps:
            match step:
                case Write(data):
                    if gone.is_set():
                        return "disconnected"
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                case Wait() | Stall():
                    if await pacer.wait(step):
                        return "disconnected"
                case Cut():
                    return "dropped"
                case End():
                    return "completed"
                case _:
                    raise AssertionError(f"{step!r} once the body began")
        return "completed"
