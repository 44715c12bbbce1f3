"""``sse_response`` never cuts a reply silently: a real uvicorn server on loopback, a producer
that cannot be made to wait (an asyncio task pushing into an observer, on the loop's thread),
and a real client that sends its request and reads nothing until the server gave up on it.
The client then reads the whole body: what was waiting for it, then the target's own error
(an ``error`` chunk the AI SDK reads, ``RUN_ERROR`` that ``ag-ui-validate`` accepts, each
provider wire's error frame, read back by llm-rx's decoder), and the server's log says why.

The sockets' buffers are kept small (the listening socket's send buffer, which accepted
sockets inherit, and the client's receive buffer), so what the kernel holds does not hide
what the response holds."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Iterator
from typing import Any

import h11
import pytest
import reactivex
import uvicorn
from reactivex import abc
from reactivex.disposable import Disposable
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import llm_rx
from llm_rx import sinks as lxs
from llm_rx.encoders import ENCODERS
from llm_rx.events import BlockStart, BlockStop, Event, MessageStart, MessageStop, TextDelta
from llm_rx.serve._server import bind
from llm_rx.sinks import _asgi
from tests.ui_judges import ag_ui_events, ag_ui_report, read_ui_streams

#: One delta's text (a read of the producer): 64 KiB.
PIECE = "x" * (64 * 1024)
#: The most the producer pushes (far past what waits before the server gives up).
CAP = 64 * 1024 * 1024
#: The kernel's buffers, kept small on both sides.
BUFFER = 16 * 1024
WAIT = 60.0


class _Records(logging.Handler):
    """The records of the sinks' logger; ``gave_up`` is set by the first warning."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self.gave_up = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        self.gave_up.set()


def _pushed(records: _Records) -> reactivex.Observable[Event]:
    """A reply pushed by a task on the loop's thread that never waits for room: a delta per
    turn of the loop until the server gave up (or ``CAP`` was pushed), then its end."""

    def subscribe(observer: abc.ObserverBase[Event], scheduler: Any = None) -> Disposable:
        async def push() -> None:
            observer.on_next(MessageStart("anthropic", "m", "msg_1"))
            observer.on_next(BlockStart(0, "text"))
            sent = 0
            while sent < CAP and not records.gave_up.is_set():
                observer.on_next(TextDelta(0, PIECE))
                sent += len(PIECE)
                await asyncio.sleep(0)  # (a turn of the loop: the response may send)
            observer.on_next(BlockStop(0))
            observer.on_next(MessageStop("end_turn"))
            observer.on_completed()

        task = asyncio.get_running_loop().create_task(push())
        return Disposable(task.cancel)

    return reactivex.create(subscribe)


@pytest.fixture(scope="module")
def records() -> Iterator[_Records]:
    handler = _Records()
    logger = logging.getLogger("llm_rx.sinks")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture(scope="module")
def server(records: _Records) -> Iterator[tuple[str, int]]:
    async def reply(request: Request) -> Response:
        return lxs.sse_response(_pushed(records), request.path_params["to"])

    app = Starlette(routes=[Route("/{to}", reply, methods=["GET"])])
    sock = bind("127.0.0.1", 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER)  # (inherited on accept)
    config = uvicorn.Config(app, log_config=None, log_level="warning", lifespan="off")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    yield sock.getsockname()[:2]
    running.should_exit = True
    thread.join(10)
    sock.close()


def _slow_get(address: tuple[str, int], path: str, records: _Records) -> bytes:
    """GET ``path``, read nothing until the server gave up, then the whole body."""
    records.gave_up.clear()
    records.messages.clear()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER)
        client.settimeout(WAIT)
        client.connect(address)
        connection = h11.Connection(h11.CLIENT)
        client.sendall(connection.send(h11.Request(
            method="GET", target=path, headers=[("host", f"{address[0]}:{address[1]}")])))
        client.sendall(connection.send(h11.EndOfMessage()))
        assert records.gave_up.wait(WAIT), "the server never gave up on the slow client"
        body: list[bytes] = []
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(client.recv(1 << 16))
            elif isinstance(event, h11.Response):
                assert event.status_code == 200
            elif isinstance(event, h11.Data):
                body.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                return b"".join(body)


#: The most of the reply's text the client may get: what waited (``OVERFLOW`` and the read
#: that went past it), and what the sockets and the server's transport held.
LIMIT = _asgi.OVERFLOW + 4 * len(PIECE) + 64 * BUFFER


def _check_told(records: _Records, to: str, size: int) -> None:
    """The server said why, and the client got a bounded prefix (``size``) of the reply."""
    (message,) = records.messages
    assert "too slow" in message, message
    assert repr(to) in message, message
    assert 1024 * 1024 < size < LIMIT, size


def test_sse_response_gives_a_slow_client_the_ai_sdks_error_chunk(
    server: tuple[str, int], records: _Records
) -> None:
    body = _slow_get(server, "/vercel-ui", records)
    _check_told(records, "vercel-ui", len(body))
    [read] = read_ui_streams([body])
    assert read["chunks"][-1] == "error", read["chunks"][-5:]
    assert len(read["errors"]) == 1, read["errors"]
    assert "too slow" in read["errors"][0]
    text = "".join(p["text"] for p in read["message"]["parts"] if p["type"] == "text")
    assert set(text) == {"x"}  # (what waited came first)


def test_sse_response_gives_a_slow_client_ag_uis_run_error(
    server: tuple[str, int], records: _Records
) -> None:
    body = _slow_get(server, "/ag-ui", records)
    _check_told(records, "ag-ui", len(body))
    report = ag_ui_report(body)
    assert (report.summary.errors, report.summary.warnings) == (0, 0), report.diagnostics
    last = ag_ui_events(body)[-1]
    assert last["type"] == "RUN_ERROR"
    assert "too slow" in last["message"]


@pytest.mark.parametrize("to", sorted(set(ENCODERS) - {"vercel-ui", "ag-ui"}))
def test_sse_response_gives_a_slow_client_the_wires_error_frame(
    server: tuple[str, int], records: _Records, to: str
) -> None:
    body = _slow_get(server, f"/{to}", records)
    reply = llm_rx.reassemble(body, "gemini" if to == "gemini-json-array" else to)
    _check_told(records, to, len(reply.text))  # (a Responses error repeats the text so far)
    assert not reply.complete
    assert reply.error is not None
    assert reply.error.kind == "provider", reply.error
    assert "too slow" in reply.error.message
    assert set(reply.text) == {"x"}  # (what waited came first)
