"""``to_durable_stream(..., to=<wire>)``: the stream holds the wire's own bytes (what
``translate`` writes), read back with ``from_durable_stream(..., provider=<wire>)`` (sync and
async clients) and, for ``vercel-ui``, by the AI SDK's own client code."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

import llm_rx
from llm_rx import operators as lxo
from llm_rx import sinks as lxs
from tests.captures import capture
from tests.durable.conftest import DurableServer
from tests.redis.helpers import fold
from tests.ui_judges import read_ui_streams

pytestmark = pytest.mark.slow

RECORDED = capture("anthropic/tool-use-input-json-delta.sse")
WIRES = ["anthropic", "openai-chat", "openai-responses", "gemini", "ollama"]


def body_of(url: str) -> bytes:
    answer = httpx.get(url, params={"offset": "-1"})
    assert answer.status_code == 200
    return answer.content


@pytest.mark.parametrize("to", WIRES)
def test_durable_wire_round_trip(durable_server: DurableServer, to: str) -> None:
    url = durable_server.stream()
    lxs.to_durable_stream(llm_rx.from_bytes(RECORDED.data, RECORDED.provider), url, to=to,
                          heartbeat=None).run()
    translated = llm_rx.translate(RECORDED.data, to, RECORDED.provider)
    assert body_of(url) == translated
    assert httpx.head(url).headers["Stream-Closed"] == "true"
    expected = llm_rx.reassemble(translated, to)  # type: ignore[arg-type]
    assert llm_rx.from_durable_stream(url, provider=to).pipe(  # type: ignore[arg-type]
        lxo.to_response()).run() == expected

    async def read() -> Any:
        async with httpx.AsyncClient() as client:
            return await llm_rx.from_durable_stream(
                url, provider=to, client=client).pipe(lxo.to_response())  # type: ignore[arg-type]

    assert asyncio.run(read()) == expected


def test_durable_wire_cut_reply_reads_cut(durable_server: DurableServer) -> None:
    url = durable_server.stream()
    cut = RECORDED.data[: len(RECORDED.data) // 2]
    lxs.to_durable_stream(llm_rx.from_bytes(cut, RECORDED.provider), url, to="openai-chat",
                          heartbeat=None).subscribe(on_error=lambda _: None)
    events, error = [], []  # type: ignore[var-annotated]
    llm_rx.from_durable_stream(url, provider="openai-chat").subscribe(
        events.append, error.append)
    assert len(error) == 1  # (the wire says the reply did not finish)
    assert fold(events, error[0]).complete is False


def test_durable_vercel_ui_read_by_the_ai_sdk(durable_server: DurableServer) -> None:
    url = durable_server.stream()
    lxs.to_durable_stream(llm_rx.from_bytes(RECORDED.data, RECORDED.provider), url,
                          to="vercel-ui", heartbeat=None).run()
    body = body_of(url)
    assert body == llm_rx.translate(RECORDED.data, "vercel-ui", RECORDED.provider)
    (judged,) = read_ui_streams([body])
    assert judged["errors"] == []
    assert judged["chunks"][-1] == "finish"
