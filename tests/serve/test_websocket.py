"""The emulator's WebSocket mode on /v1/responses (DESIGN section 7), read by real clients:
the ``websockets`` package (sync and asyncio) through ``llm_rx.from_websocket``, and the
official openai SDK's ``client.responses.connect()``. Every capture is served over one
socket, one response after another, each event the same JSON the HTTP stream carries.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import openai
import openresponses_types as spec
import pytest
from reactivex import operators as ops
from websockets.asyncio.client import connect as async_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

import llm_rx
from llm_rx import Response
from llm_rx.errors import IncompleteStreamError, ProviderError
from llm_rx.events import Event, MessageStart
from llm_rx.operators import to_response
from llm_rx.serve import EmulatorThread
from llm_rx.wire.messages import MESSAGE_FRAMINGS
from tests.captures import CAPTURES, ONE_REPLY, Capture
from tests.encoders.test_open_responses import DEPARTURES
from tests.open_responses import event_errors, events_of

TIMEOUT = 10.0


def _ws_url(server: EmulatorThread, path: str = "/v1/responses") -> str:
    return server.url.replace("http://", "ws://") + path


def _id(cap: Capture) -> str:
    return cap.name.rsplit(".", 1)[0].replace("/", "__")


@pytest.fixture(scope="module")
def socket(llm_rx_server: EmulatorThread) -> Iterator[ClientConnection]:
    with connect(_ws_url(llm_rx_server), open_timeout=TIMEOUT, close_timeout=TIMEOUT,
                 max_size=None) as ws:
        yield ws


def _create(ws: ClientConnection, model: str, **fields: Any) -> None:
    ws.send(json.dumps({"type": "response.create", "model": model, "input": "hi", **fields}))


_TERMINALS = ("response.completed", "response.incomplete", "response.failed", "error")


def _messages(ws: ClientConnection, last: str | None = None) -> list[dict[str, Any]]:
    """One response's messages, up to its terminal event (``last``: the type that ends it, for
    a recorded stream whose ``error`` event comes before its ``response.failed``)."""
    out: list[dict[str, Any]] = []
    while True:
        out.append(json.loads(ws.recv(timeout=TIMEOUT)))
        if out[-1]["type"] == last or (last is None and out[-1]["type"] in _TERMINALS):
            return out


def _http_events(server: EmulatorThread, cap: Capture) -> list[dict[str, Any]]:
    import httpx

    reply = httpx.post(f"{server.url}/v1/responses", json={"model": _id(cap), "stream": True},
                       timeout=TIMEOUT)
    return list(events_of(reply.content))


SERVED = [cap for cap in ONE_REPLY if not cap.name.endswith(".partial.sse")]  # (one reply each)


@pytest.mark.parametrize("cap", SERVED, ids=lambda cap: cap.name)
def test_every_capture_over_one_socket_is_the_http_stream_s_events(
    cap: Capture, socket: ClientConnection, llm_rx_server: EmulatorThread
) -> None:
    http = _http_events(llm_rx_server, cap)
    _create(socket, _id(cap))
    messages = _messages(socket, http[-1]["type"])
    assert messages == http
    if cap.name not in DEPARTURES:
        assert [error for m in messages for error in event_errors(m)] == []


def _read(ws: ClientConnection) -> Response:
    return llm_rx.from_websocket(ws).pipe(to_response()).run()


def test_from_websocket_reads_one_response_at_a_time(socket: ClientConnection) -> None:
    for name in ("anthropic/thinking-signature.sse", "openai/responses-basic-llm.sse",
                 "gemini/sse-function-call-gemini2.sse"):
        cap = next(c for c in CAPTURES if c.name == name)
        _create(socket, _id(cap))
        got = _read(socket)
        want = llm_rx.reassemble(llm_rx.translate(cap.data, to="openai-responses",
                                                  provider=cap.provider), "openai-responses")
        assert got.complete
        assert got.model_dump() == want.model_dump()


def test_the_capture_header_on_the_upgrade_chooses(llm_rx_server: EmulatorThread) -> None:
    headers = {"x-llm-rx-capture": "openai/responses-basic-llm"}
    with connect(_ws_url(llm_rx_server), additional_headers=headers,
                 open_timeout=TIMEOUT) as ws:
        _create(ws, "any-model")
        assert _read(ws).text == "pong"


def test_an_unknown_capture_is_an_error_message_and_the_socket_stays_open(
    socket: ClientConnection,
) -> None:
    _create(socket, "no-such-capture")
    [error] = _messages(socket)
    spec.WebSocketErrorEvent.model_validate(error)
    assert error["status"] == 404
    socket.send(json.dumps({"type": "session.update"}))
    assert _messages(socket)[0]["status"] == 400
    _create(socket, "openai__responses-basic-llm")
    assert _read(socket).text == "pong"


def test_a_dropped_socket_is_an_interrupted_reply(llm_rx_server: EmulatorThread) -> None:
    with connect(_ws_url(llm_rx_server), additional_headers={"x-llm-rx-fault": "drop-after=2000"},
                 open_timeout=TIMEOUT) as ws:
        _create(ws, "anthropic__text-basic")
        reply = _read(ws)
    assert not reply.complete
    assert reply.stop_reason == "interrupted"


def test_error_after_is_the_in_band_error_event(llm_rx_server: EmulatorThread) -> None:
    with connect(_ws_url(llm_rx_server), additional_headers={"x-llm-rx-fault": "error-after=2000"},
                 open_timeout=TIMEOUT) as ws:
        _create(ws, "anthropic__text-basic")
        messages = _messages(ws)
        assert messages[-1]["type"] == "error"
        assert event_errors(messages[-1]) == []
        _create(ws, "anthropic__text-basic")
        with pytest.raises(ProviderError):
            llm_rx.from_websocket(ws).run()


def test_status_fault_answers_each_request_with_its_error(llm_rx_server: EmulatorThread) -> None:
    with connect(_ws_url(llm_rx_server), additional_headers={"x-llm-rx-fault": "status=429"},
                 open_timeout=TIMEOUT) as ws:
        _create(ws, "anthropic__text-basic")
        [error] = _messages(ws)
        assert error["status"] == 429
        spec.WebSocketErrorEvent.model_validate(error)


def test_stall_holds_the_rest_of_the_response(llm_rx_server: EmulatorThread) -> None:
    import httpx

    body = httpx.post(f"{llm_rx_server.url}/v1/responses",
                      json={"model": "anthropic__text-basic", "stream": True},
                      timeout=TIMEOUT).content
    framing = MESSAGE_FRAMINGS["openai-responses"]
    sizes = [len(m.encode()) for event in body.split(b"\n\n") for m in framing.messages(event)]
    before = next(n for n in range(len(sizes)) if sum(sizes[:n + 1]) > 2000)  # (whole events)
    with connect(_ws_url(llm_rx_server),
                 additional_headers={"x-llm-rx-fault": "stall-after=2000,stall=30"},
                 open_timeout=TIMEOUT) as ws:
        _create(ws, "anthropic__text-basic")
        kinds = [json.loads(ws.recv(timeout=TIMEOUT))["type"] for _ in range(before)]
        assert kinds[0] == "response.created"
        with pytest.raises(TimeoutError):  # (then nothing: the stall holds the rest)
            ws.recv(timeout=0.2)
    assert 0 < before < len(sizes) - 1


def test_only_a_websocket_mode_endpoint_accepts(llm_rx_server: EmulatorThread) -> None:
    with pytest.raises(InvalidStatus):
        connect(_ws_url(llm_rx_server, "/v1/chat/completions"), open_timeout=TIMEOUT)


# The SDK opens its socket the way websockets 17 deprecates (its warning, not ours).
@pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager")
def test_openai_sdk_websocket_client_reads_translated_replies(
    llm_rx_server: EmulatorThread,
) -> None:
    client = openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test", max_retries=0)
    with client.responses.connect() as connection:
        for name, text in (("anthropic__text-basic", None), ("openai__responses-basic-llm",
                                                              "pong")):
            connection.response.create(model=name, input="hi")
            for event in connection:
                if event.type == "response.completed":
                    break
            cap = next(c for c in CAPTURES if _id(c) == name)
            want = llm_rx.reassemble(cap.data, cap.provider).text
            assert event.response.output_text == (text or want)
    client.close()


def test_from_websocket_reads_an_asyncio_connection(llm_rx_server: EmulatorThread) -> None:
    async def main() -> tuple[Response, Response]:
        async with async_connect(_ws_url(llm_rx_server), open_timeout=TIMEOUT) as ws:
            await ws.send(json.dumps({"type": "response.create",
                                      "model": "anthropic__thinking-signature"}))
            first = await llm_rx.from_websocket(ws).pipe(to_response())
            await ws.send(json.dumps({"type": "response.create",
                                      "model": "openai__responses-basic-llm"}))
            second = await llm_rx.from_websocket(ws).pipe(to_response())
            return first, second

    first, second = asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert first.complete
    assert first.thinking
    assert second.text == "pong"


@pytest.fixture
def cut_server(tmp_path: Any) -> Iterator[EmulatorThread]:
    """An emulator serving a Responses capture cut before its terminal event."""
    cap = next(c for c in CAPTURES if c.name == "openai/responses-basic-llm.sse")
    events = cap.data.split(b"\n\n")
    cut = b"\n\n".join(e for e in events if b"response.completed" not in e)
    (tmp_path / "openai").mkdir()
    (tmp_path / "openai" / "responses-cut.partial.sse").write_bytes(cut)
    with EmulatorThread([tmp_path]) as server:
        yield server


def test_a_cut_capture_closes_the_socket_and_is_an_interrupted_reply(
    cut_server: EmulatorThread,
) -> None:
    with connect(_ws_url(cut_server), open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        _create(ws, "openai__responses-cut.partial")
        reply = _read(ws)
        assert ws.close_code == 1011
    assert not reply.complete
    assert reply.stop_reason == "interrupted"
    assert reply.text == "pong"


def test_a_binary_message_is_refused_and_the_socket_stays_open(socket: ClientConnection) -> None:
    socket.send(json.dumps({"type": "response.create", "model": "x"}).encode())
    [error] = _messages(socket)
    spec.WebSocketErrorEvent.model_validate(error)
    assert error["status"] == 400
    assert "binary" in error["error"]["message"]
    _create(socket, "openai__responses-basic-llm")
    assert _read(socket).text == "pong"


def test_a_reading_stopped_early_closes_the_socket(llm_rx_server: EmulatorThread) -> None:
    with connect(_ws_url(llm_rx_server), open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        _create(ws, "anthropic__text-basic")
        first = llm_rx.from_websocket(ws).pipe(ops.take(3), ops.to_list()).run()
        assert [type(event) for event in first][:1] == [MessageStart]
        # (the rest of that response is never taken for the next one's)
        with pytest.raises(ConnectionClosed):
            _create(ws, "openai__responses-basic-llm")
        with pytest.raises(IncompleteStreamError):
            llm_rx.from_websocket(ws).run()


def test_a_reading_stopped_early_closes_an_asyncio_socket(llm_rx_server: EmulatorThread) -> None:
    async def main() -> list[Event]:
        async with async_connect(_ws_url(llm_rx_server), open_timeout=TIMEOUT) as ws:
            await ws.send(json.dumps({"type": "response.create",
                                      "model": "anthropic__text-basic"}))
            taken: list[Event] = await llm_rx.from_websocket(ws).pipe(ops.take(3),
                                                                      ops.to_list())
            await asyncio.wait_for(ws.wait_closed(), TIMEOUT)  # (the reading closes it)
            with pytest.raises(ConnectionClosed):
                await ws.send(json.dumps({"type": "response.create",
                                          "model": "openai__responses-basic-llm"}))
            return taken

    assert len(asyncio.run(asyncio.wait_for(main(), TIMEOUT))) == 3


@pytest.mark.parametrize("cap", [c for c in CAPTURES if c.name.endswith(".partial.sse")],
                         ids=lambda cap: cap.name)
def test_a_partial_capture_over_a_socket_is_never_a_complete_reply(
    cap: Capture, llm_rx_server: EmulatorThread
) -> None:
    with connect(_ws_url(llm_rx_server), open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        _create(ws, _id(cap))
        events: list[Event] = []
        errors: list[Exception] = []
        llm_rx.from_websocket(ws).subscribe(events.append, errors.append)
    assert len(errors) == 1  # (a cut, or the provider's error in band: never finished)
    assert isinstance(errors[0], (IncompleteStreamError, ProviderError))
