"""from_websocket against a real ``websockets`` server on loopback: the close code and reason
of a socket closed mid-response reach the error, ``idle_timeout`` ends a stalled response
(sync, asyncio, and the openai SDK's connection), and an ``error`` event carrying an HTTP
status 429 is a retryable ProviderError with its wait; the emulator's WebSocket refusals
carry each status's own error type."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import openai
import openresponses_types as spec
import pytest
from websockets.asyncio.client import connect as async_connect
from websockets.sync.client import connect
from websockets.sync.server import ServerConnection, serve

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError, ProviderError, StreamTimeoutError
from llm_rx.response import Response
from llm_rx.serve import EmulatorThread
from llm_rx.wire.messages import MESSAGE_FRAMINGS

from ..captures import capture

TIMEOUT = 10.0
IDLE = 0.3  # (the idle timeout under test: a stall outlasts it, a test waits about this long)
RESPONSES = capture("openai/responses-basic-llm.sse").data
FRAMING = MESSAGE_FRAMINGS["openai-responses"]
MESSAGES = [m for event in RESPONSES.split(b"\n\n") for m in FRAMING.messages(event)]
HEAD = MESSAGES[:5]  # (the response began, no terminal event)
CREATE = json.dumps({"type": "response.create", "model": "m", "input": "hi"})


@contextmanager
def ws_server(script: Callable[[ServerConnection, threading.Event], None]) -> Iterator[str]:
    """A ``websockets`` server on 127.0.0.1 running ``script(connection, released)`` for each
    connection once its ``response.create`` arrived; ``released`` is set at teardown (a
    script that holds waits on it, bounded). Yields the ws:// URL."""
    released = threading.Event()

    def handler(connection: ServerConnection) -> None:
        connection.recv(timeout=TIMEOUT)
        script(connection, released)

    with serve(handler, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        host, port = server.socket.getsockname()[:2]
        try:
            yield f"ws://{host}:{port}/v1/responses"
        finally:
            released.set()
            server.shutdown()
            thread.join(TIMEOUT)


def send_then_close(code: int, reason: str) -> Callable[[ServerConnection, threading.Event], None]:
    def script(connection: ServerConnection, released: threading.Event) -> None:
        for message in HEAD:
            connection.send(message)
        connection.close(code, reason)
    return script


def send_then_hold(connection: ServerConnection, released: threading.Event) -> None:
    for message in HEAD:
        connection.send(message)
    released.wait(TIMEOUT)


def send(*messages: str) -> Callable[[ServerConnection, threading.Event], None]:
    def script(connection: ServerConnection, released: threading.Event) -> None:
        for message in messages:
            connection.send(message)
        released.wait(TIMEOUT)
    return script


def _sync_reply(url: str, **options: Any) -> Response:
    with connect(url, open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        ws.send(CREATE)
        reply: Response = llm_rx.from_websocket(ws, **options).pipe(lxo.to_response()).run()
        return reply


def _async_reply(url: str, **options: Any) -> Response:
    async def main() -> Response:
        async with async_connect(url, open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
            await ws.send(CREATE)
            reply: Response = await llm_rx.from_websocket(ws, **options).pipe(lxo.to_response())
            return reply

    return asyncio.run(asyncio.wait_for(main(), TIMEOUT))


READERS = {"sync": _sync_reply, "asyncio": _async_reply}


# -- the close code and reason ------------------------------------------------------------------


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_from_websocket_a_socket_closed_mid_response_names_its_close_code_and_reason(
    read: Callable[..., Response],
) -> None:
    # bug class: the cut said only that the stream ended, not that the server closed with
    # 1011 "overloaded"
    with ws_server(send_then_close(1011, "overloaded")) as url:
        reply = read(url)
    assert not reply.complete
    assert reply.stop_reason == "interrupted"
    assert reply.error is not None
    assert reply.error.kind == "incomplete"
    assert "close code 1011" in reply.error.message
    assert "'overloaded'" in reply.error.message
    assert reply.text  # (what arrived before the close is kept)


def test_from_websocket_the_close_error_keeps_the_websockets_exception_as_its_cause() -> None:
    errors: list[Exception] = []
    with ws_server(send_then_close(1008, "policy\x1b[2J")) as url, \
            connect(url, open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        ws.send(CREATE)
        llm_rx.from_websocket(ws).subscribe(on_error=errors.append)
    [error] = errors
    assert isinstance(error, IncompleteStreamError)
    assert "close code 1008, reason 'policy\\x1b[2J'" in str(error)  # (the server's text quoted)
    assert type(error.__cause__).__module__.startswith("websockets")


# -- idle_timeout --------------------------------------------------------------------------------


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_from_websocket_idle_timeout_ends_a_stalled_response(
    read: Callable[..., Response],
) -> None:
    with ws_server(send_then_hold) as url:
        reply = read(url, idle_timeout=IDLE)
    assert not reply.complete
    assert reply.error is not None
    assert reply.error.kind == "incomplete"
    assert "no message arrived" in reply.error.message or "in time" in reply.error.message
    assert reply.text


def test_from_websocket_idle_timeout_is_a_stream_timeout_error() -> None:
    errors: list[Exception] = []
    with ws_server(send_then_hold) as url, \
            connect(url, open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        ws.send(CREATE)
        llm_rx.from_websocket(ws, idle_timeout=IDLE).subscribe(on_error=errors.append)
    assert [type(error) for error in errors] == [StreamTimeoutError]


@pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager")
def test_from_websocket_idle_timeout_on_the_openai_sdk_connection() -> None:
    # the SDK's recv_bytes() takes no timeout: the connection is closed when the wait is over
    with ws_server(send_then_hold) as url:
        client = openai.OpenAI(base_url=url.replace("ws://", "http://").removesuffix(
            "/responses"), api_key="k", max_retries=0)
        with client.responses.connect() as connection:
            connection.response.create(model="m", input="hi")
            errors: list[Exception] = []
            events = llm_rx.from_websocket(connection, idle_timeout=IDLE)
            events.subscribe(on_error=errors.append)
        client.close()
    assert [type(error) for error in errors] == [StreamTimeoutError]


def test_from_websocket_idle_timeout_lets_a_steady_response_through() -> None:
    with ws_server(send(*MESSAGES)) as url:
        reply = _sync_reply(url, idle_timeout=TIMEOUT)
    assert reply == llm_rx.reassemble(RESPONSES)


def test_from_websocket_refuses_an_idle_timeout_that_is_no_wait() -> None:
    with pytest.raises(ValueError, match="idle_timeout"):
        llm_rx.from_websocket(object(), idle_timeout=0)


# -- error events with a status ----------------------------------------------------------------


def _error(status: int, error: dict[str, Any]) -> str:
    return json.dumps({"type": "error", "status": status, "error": error})


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_from_websocket_an_error_event_with_status_429_is_retryable(
    read: Callable[..., Response],
) -> None:
    # bug class: a 429 over the socket read as a non-retryable in-band error with no status
    event = _error(429, {"type": "invalid_request_error", "code": None, "param": None,
                         "message": "Rate limit reached", "headers": {"retry-after-ms": "1500"}})
    with ws_server(send(event)) as url:
        reply = read(url)
    assert reply.error is not None
    assert (reply.error.kind, reply.error.retryable) == ("provider", True)


def test_from_websocket_an_error_event_is_a_provider_error_with_status_and_wait() -> None:
    event = _error(503, {"type": "invalid_request_error", "code": None, "param": None,
                         "message": "busy", "headers": {"retry-after": "4"}})
    errors: list[Exception] = []
    with ws_server(send(event)) as url, \
            connect(url, open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        ws.send(CREATE)
        llm_rx.from_websocket(ws).subscribe(on_error=errors.append)
    [error] = errors
    assert isinstance(error, ProviderError)
    assert (error.status, error.retryable, error.retry_after) == (503, True, 4.0)


def test_from_websocket_an_error_event_with_status_400_is_not_retryable() -> None:
    event = _error(400, {"type": "invalid_request_error", "code": "invalid_value",
                         "param": "model", "message": "no such model"})
    errors: list[Exception] = []
    with ws_server(send(event)) as url, \
            connect(url, open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        ws.send(CREATE)
        llm_rx.from_websocket(ws).subscribe(on_error=errors.append)
    [error] = errors
    assert isinstance(error, ProviderError)
    assert (error.status, error.retryable) == (400, False)


@pytest.mark.parametrize(("status", "error_type", "retryable"), [
    (429, "requests", True), (503, "server_error", True), (400, "invalid_request_error", False),
])
def test_the_emulators_websocket_refusal_has_the_statuses_error_type(
    llm_rx_server: EmulatorThread, status: int, error_type: str, retryable: bool,
) -> None:
    url = llm_rx_server.url.replace("http://", "ws://") + "/v1/responses"
    fault = {"x-llm-rx-fault": f"status={status},retry-after=3"}
    with connect(url, additional_headers=fault, open_timeout=TIMEOUT) as ws:
        ws.send(CREATE)
        raw = json.loads(ws.recv(timeout=TIMEOUT))
        ws.send(CREATE)
        errors: list[Exception] = []
        llm_rx.from_websocket(ws).subscribe(on_error=errors.append)
    assert (raw["status"], raw["error"]["type"]) == (status, error_type)
    spec.WebSocketErrorEvent.model_validate(raw)
    [error] = errors
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.retryable) == (status, error_type, retryable)
    if status in (429, 503):
        assert raw["error"]["headers"] == {"retry-after": "3"}
        assert error.retry_after == 3.0
