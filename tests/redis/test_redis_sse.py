"""``sinks.redis_sse_response``: a reply from Redis as SSE a browser resumes by Last-Event-ID."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response as HttpResponse
from starlette.routing import Route
from starlette.testclient import TestClient

import llm_rx
from llm_rx import sinks as lxs
from llm_rx.events import event_to_dict
from tests.captures import capture
from tests.redis.conftest import RedisServer
from tests.redis.helpers import events_of

TEXT = capture("openai/chat-text-basic.sse")


def _app(port: int) -> Starlette:
    import redis.asyncio

    async def reply(request: Request) -> HttpResponse:
        client = redis.asyncio.Redis(port=port, socket_timeout=10)
        response: HttpResponse = lxs.redis_sse_response(
            client, request.path_params["key"], request, heartbeat_timeout=5
        )
        response.background = _closing(client)
        return response

    return Starlette(routes=[Route("/replies/{key}", reply)])


def _closing(client: Any) -> Any:
    from starlette.background import BackgroundTask

    return BackgroundTask(client.aclose)


def _frames(body: str) -> list[dict[str, str]]:
    frames = []
    for block in body.split("\n\n"):
        if block:
            frames.append(dict(line.split(": ", 1) for line in block.split("\n")))
    return frames


def test_redis_sse_response_ids_are_entry_ids_and_resume_after_last_event_id(
    server: RedisServer,
) -> None:
    client: Any = server.client()
    llm_rx.from_bytes(TEXT.data, TEXT.provider).pipe(lxs.to_redis(client, "k")).run()
    ids = [entry_id.decode() for entry_id, _ in client.xrange("k")[:-1]]
    events = [event_to_dict(event) for event in events_of(TEXT)]
    with TestClient(_app(server.port)) as http:
        whole = http.get("/replies/k")
        resumed = http.get("/replies/k", headers={"Last-Event-ID": ids[3]})
    assert whole.headers["content-type"].startswith("text/event-stream")
    frames = _frames(whole.text)
    assert [frame["id"] for frame in frames[:-1]] == ids
    assert [orjson.loads(frame["data"]) for frame in frames[:-1]] == events
    assert [frame["event"] for frame in frames[:-1]] == [event["type"] for event in events]
    assert frames[-1] == {"event": "end", "data": "{}"}
    again = _frames(resumed.text)
    assert [frame["id"] for frame in again[:-1]] == ids[4:]
    assert [orjson.loads(frame["data"]) for frame in again[:-1]] == events[4:]


def test_redis_sse_response_cut_reply_ends_with_an_error_frame(server: RedisServer) -> None:
    client: Any = server.client()
    cut = TEXT.data[: len(TEXT.data) // 2]
    llm_rx.from_bytes(cut, TEXT.provider).pipe(lxs.to_redis(client, "k")).subscribe(
        on_error=lambda _: None
    )
    with TestClient(_app(server.port)) as http:
        frames = _frames(http.get("/replies/k").text)
    assert frames[-1]["event"] == "error"
    assert orjson.loads(frames[-1]["data"])["kind"] == "incomplete"
