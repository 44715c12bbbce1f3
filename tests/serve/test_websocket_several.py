"""``from_websocket(ws, responses=...)``: several responses read from one socket of the
emulator's WebSocket mode, one after another (``websockets`` sync and asyncio, and the openai
SDK's ``client.responses.connect()``), split with ``lxo.responses()`` / ``to_responses()``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pytest
from reactivex import operators as ops
from websockets.asyncio.client import connect as async_connect
from websockets.sync.client import ClientConnection, connect

import llm_rx
from llm_rx import Response
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError
from llm_rx.events import MessageStop
from llm_rx.serve import EmulatorThread
from tests.captures import CAPTURES, HERE

TIMEOUT = 10.0
NAMES = ("openai__responses-basic-llm", "anthropic__text-basic", "openai__responses-function-call")


def _url(server: EmulatorThread) -> str:
    return server.url.replace("http://", "ws://") + "/v1/responses"


def _create(ws: ClientConnection, model: str) -> None:
    ws.send(json.dumps({"type": "response.create", "model": model, "input": "hi"}))


def _want(name: str) -> Response:
    cap = next(c for c in CAPTURES if c.name.rsplit(".", 1)[0].replace("/", "__") == name)
    body = llm_rx.translate(cap.data, to="openai-responses", provider=cap.provider)
    return llm_rx.reassemble(body, "openai-responses")


def _dumps(replies: list[Response]) -> list[dict[str, Any]]:
    return [reply.model_dump() for reply in replies]


def test_from_websocket_reads_several_responses_on_one_socket(
        llm_rx_server: EmulatorThread) -> None:
    with connect(_url(llm_rx_server), open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        for name in NAMES:
            _create(ws, name)
        replies = llm_rx.from_websocket(ws, responses=3).pipe(lxo.to_responses()).run()
        assert _dumps(replies) == _dumps([_want(name) for name in NAMES])
        _create(ws, NAMES[0])  # (the socket stays open, at the next response)
        assert llm_rx.from_websocket(ws).pipe(lxo.to_response()).run().text == "pong"


def test_from_websocket_one_response_by_default(llm_rx_server: EmulatorThread) -> None:
    with connect(_url(llm_rx_server), open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        _create(ws, NAMES[0])
        _create(ws, NAMES[1])
        events = llm_rx.from_websocket(ws).pipe(ops.to_list()).run()
        assert [type(e) for e in events].count(MessageStop) == 1
        second = llm_rx.from_websocket(ws).pipe(lxo.to_response()).run()
        assert second.model_dump() == _want(NAMES[1]).model_dump()


def test_from_websocket_until_the_socket_closes() -> None:
    # (the server closes an idle socket, 1001, after the second response: the stream's end)
    with EmulatorThread([HERE], idle_timeout=0.3) as server, connect(
            _url(server), open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        _create(ws, NAMES[0])
        _create(ws, NAMES[1])
        events = llm_rx.from_websocket(ws, responses=None)
        replies: list[Response] = []
        events.pipe(lxo.responses(), ops.flat_map(lambda one: one.pipe(lxo.to_response()))
                    ).subscribe(replies.append)
    assert _dumps(replies) == _dumps([_want(NAMES[0]), _want(NAMES[1])])


def test_from_websocket_a_socket_dropped_in_the_second_response_cuts_only_it() -> None:
    headers = {"x-llm-rx-fault": "drop-after=6000"}
    with EmulatorThread([HERE]) as server, connect(
            _url(server), additional_headers=headers, open_timeout=TIMEOUT) as ws:
        _create(ws, NAMES[0])  # (4,351 bytes of events: whole)
        _create(ws, "anthropic__thinking-signature")  # (29,719 bytes: cut)
        replies = llm_rx.from_websocket(ws, responses=None).pipe(lxo.to_responses()).run()
    assert [reply.complete for reply in replies] == [True, False]
    assert replies[1].stop_reason == "interrupted"
    assert replies[1].error is not None
    assert "close code 1011" in replies[1].error.message


def test_from_websocket_a_socket_closed_before_a_response_asked_for_is_a_cut() -> None:
    with EmulatorThread([HERE], idle_timeout=0.3) as server, connect(
            _url(server), open_timeout=TIMEOUT, close_timeout=TIMEOUT) as ws:
        _create(ws, NAMES[0])
        with pytest.raises(IncompleteStreamError, match="close code 1001"):
            llm_rx.from_websocket(ws, responses=2).pipe(lxo.to_responses()).run()


def test_from_websocket_refuses_a_count_that_is_no_count() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="responses"):
            llm_rx.from_websocket(object(), responses=bad)  # type: ignore[arg-type]


def test_from_websocket_several_responses_on_an_asyncio_connection(
        llm_rx_server: EmulatorThread) -> None:
    async def main() -> list[Response]:
        async with async_connect(_url(llm_rx_server), open_timeout=TIMEOUT) as ws:
            for name in NAMES[:2]:
                await ws.send(json.dumps({"type": "response.create", "model": name}))
            replies: list[Response] = await llm_rx.from_websocket(ws, responses=2).pipe(
                lxo.to_responses())
            return replies

    replies = asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert _dumps(replies) == _dumps([_want(NAMES[0]), _want(NAMES[1])])


# The SDK opens its socket the way websockets 17 deprecates (its warning, not ours).
@pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager")
def test_from_websocket_several_responses_on_the_openai_sdk_connection(
        llm_rx_server: EmulatorThread) -> None:
    client = openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test", max_retries=0)
    with client.responses.connect() as connection:
        for name in NAMES[:2]:
            connection.response.create(model=name, input="hi")
        replies = llm_rx.from_websocket(connection, responses=2).pipe(lxo.to_responses()).run()
    client.close()
    assert _dumps(replies) == _dumps([_want(NAMES[0]), _want(NAMES[1])])
