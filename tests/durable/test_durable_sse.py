"""``sinks.durable_sse_response``: a reply read from the Durable Streams reference server,
served by uvicorn in a child process (its peak memory measured) over real sockets: the
events with their offsets as SSE ids, resumed after ``Last-Event-ID``, a cut reply's error
frame, keep-alive comments, and slow clients that stop reading while the reply is appended:
the server stops reading the stream for each (a piece of one answer read), and once they
read on they each get the whole reply."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

import llm_rx
from llm_rx import sinks as lxs
from llm_rx.events import TextDelta, event_to_dict
from llm_rx.sinks._keepalive import KEEPALIVE
from tests.captures import capture
from tests.durable.conftest import DurableServer
from tests.memory import ROOT, MiB, peak_rss
from tests.redis.helpers import events_of
from tests.redis.test_redis_sse_slow import (
    DEADLINE,
    QUIET,
    Server,
    _ids_and_end,
    _request,
    _rest,
    serving,
)

pytestmark = pytest.mark.slow

TEXT = capture("openai/chat-text-basic.sse")
CLIENTS = 4
APPENDS = 40  # of 1,000 text deltas of 500 characters: a 22 MB reply
PER_APPEND = 1000
IDLE = 2.0  # the readers' idle timeout: the clients pause for longer

SERVER = """
import sys, httpx, uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.routing import Route
from llm_rx import sinks as lxs
from llm_rx.serve._server import bind, url_of

BASE, IDLE, KEEPALIVE = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])

class Counted(httpx.AsyncByteStream):
    def __init__(self, stream, name):
        self.stream, self.name = stream, name

    async def __aiter__(self):
        async for data in self.stream:
            print(f"get {self.name} {len(data)}", flush=True)
            yield data

    async def aclose(self):
        await self.stream.aclose()

class Counting(httpx.AsyncHTTPTransport):
    async def handle_async_request(self, request):
        answer = await super().handle_async_request(request)
        answer.stream = Counted(answer.stream, id(self))
        return answer

async def reply(request):
    client = httpx.AsyncClient(transport=Counting())
    response = lxs.durable_sse_response(BASE + "/v1/stream/" + request.path_params["name"],
                                        request, client=client, idle_timeout=IDLE,
                                        keepalive=KEEPALIVE)
    response.background = BackgroundTask(client.aclose)
    return response

sock = bind("127.0.0.1", 0)
print(url_of(sock), flush=True)
config = uvicorn.Config(Starlette(routes=[Route("/replies/{name}", reply)]), log_config=None,
                        log_level="warning", access_log=False, lifespan="off")
uvicorn.Server(config).run(sockets=[sock])
"""


@contextmanager
def sse_server(base: str, keepalive: float = 15.0, root: Path = ROOT,
               idle: float = IDLE) -> Iterator[Server]:
    """The child serving ``durable_sse_response`` (the ``llm_rx`` of ``root``), once it
    listens; its log says how many bytes each GET of the stream got, per client."""
    with serving([SERVER, base, str(idle), str(keepalive)], root) as server:
        yield server


def _frames(body: bytes) -> list[dict[str, str]]:
    return [dict(line.split(": ", 1) for line in block.split("\n"))
            for block in body.decode().split("\n\n") if block and not block.startswith(":")]


def _get(server: Server, name: str, **headers: str) -> bytes:
    url = "http://{}:{}/replies/{}".format(*server.address, name)
    answer = httpx.get(url, headers=headers, timeout=DEADLINE)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    return answer.content


def test_durable_sse_response_ids_are_offsets_and_resume_after_last_event_id(
    durable_server: DurableServer,
) -> None:
    url = durable_server.stream()
    lxs.to_durable_stream(llm_rx.from_bytes(TEXT.data, TEXT.provider), url,
                          heartbeat=None).run()
    events = [event_to_dict(event) for event in events_of(TEXT)]
    name = url.rsplit("/", 1)[1]
    with sse_server(durable_server.url) as server:
        frames = _frames(_get(server, name))
        assert [orjson.loads(frame["data"]) for frame in frames[:-1]] == events
        assert [frame["event"] for frame in frames[:-1]] == [e["type"] for e in events]
        assert frames[-1] == {"event": "end", "data": "{}"}
        ids = [frame["id"] for frame in frames[:-1]]
        assert len(set(ids)) == len(ids)
        for seen in (0, 4, len(ids) - 1):  # (a browser that reconnects after event `seen`)
            rest = _frames(_get(server, name, **{"last-event-id": ids[seen]}))
            assert [orjson.loads(frame["data"]) for frame in rest[:-1]] == events[seen + 1:]
            assert [frame["id"] for frame in rest[:-1]] == ids[seen + 1:]
            assert rest[-1] == {"event": "end", "data": "{}"}


def test_durable_sse_response_cut_reply_ends_with_an_error_frame(
    durable_server: DurableServer,
) -> None:
    url = durable_server.stream()
    cut = llm_rx.from_bytes(TEXT.data[: len(TEXT.data) // 2], TEXT.provider)
    lxs.to_durable_stream(cut, url, heartbeat=None).subscribe(on_error=lambda error: None)
    with sse_server(durable_server.url) as server:
        frames = _frames(_get(server, url.rsplit("/", 1)[1]))
    assert frames[-1]["event"] == "error"
    assert orjson.loads(frames[-1]["data"])["kind"] == "incomplete"
    assert all("id" in frame for frame in frames[:-1])


def test_durable_sse_response_vanished_producer_keepalive_then_error(
    durable_server: DurableServer,
) -> None:
    url = durable_server.stream()
    events = events_of(TEXT)
    _append(url, [{"e": event_to_dict(event)} for event in events[:3]], create=True)
    with sse_server(durable_server.url, keepalive=0.3) as server:  # (the reader's idle timeout
        body = _get(server, url.rsplit("/", 1)[1])  # is 2 s: keep-alives come before its end)
    assert KEEPALIVE in body
    frames = _frames(body)
    assert [orjson.loads(frame["data"]) for frame in frames[:-1]] == [
        event_to_dict(event) for event in events[:3]]
    assert frames[-1]["event"] == "error"
    assert "the producer is gone" in orjson.loads(frames[-1]["data"])["message"]


def _append(url: str, items: list[Any], create: bool = False) -> None:
    headers = {"content-type": "application/json"}
    if create:
        assert httpx.put(url, headers=headers).status_code in (200, 201)
    answer = httpx.post(url, content=orjson.dumps(items), headers=headers, timeout=DEADLINE)
    assert answer.status_code in (200, 204), answer.text


def slow_clients(server: DurableServer, root: Path = ROOT) -> dict[str, Any]:
    """Four clients that follow a live reply and stop reading while the rest of it (22 MB)
    is appended, then read on: the server's growth while they stalled and at the end, the
    bytes of the stream it read for each while they stalled, and what each client got."""
    url = server.stream()
    name = url.rsplit("/", 1)[1]
    item = {"e": event_to_dict(TextDelta(0, "x" * 500))}
    _append(url, [item] * PER_APPEND, create=True)
    warm = server.stream()
    _append(warm, [item, {"end": {"error": None}}], create=True)
    # (the producer is silent while the test waits for the server to be quiet: a longer
    # idle timeout than that wait)
    with sse_server(server.url, root=root, idle=6 * QUIET) as child, ExitStack() as stack:
        sock, first = _request(child.address, warm.rsplit("/", 1)[1])  # (the first request's
        _rest(sock, first)  # imports)
        sock.close()
        child.quiet(0.5)
        pid = child.popen.pid
        before, child.entries = peak_rss(pid), {}
        clients = [_request(child.address, name) for _ in range(CLIENTS)]
        for sock, _ in clients:
            stack.enter_context(sock)
        child.quiet(QUIET)  # (each read the first append, and its client stopped reading)
        for _ in range(APPENDS - 1):
            _append(url, [item] * PER_APPEND)
        _append(url, [{"end": {"error": None}}])
        child.quiet(QUIET)
        stalled = {"growth": peak_rss(pid) - before, "read": dict(child.entries)}
        bodies = [_rest(sock, first) for sock, first in clients]
        return {"stalled": stalled, "growth": peak_rss(pid) - before,
                "got": [_ids_and_end(body) for body in bodies]}


def test_durable_sse_response_slow_clients_stop_the_reading(
    durable_server: DurableServer,
) -> None:
    result = slow_clients(durable_server)
    stalled = result["stalled"]
    assert len(stalled["read"]) == CLIENTS
    # (what the sockets' buffers took, and a piece of an answer more: not the reply, 22 MB)
    assert all(read < MiB for read in stalled["read"].values()), stalled
    # (+5 MiB for the four as measured, docs/how-to/durable-streams.md; it was +30 to +170
    # MiB while the client inflated each read of the server's gzip answer whole: 40 kB of it
    # held 4 MB of the reply, and all the items in them, for each client)
    assert stalled["growth"] < 32 * MiB, f"{stalled['growth'] / MiB:.0f} MiB"
    for ids, last in result["got"]:  # (read on as the clients read: all of it, in order)
        assert len(ids) == APPENDS * PER_APPEND, last[:300]
        assert len(set(ids)) == len(ids)
        assert last == b"event: end\ndata: {}", last[:300]


def test_durable_sse_items_refuse_an_item_past_the_bound() -> None:
    # bug class: an answer whose item never ends (or is huge) held whole by the gateway, a
    # buffer with no limit between the Durable Streams server and each client
    from llm_rx.errors import FrameTooLargeError
    from llm_rx.sinks._durable_sse import _Items

    items = _Items("a stream", most=1000)
    assert items.feed(b'[{"e": 1}, {"e": "') == [{"e": 1}]
    assert items.feed(b"x" * 900) == []  # (within the bound: waited for)
    with pytest.raises(FrameTooLargeError):
        items.feed(b"x" * 200)
