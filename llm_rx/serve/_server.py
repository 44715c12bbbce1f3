"""Running the emulator: in a thread of the calling process (tests, the pytest fixture) or as
the ``llm-rx serve`` process, on a socket bound before the server starts.

Binding first gives the real port at once (``--port 0``) and makes the server reachable
before its loop runs: a client that connects early waits in the listen backlog, so nobody
has to poll for readiness.

At most ``max_connections`` connections (HTTP and WebSocket) are open at once: one more is
answered ``503`` with ``Retry-After`` as soon as it is accepted, before it sends anything,
and closed once its client has read it (at most as many again wait so; past those a
connection is reset at once). A file descriptor per idle connection would otherwise run out:
the open-file limit, then every ``accept`` failing. A WebSocket message is at most
``--max-body`` bytes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterable
from types import FrameType, TracebackType
from typing import ClassVar

import h11
import orjson
import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..response import Response
from ._app import CAPTURE_HEADER, Emulator, create_app
from ._defaults import (
    IDLE_TIMEOUT,
    JOURNAL_BUDGET,
    MAX_BODY,
    MAX_CONNECTIONS,
    default_max_connections,
)
from ._faults import FAULT_HEADER, PACE_HEADER, parse_fault
from ._journal import JournalEntry
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
#: Seconds a connection past the cap is kept for its client to read the 503.
LINGER = 1.0


def _busy_answer(limit: int) -> bytes:
    body = orjson.dumps({"error": {"message": f"{limit} connections are open, the most this "
                                   "server keeps (--max-connections): try again",
                                   "type": "overloaded_error"}})
    return (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\nretry-after: 1\r\nconnection: close\r\n\r\n%s"
            % (len(body), body))


class _Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head has not arrived whole
    ``HEAD_TIMEOUT`` seconds after it opened or after its last response (uvicorn itself
    waits for it forever; its keep-alive timer stops at the first byte), and answering 503
    to a connection made while ``limit`` are open (``_Server`` sets ``limit``, and the
    ``stats`` that count them as ``busy``)."""

    limit: ClassVar[int] = MAX_CONNECTIONS
    stats: ClassVar[Stats | None] = None
    _head_timer: asyncio.TimerHandle | None = None
    _refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.limit:
            self._refuse(transport)
            return
        super().connection_made(transport)
        self._await_head()

    def _refuse(self, transport: asyncio.Transport) -> None:
        """The 503, half-closed; the connection ends when the client closes its side or after
        ``LINGER`` seconds (closing at once could reset it before its request was read, and
        the client would see a reset in place of the answer)."""
        self._refused = True
        self.transport = transport
        if self.stats is not None:
            self.stats.add("busy")
        if len(self.connections) >= 2 * self.limit:  # (as many again wait for their 503)
            transport.abort()
            return
        self.connections.add(self)
        transport.write(_busy_answer(self.limit))
        if transport.can_write_eof():
            transport.write_eof()
        self._head_timer = self.loop.call_later(LINGER, transport.close)

    def data_received(self, data: bytes) -> None:
        if not self._refused:
            super().data_received(data)

    def eof_received(self) -> None:
        if self._refused:
            self.transport.close()

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

    def __init__(self, app: Starlette, *, graceful: float = 2.0,
                 max_connections: int | None = None, max_message: int = MAX_BODY) -> None:
        self._emulator: Emulator | None = getattr(app.state, "emulator", None)
        self._recorder = getattr(app.state, "recorder", None)  # (llm-rx record's proxy)
        stats = self._emulator.stats if self._emulator is not None else None
        protocol = type("_Protocol", (_Protocol,), {
            "limit": max_connections or default_max_connections(),
            "stats": stats})
        config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                                lifespan="off", timeout_graceful_shutdown=int(graceful) or 1,
                                http=protocol, h11_max_incomplete_event_size=MAX_HEAD,
                                timeout_keep_alive=5, ws_max_size=max_message)
        super().__init__(config)
        logging.getLogger("uvicorn.error").addFilter(DropLogFilter())

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.should_exit = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._emulator is not None:
            self._emulator.stop_streams()
        await super().shutdown(sockets=sockets)
        if self._recorder is not None:
            await self._recorder.aclose()


def serve_forever(app: Starlette, sock: socket.socket, *, max_connections: int | None = None,
                  max_message: int = MAX_BODY) -> None:
    """Serves ``app`` on ``sock`` in this (main) thread until SIGINT or SIGTERM."""
    _Server(app, max_connections=max_connections, max_message=max_message).run(sockets=[sock])


class _Scope:
    """A setting already made; as a context manager, ``restore`` puts back the one before at
    the end of the block."""

    def __init__(self, restore: Callable[[], None]) -> None:
        self._restore = restore

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self._restore()


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
        allow_hosts: Iterable[str] = (),
        keep_credentials: bool = False,
        journal_budget: int = JOURNAL_BUDGET,
        max_connections: int | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self.app = create_app(paths, pace=pace, read_size=read_size, replay_speed=replay_speed,
                              max_body=max_body, allow_hosts=[host, *allow_hosts],
                              keep_credentials=keep_credentials, journal_budget=journal_budget,
                              idle_timeout=idle_timeout)
        self._sock = bind(host, port)
        self.url = url_of(self._sock)
        self._server = _Server(self.app, max_connections=max_connections, max_message=max_body)
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

    def fault(self, spec: str | None) -> _Scope:
        """Gives every request without its own ``x-llm-rx-fault`` header the fault ``spec``
        (``"malformed"``, ``"status=429"``, ``"drop-after=200"``; ``None``: none), until
        :meth:`reset` or, used as ``with server.fault(...):``, the end of the block."""
        if spec is not None:
            parse_fault(spec)  # (a spec that does not parse is refused here, not per request)
        emulator = self.emulator
        before, emulator.fault = emulator.fault, spec

        def restore() -> None:
            emulator.fault = before

        return _Scope(restore)

    def keep_credentials(self, keep: bool = True) -> _Scope:
        """The journal keeps the credentials of the requests that come next whole (not
        redacted), for a test that must assert the exact key; until :meth:`reset` or, used
        as ``with server.keep_credentials():``, the end of the block."""
        journal = self.emulator.journal
        before, journal.keep_credentials = journal.keep_credentials, keep

        def restore() -> None:
            journal.keep_credentials = before

        return _Scope(restore)

    def reset(self) -> None:
        """Forgets the queued replies, the journal, the standing fault and a
        :meth:`keep_credentials` (the pytest plugin calls it after each test that used the
        server)."""
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
