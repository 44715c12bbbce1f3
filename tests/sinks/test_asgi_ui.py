"""``sse_response(events, "vercel-ui" | "ag-ui")`` over a real socket: the headers each
protocol's client needs, the body its own client reads (the AI SDK's ``readUIMessageStream``;
``ag-ui-validate`` against the live endpoint, transport rules included), and the upstream
disposed when the browser goes away."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import reactivex
import uvicorn
from ag_ui_validate.transport import TransportOptions, validate_endpoint
from reactivex import abc
from reactivex.disposable import Disposable
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import llm_rx
from llm_rx import sinks as lxs
from llm_rx.events import BlockStart, Event, MessageStart, TextDelta
from llm_rx.serve._server import bind, url_of
from tests.captures import capture
from tests.ui_judges import read_ui_endpoint, read_ui_streams

THINKING = capture("anthropic/thinking-signature.sse")
disposed = {"vercel-ui": threading.Event(), "ag-ui": threading.Event()}


def _never_ending(to: str) -> reactivex.Observable[Event]:
    def subscribe(observer: abc.ObserverBase[Event], scheduler: Any = None) -> Disposable:
        for event in (MessageStart("anthropic", "m", "id"), BlockStart(0, "text"),
                      TextDelta(0, "Hello")):
            observer.on_next(event)
        return Disposable(disposed[to].set)

    return reactivex.create(subscribe)


async def _reply(request: Request) -> Response:
    to = request.path_params["to"]
    if request.query_params.get("stall"):
        return lxs.sse_response(_never_ending(to), to)
    return lxs.sse_response(llm_rx.from_bytes(THINKING.data, "anthropic"), to)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    app = Starlette(routes=[Route("/{to}", _reply, methods=["GET", "POST"])])
    sock = bind("127.0.0.1", 0)
    config = uvicorn.Config(app, log_config=None, log_level="warning", lifespan="off")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    yield url_of(sock)
    running.should_exit = True
    thread.join(10)
    sock.close()


def test_sse_response_vercel_ui_has_the_ai_sdk_header_and_its_client_reads_it(
    server: str
) -> None:
    reply = httpx.post(f"{server}/vercel-ui", timeout=10)
    assert reply.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert reply.headers["content-type"].split(";")[0] == "text/event-stream"
    assert reply.headers["cache-control"] == "no-cache"
    [read] = read_ui_streams([reply.content])
    assert read["errors"] == []
    text = "".join(p["text"] for p in read["message"]["parts"] if p["type"] == "text")
    assert text == llm_rx.reassemble(THINKING.data, "anthropic").text


def test_sse_response_vercel_ui_is_what_use_chats_transport_reads(server: str) -> None:
    read = read_ui_endpoint(f"{server}/vercel-ui")
    assert read["errors"] == []
    reply = llm_rx.reassemble(THINKING.data, "anthropic")
    parts = read["message"]["parts"]
    assert "".join(p["text"] for p in parts if p["type"] == "text") == reply.text
    assert read["chunks"][-1] == "finish"


def test_sse_response_headers_given_win(server: str) -> None:
    app_headers = {"cache-control": "no-store"}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        events = llm_rx.from_bytes(THINKING.data, "anthropic")
        await lxs.sse_response(events, "vercel-ui", headers=app_headers)(scope, receive, send)

    async def main() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://page") as client:
            return await client.post("/")

    reply = asyncio.run(main())
    assert reply.headers["cache-control"] == "no-store"
    assert reply.headers["x-vercel-ai-ui-message-stream"] == "v1"


def test_sse_response_ag_ui_passes_ag_ui_validate_on_the_live_endpoint(server: str) -> None:
    result = asyncio.run(validate_endpoint(f"{server}/ag-ui", TransportOptions(timeout_ms=10_000)))
    assert result.status == 200
    assert result.content_type is not None
    assert result.content_type.startswith("text/event-stream")
    summary = result.report.summary
    assert (summary.errors, summary.warnings) == (0, 0), result.report.diagnostics
    assert result.event_count > 10


@pytest.mark.parametrize("to", ["vercel-ui", "ag-ui"])
def test_sse_response_ui_disposes_the_upstream_when_the_browser_goes(
    server: str, to: str
) -> None:
    disposed[to].clear()
    with httpx.stream("GET", f"{server}/{to}?stall=1", timeout=10) as reply:
        first = next(reply.iter_bytes())
        assert b"Hello" in first or b"start" in first or b"RUN_STARTED" in first
    assert disposed[to].wait(10)  # (nothing reads the upstream any more)


@pytest.mark.parametrize("to", ["ag-ui", "vercel-ui", "openai-chat", "anthropic",
                                "openai-responses"])
def test_sse_response_every_sse_target_asks_proxies_not_to_cache_or_buffer(
    server: str, to: str
) -> None:
    reply = httpx.post(f"{server}/{to}", timeout=10)
    assert reply.headers["content-type"].split(";")[0] == "text/event-stream"
    assert reply.headers["cache-control"] == "no-cache"
    assert reply.headers["x-accel-buffering"] == "no"


def test_sse_response_a_target_that_is_no_sse_gets_no_sse_headers(server: str) -> None:
    reply = httpx.post(f"{server}/ollama", timeout=10)
    assert reply.headers["content-type"].split(";")[0] == "application/x-ndjson"
    assert "x-accel-buffering" not in reply.headers
