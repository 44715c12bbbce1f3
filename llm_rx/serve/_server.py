"""Running the emulator: in a thread of the calling process (tests, the pytest fixture) or as
the ``llm-rx serve`` process, on a socket bound before the server starts.

Binding first gives the real port at once (``--port 0``) and makes the server reachable
before its loop runs: a client that connects early waits in the listen backlog, so nobody
has to poll for readiness.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from collections.abc import Iterable
from types import FrameType, TracebackType

import h11
import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..response import Response
from ._app import CAPTURE_HEADER, Emulator, create_app
from ._faults import FAULT_HEADER, PACE_HEADER, parse_fault
from ._journal import JournalEntry
from ._replies import MAX_BODY
from ._stats import Stats
from ._stream import DropLogFilter

__all__ = ["EmulatorThread", "bind", "serve_forever", "url_of"]


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``0``: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


#: Seconds a connection may take to send a request's head (line and headers) whole.
HEAD_TIMEOUT = 10.0
#: The largest request head accepted, in bytes (larger: 400).
MAX_HEAD = 64 * 1024


class _Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head has not arrived whole
    ``HEAD_TIMEOUT`` seconds after it opened or after its last response (uvicorn itself
    waits for it forever; its keep-alive timer stops at the first byte)."""

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        super().connection_lost(exc)

    def _await_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT, self._head_late)

    def _head_late(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


class _Server(uvicorn.Server):
    """uvicorn's server, stopping on SIGINT/SIGTERM with exit status 0: the streams being
    sent are ended first, and the signal is not raised again after the shutdown."""

    def __init__(self, app: Starlette, *, graceful: float = 2.0) -> None:
        config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                                lifespan="off", timeout_graceful_shutdown=int(graceful) or 1,
                                http=_Protocol, h11_max_incomplete_event_size=MAX_HEAD,
                                timeout_keep_alive=5)
        super().__init__(config)
        self._emulator: Emulator | None = getattr(app.state, "emulator", None)
        self._recorder = getattr(app.state, "recorder", None)  # (llm-rx record's proxy)
        logging.getLogger("uvicorn.error").addFilter(DropLogFilter())

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.should_exit = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._emulator is not None:
            self._emulator.stop_streams()
        await super().shutdown(sockets=sockets)
        if self._recorder is not None:
            await self._recorder.aclose()


def serve_forever(app: Starlette, sock: socket.socket) -> None:
    """Serves ``app`` on ``sock`` in this (main) thread until SIGINT or SIGTERM."""
    _Server(app).run(sockets=[sock])


class _FaultScope:
    """A standing fault already set; as a context manager, the one before comes back at
    the end of the block."""

    def __init__(self, emulator: Emulator, before: str | None) -> None:
        self._emulator = emulator
        self._before = before

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self._emulator.fault = self._before


class EmulatorThread:
    """The emulator on 127.0.0.1 in a background thread: ``url``, ``stats``, ``stop()``.

    ::

        with EmulatorThread(["tests/captures"]) as server:
            httpx.post(f"{server.url}/v1/messages", json={"model": "anthropic__text-basic"})
    """

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]] | None = None,
        *,
        pace: float = 0.0,
        read_size: int = 16 * 1024,
        host: str = "127.0.0.1",
        port: int = 0,
        replay_speed: float | None = None,
        max_body: int = MAX_BODY,
    ) -> None:
        self.app = create_app(paths, pace=pace, read_size=read_size, replay_speed=replay_speed,
                              max_body=max_body)
        self._sock = bind(host, port)
        self.url = url_of(self._sock)
        self._server = _Server(self.app)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="llm-rx-serve", daemon=True)
        self._thread.start()

    @property
    def emulator(self) -> Emulator:
        emulator: Emulator = self.app.state.emulator
        return emulator

    @property
    def stats(self) -> Stats:
        return self.emulator.stats

    @property
    def captures(self) -> list[str]:
        """The ids of the captures served (a request's model names one)."""
        return self.emulator.index.ids

    def headers(self, capture: str | None = None, *, fault: str | None = None,
                pace: float | None = None) -> dict[str, str]:
        """Request headers that pick ``capture`` (whatever the model), ask for ``fault``
        (``"drop-after=200"``) or set the pace: pass them as a client's extra headers."""
        out: dict[str, str] = {}
        if capture is not None:
            out[CAPTURE_HEADER] = capture
        if fault is not None:
            out[FAULT_HEADER] = fault
        if pace is not None:
            out[PACE_HEADER] = f"{pace:g}"
        return out

    def queue(self, *replies: Response) -> None:
        """Answers the next requests, on any endpoint and in any wire, streamed or not, with
        ``replies`` in order (``llm_rx.testing.reply(...)``); then the captures answer again."""
        self.emulator.script.put(replies)

    @property
    def requests(self) -> list[JournalEntry]:
        """Every request received, oldest first: ``.method``, ``.path``, ``.headers``,
        ``.json`` (the parsed body) and ``.query``."""
        return self.emulator.journal.entries()

    def fault(self, spec: str | None) -> _FaultScope:
        """Gives every request without its own ``x-llm-rx-fault`` header the fault ``spec``
        (``"malformed"``, ``"status=429"``, ``"drop-after=200"``; ``None``: none), until
        :meth:`reset` or, used as ``with server.fault(...):``, the end of the block."""
        if spec is not None:
            parse_fault(spec)  # (a spec that does not parse is refused here, not per request)
        before, self.emulator.fault = self.emulator.fault, spec
        return _FaultScope(self.emulator, before)

    def reset(self) -> None:
        """Forgets the queued replies, the journal and the standing fault (the pytest plugin
        calls it after each test that used the server)."""
        self.emulator.reset()

    def stop(self, timeout: float = 10.0) -> None:
        """Stops the server (ending the streams it is sending) and waits for its thread."""
        self._server.should_exit = True
        self._thread.join(timeout)
        self._sock.close()

    def __enter__(self) -> EmulatorThread:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
