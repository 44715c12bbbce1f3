"""Disposing ``from_httpx`` from inside its own pipeline (``first()``) while the client stays
open: the connection closes at once, and the server sees it go (within a second). (Bug class:
the dispose, made from inside the reading task, cancelled that task, and the cancellation
interrupted the response's close at its first await: the connection stayed in the pool.)

(tests/serve/test_from_httpx.py checks the same after the client closes, which closes every
connection anyway.)"""

from __future__ import annotations

import asyncio

import httpx
from reactivex import operators as ops

import llm_rx
from llm_rx.serve import EmulatorThread
from tests.captures import capture

from .replies import model_of
from .test_app import url_for


def test_from_httpx_dispose_mid_stream_closes_the_connection_the_server_sees(
    llm_rx_server: EmulatorThread,
) -> None:
    cap = capture("anthropic/thinking-signature.sse")  # 118 frames at 1 per second
    body = {"model": model_of(cap), "stream": True}
    gone = llm_rx_server.stats["disconnected"]

    async def first_then_dispose() -> tuple[llm_rx.Event, bool]:
        async with httpx.AsyncClient(timeout=10.0) as client:
            request = client.build_request("POST", url_for(llm_rx_server, cap), json=body,
                                           headers=llm_rx_server.headers(pace=1))
            response = await client.send(request, stream=True)
            first: llm_rx.Event = await llm_rx.from_httpx(response).pipe(ops.first())
            # Disposed after the first event: the response is closed, the client still open.
            seen = await asyncio.to_thread(llm_rx_server.stats.wait, "disconnected",
                                           gone + 1, 1.0)
        return first, seen

    first, seen = asyncio.run(first_then_dispose())
    assert isinstance(first, llm_rx.MessageStart)
    assert seen
