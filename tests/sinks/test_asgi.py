"""``sse_response(events, to)``: the target's stream as a Starlette response over a real
socket, its media type, and the events' subscription disposed when the client goes away."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
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
from llm_rx.encoders import MEDIA_TYPES
from llm_rx.events import BlockStart, Event, MessageStart, TextDelta
from llm_rx.serve._server import bind, url_of
from tests.captures import capture

THINKING = capture("anthropic/thinking-signature.sse")
disposed = threading.Event()


def _never_ending(observer: abc.ObserverBase[Event], scheduler: Any = None) -> Disposable:
    """A reply that started and then waits forever (an upstream that stalls)."""
    for event in (MessageStart("anthropic", "m", "id"), BlockStart(0, "text"),
                  TextDelta(0, "Hello")):
        observer.on_next(event)
    return Disposable(disposed.set)


def _long_reply(frames: int) -> list[bytes]:
    """An OpenAI chat reply of ``frames`` text frames of 1,000 characters, a read each."""
    def frame(delta: dict[str, object], finish: str | None = None) -> bytes:
        chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    text = [frame({"content": "x" * 1000}) for _ in range(frames)]
    return [frame({"role": "assistant", "content": ""}), *text, frame({}, "stop"),
            b"data: [DONE]\n\n"]


async def _reply(request: Request) -> Response:
    to = request.path_params["to"]
    if request.query_params.get("frames"):  # (a sync source read on the loop, in subscribe)
        reads = _long_reply(int(request.query_params["frames"]))
        return lxs.sse_response(llm_rx.from_bytes(reads, "openai-chat"), to)
    if request.query_params.get("stall"):
        return lxs.sse_response(reactivex.create(_never_ending), to)
    return lxs.sse_response(llm_rx.from_bytes(THINKING.data, "anthropic"), to)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    app = Starlette(routes=[Route("/{to}", _reply, methods=["GET"])])
    sock = bind("127.0.0.1", 0)
    config = uvicorn.Config(app, log_config=None, log_level="warning", lifespan="off")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    yield url_of(sock)
    running.should_exit = True
    thread.join(10)
    sock.close()


@pytest.mark.parametrize("to", sorted(MEDIA_TYPES))
def test_sse_response_sends_the_targets_stream_with_its_media_type(server: str, to: str) -> None:
    reply = httpx.get(f"{server}/{to}")
    assert reply.headers["content-type"].split(";")[0] == MEDIA_TYPES[to]
    assert reply.content == llm_rx.translate(THINKING.data, to, "anthropic")


def test_sse_response_disposes_the_events_when_the_client_goes_away(server: str) -> None:
    disposed.clear()
    with httpx.stream("GET", f"{server}/openai-chat?stall=1") as reply:
        first = next(reply.iter_bytes())
        assert b"Hello" in first
    assert disposed.wait(10)  # (the upstream would be closed: nothing reads it any more)


@pytest.mark.parametrize(("frames", "complete"), [(1000, True), (10_000, False)])
def test_sse_response_bounds_what_a_producer_that_cannot_wait_leaves(
    server: str, frames: int, complete: bool
) -> None:
    body = httpx.get(f"{server}/anthropic?frames={frames}", timeout=30).content
    reply = llm_rx.reassemble(body, "anthropic")
    assert reply.complete is complete  # (past the bound: a cut reply, never a finished one)
    if not complete:  # (and the client is told: the target's error frame)
        assert reply.error is not None
        assert reply.error.kind == "provider", reply.error
        assert "too slowly" in reply.error.message
    assert len(body) < 5 * 1024 * 1024
