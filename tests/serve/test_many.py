"""Many streams at once: 500 concurrent replies through the emulator on one event loop, each
read by ``from_httpx`` (the provider told by the reply) and folded as it arrives, each equal
to its capture's sequential reassembly."""

from __future__ import annotations

import asyncio
import itertools

import httpx

import llm_rx
from llm_rx import operators as lxo
from llm_rx.serve import EmulatorThread
from tests.captures import Capture

from .replies import model_of
from .test_app import SERVED, url_for

STREAMS = 500


def test_serve_500_concurrent_streams_each_reassemble_like_their_capture(
    llm_rx_server: EmulatorThread,
) -> None:
    captures = list(itertools.islice(itertools.cycle(SERVED), STREAMS))
    expected = {cap.name: llm_rx.reassemble(cap.path, cap.provider) for cap in SERVED}
    completed = llm_rx_server.stats["completed"]

    async def one(client: httpx.AsyncClient, cap: Capture) -> llm_rx.Response:
        body = {"model": model_of(cap), "stream": True}
        request = client.build_request("POST", url_for(llm_rx_server, cap), json=body)
        response = await client.send(request, stream=True)
        reply: llm_rx.Response = await llm_rx.from_httpx(response).pipe(lxo.to_response())
        assert response.is_closed
        return reply

    async def all_at_once() -> list[llm_rx.Response]:
        limits = httpx.Limits(max_connections=STREAMS, max_keepalive_connections=STREAMS)
        async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(120.0)) as client:
            return await asyncio.gather(*(one(client, cap) for cap in captures))

    replies = asyncio.run(all_at_once())
    assert len(replies) == STREAMS
    for cap, reply in zip(captures, replies, strict=True):
        assert reply == expected[cap.name], cap.name
    assert llm_rx_server.stats["completed"] >= completed + STREAMS
