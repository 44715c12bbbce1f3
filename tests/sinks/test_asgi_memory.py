"""``sse_response`` reads its upstream only as fast as its client reads: the example gateway
(a child process: its peak memory is measured; and the same with a sync source read on a
thread) in front of an upstream that sends without end, and a client that sends its request
and never reads. The upstream is slowed (its sends
block) and the gateway holds a bounded amount, however long the client waits."""

from __future__ import annotations

import json
import socket
import sys

import pytest

from ..memory import MiB, endless, peak_rss, process

pytestmark = pytest.mark.oracle

GATEWAY = """
import importlib.util, sys, uvicorn
from llm_rx.serve._server import bind, url_of
spec = importlib.util.spec_from_file_location("gateway", "examples/anthropic_gateway.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
app = module.create_app(sys.argv[1] + "/v1")
sock = bind("127.0.0.1", 0)
print(url_of(sock), flush=True)
config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                        lifespan="on")
uvicorn.Server(config).run(sockets=[sock])
"""

THREAD = """
import sys, httpx, uvicorn
from reactivex import operators as ops
from reactivex.scheduler import NewThreadScheduler
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.routing import Route
import llm_rx
from llm_rx import sinks as lxs
from llm_rx.serve._server import bind, url_of
client = httpx.Client(timeout=httpx.Timeout(60.0, read=None))

async def messages(request):
    await request.body()
    upstream = client.send(client.build_request("POST", sys.argv[1] + "/v1/chat/completions",
                                                json={}), stream=True)
    # (a sync source, read on a thread of its own: its on_next blocks until there is room)
    events = llm_rx.from_httpx(upstream, "openai-chat").pipe(
        ops.subscribe_on(NewThreadScheduler()))
    return lxs.sse_response(events, "anthropic", background=BackgroundTask(upstream.close))

app = Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])
sock = bind("127.0.0.1", 0)
print(url_of(sock), flush=True)
config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                        lifespan="off")
uvicorn.Server(config).run(sockets=[sock])
"""

HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        b"connection: close\r\n\r\n")


def _frame(delta: dict[str, object]) -> bytes:
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _request(host: str, port: int) -> bytes:
    body = json.dumps({"model": "m", "max_tokens": 10, "stream": True,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    return (b"POST /v1/messages HTTP/1.1\r\nhost: %s:%d\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n%s" % (host.encode(), port, len(body), body))


@pytest.mark.parametrize("app", [GATEWAY, THREAD], ids=["async-gateway", "sync-on-a-thread"])
def test_sse_response_a_client_that_never_reads_slows_the_upstream_and_holds_little(
    app: str,
) -> None:
    first = _frame({"role": "assistant", "content": ""})
    piece = _frame({"content": "x" * 1000}) * 64
    with endless(HEAD, first, piece, budget=192 * MiB) as upstream, \
            process([sys.executable, "-c", app, upstream.url],
                    lambda line: line.startswith("http://")) as gateway:
        before = peak_rss(gateway.pid)
        with socket.create_connection(gateway.address, timeout=10) as client:
            client.sendall(_request(*gateway.address))
            assert upstream.done.wait(120)  # (the upstream stopped: stalled, or all sent)
            growth = peak_rss(gateway.pid) - before
    assert upstream.stalled.is_set(), f"the upstream sent all {upstream.sent} bytes"
    assert upstream.sent < 64 * MiB
    assert growth < 48 * MiB, f"the gateway grew by {growth / MiB:.0f} MiB"
