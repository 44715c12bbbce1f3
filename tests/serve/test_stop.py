"""A user's stop over real sockets: ``stop_on`` at once and at the block's end closes the
connection (the server sees the client go, within a bounded time) and calls the provider's
cancel endpoint once; the Response is interrupted, cancelled, with what arrived."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai
import pytest
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import BlockStop, Event, TextDelta, ThinkingDelta
from llm_rx.serve import EmulatorThread

pytestmark = pytest.mark.slow

LONG = "openai__responses-code-interpreter-reasoning"
DELTAS = (TextDelta, ThinkingDelta)
PACE = {"x-llm-rx-pace": "200"}  # (about 2 s for the whole reply: a stop comes well before)


def _cancels(server: EmulatorThread) -> list[str]:
    return [entry.path for entry in server.requests
            if entry.method == "POST" and entry.path.endswith("/cancel")]


def _stopper(stop: Subject[Any], after: int) -> Any:
    """A tap that presses Stop when the ``after``-th delta arrives (the reply's reasoning
    comes first: its block ends long before the reply does)."""
    count = 0

    def watch(event: Event) -> None:
        nonlocal count
        if type(event) in DELTAS:
            count += 1
            if count == after:
                stop.on_next("the user pressed Stop")

    return ops.do_action(watch)


def _request(server: EmulatorThread) -> dict[str, Any]:
    return {"method": "POST", "url": f"{server.url}/v1/responses", "headers": PACE,
            "json": {"model": LONG, "input": "hi", "stream": True, "background": True}}


@pytest.mark.parametrize("at", ["now", "block"])
def test_stop_closes_the_connection_and_cancels_once(
    llm_rx_server: EmulatorThread, at: str
) -> None:
    before = llm_rx_server.stats["disconnected"]
    stop: Subject[Any] = Subject()
    passed: list[Event] = []
    with httpx.Client(timeout=10.0) as client:
        reply = client.send(client.build_request(**_request(llm_rx_server)), stream=True)

        def cancel(reply_id: str) -> httpx.Response:
            return client.post(f"{llm_rx_server.url}/v1/responses/{reply_id}/cancel")

        response: llm_rx.Response = llm_rx.from_httpx(reply).pipe(
            _stopper(stop, 3), lxo.stop_on(stop, at, cancel=cancel),  # type: ignore[arg-type]
            ops.do_action(passed.append), lxo.to_response()).run()
        assert llm_rx_server.stats.wait("disconnected", before + 1, timeout=5.0)
        retrieved = client.get(f"{llm_rx_server.url}/v1/responses/{response.id}").json()
    assert (response.complete, response.stop_reason) == (False, "interrupted")
    assert response.error is not None
    assert response.error.kind == "cancelled"
    assert _cancels(llm_rx_server) == [f"/v1/responses/{response.id}/cancel"]
    assert retrieved["status"] == "cancelled"
    deltas = [e for e in passed if type(e) in DELTAS]
    if at == "now":  # (the delta that pressed Stop did not pass)
        assert len(deltas) == 2
        assert type(passed[-1]) in DELTAS
    else:  # (the block in progress ran to its end, and nothing after it)
        last = passed[-1]
        assert type(last) is BlockStop
        assert len(deltas) > 3
        capture = llm_rx_server.emulator.index.get(LONG)
        assert capture is not None
        whole = llm_rx.reassemble(capture.path, "openai-responses")
        assert response.content[last.index] == whole.content[last.index]


def test_stop_async_source_with_the_openai_sdks_async_cancel(
    llm_rx_server: EmulatorThread,
) -> None:
    before = llm_rx_server.stats["disconnected"]

    async def main() -> llm_rx.Response:
        sdk = openai.AsyncOpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="sk-test",
                                 max_retries=0)
        stop: Subject[Any] = Subject()
        called = asyncio.Event()

        async def cancel(reply_id: str) -> Any:
            try:
                return await sdk.responses.cancel(reply_id)
            finally:
                called.set()

        async with httpx.AsyncClient(timeout=10.0) as client:
            reply = await client.send(client.build_request(**_request(llm_rx_server)),
                                      stream=True)
            response: llm_rx.Response = await llm_rx.from_httpx(reply).pipe(
                _stopper(stop, 1), lxo.stop_on(stop, cancel=cancel),  # type: ignore[arg-type]
                lxo.to_response())
            await asyncio.wait_for(called.wait(), 5.0)  # (the cancel call's task, on this loop)
        await sdk.close()
        return response

    response = asyncio.run(main())
    assert llm_rx_server.stats.wait("disconnected", before + 1, timeout=5.0)
    assert response.error is not None
    assert response.error.kind == "cancelled"
    assert response.text == ""
    assert _cancels(llm_rx_server) == [f"/v1/responses/{response.id}/cancel"]
