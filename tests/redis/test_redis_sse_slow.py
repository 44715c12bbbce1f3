"""``redis_sse_response`` reads a reply from Redis as its client reads it: a real Redis, the
response served by uvicorn in a child process (its peak memory measured), and real HTTP
clients on loopback that stop reading. Each stalled client holds at most one read's entries
(``XREAD`` with ``COUNT``), the server stops reading Redis for it, and once the clients read
on they each get the whole reply, every entry in order and the ``end`` frame, though they
paused for longer than the heartbeat timeout."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from llm_rx.events import TextDelta
from llm_rx.sources._redis_entries import end_entry, event_entry
from tests.memory import ROOT, MiB, child_env, peak_rss
from tests.redis.conftest import RedisServer

pytestmark = pytest.mark.slow

ENTRIES = 40_000  # of about 560 bytes each as SSE: a 22 MB reply
TEXT = "x" * 500
CLIENTS = 4
HEARTBEAT = 1.0  # (the clients pause for longer: a paused client is no dead producer)
#: How long the server's reads of Redis must have stopped for the clients to have stalled it.
QUIET = 2.0
DEADLINE = 60.0

SERVER = """
import socket, sys, uvicorn, redis.asyncio
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.routing import Route
from llm_rx import sinks as lxs

PORT, HEARTBEAT = int(sys.argv[1]), float(sys.argv[2])

class Counted(redis.asyncio.Redis):
    async def xread(self, streams, count=None, block=None, **options):
        reply = await super().xread(streams, count, block, **options)
        got = sum(len(batch) for _, batch in reply or ())
        print(f"xread {id(self)} {got}", flush=True)
        return reply

async def reply(request):
    client = Counted(port=PORT, socket_timeout=30)
    response = lxs.redis_sse_response(client, request.path_params["key"], request,
                                      heartbeat_timeout=HEARTBEAT)
    response.background = BackgroundTask(client.aclose)
    return response

sock = socket.create_server(("127.0.0.1", 0))
print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
config = uvicorn.Config(Starlette(routes=[Route("/replies/{key}", reply)]), log_config=None,
                        log_level="warning", access_log=False, lifespan="off")
uvicorn.Server(config).run(sockets=[sock])
"""


def fill(client: Any, key: str, entries: int) -> list[str]:
    """Write a reply of ``entries`` text deltas and its end entry; their ids."""
    ids: list[str] = []
    entry = event_entry(TextDelta(0, TEXT))
    for start in range(0, entries, 1000):
        pipe = client.pipeline(transaction=False)
        for _ in range(min(1000, entries - start)):
            pipe.xadd(key, entry)
        ids.extend(value.decode() for value in pipe.execute())
    client.xadd(key, end_entry(None))
    return ids


@dataclass
class Server:
    """The child serving the replies, and what its log says it read from Redis: entries
    per connection (the log is read unbuffered, so ``select`` sees every line)."""

    popen: subprocess.Popen[bytes]
    address: tuple[str, int] = ("", 0)
    entries: dict[str, int] = field(default_factory=dict)
    _tail: bytes = b""

    def lines(self, seconds: float) -> Iterator[str]:
        """The log's lines as they come, until nothing came for ``seconds``."""
        stdout = self.popen.stdout
        assert stdout is not None
        while select.select([stdout], [], [], seconds)[0]:
            data = os.read(stdout.fileno(), 65536)
            if not data:
                return
            *whole, self._tail = (self._tail + data).split(b"\n")
            yield from (line.decode() for line in whole)

    def quiet(self, seconds: float) -> None:
        """Count the reads until none came for ``seconds`` (within ``DEADLINE``)."""
        deadline = time.monotonic() + DEADLINE
        for line in self.lines(seconds):
            assert time.monotonic() < deadline, "the server never stopped reading Redis"
            _, connection, got = line.split()
            self.entries[connection] = self.entries.get(connection, 0) + int(got)


def _request(address: tuple[str, int], key: str) -> tuple[socket.socket, bytes]:
    """A client with a small receive buffer that sent its request (HTTP/1.0: the reply ends
    when the connection closes) and read the response's head; what came after it."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    sock.settimeout(DEADLINE)
    sock.connect(address)
    sock.sendall(b"GET /replies/%s HTTP/1.0\r\nhost: %s:%d\r\n\r\n"
                 % (key.encode(), address[0].encode(), address[1]))
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1024)
    assert head.startswith(b"HTTP/1.1 200"), head
    return sock, head.partition(b"\r\n\r\n")[2]


def _rest(sock: socket.socket, first: bytes) -> bytes:
    pieces = [first]
    while piece := sock.recv(1 << 20):
        pieces.append(piece)
    return b"".join(pieces)


def _ids_and_end(body: bytes) -> tuple[list[str], bytes]:
    """The ``id:`` of every frame, and the last frame (the ``end`` or ``error`` one)."""
    frames = [frame for frame in body.split(b"\n\n") if frame]
    ids = [frame.split(b"\n", 1)[0].removeprefix(b"id: ").decode() for frame in frames[:-1]]
    return ids, frames[-1]


@contextmanager
def sse_server(redis_port: int, root: Path = ROOT) -> Iterator[Server]:
    """The child (importing the ``llm_rx`` of the checkout at ``root``), once it listens."""
    with serving([SERVER, str(redis_port), str(HEARTBEAT)], root) as server:
        yield server


@contextmanager
def serving(args: list[str], root: Path = ROOT) -> Iterator[Server]:
    """``python -c *args`` (a server importing the ``llm_rx`` of the checkout at ``root``
    that prints its URL first), once it listens; stopped at the end."""
    popen = subprocess.Popen([sys.executable, "-c", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, bufsize=0, env=child_env(root), cwd=root)
    try:
        server = Server(popen)
        url = next(server.lines(DEADLINE), "")
        assert url.startswith("http://"), "the server did not start"
        host, _, port = url.removeprefix("http://").rstrip("/").rpartition(":")
        server.address = (host, int(port))
        yield server
    finally:
        popen.terminate()
        try:
            popen.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.communicate()


def slow_clients(redis: RedisServer, root: Path = ROOT) -> dict[str, Any]:
    """Four clients that stop reading a 22 MB reply, then read on: the server's growth while
    they stalled and at the end, the entries it read for them while they stalled, and the
    entry ids and last frame each client got."""
    client: Any = redis.client()
    ids = fill(client, "k", ENTRIES)
    fill(client, "warm", 10)
    client.close()
    with sse_server(redis.port, root) as child, ExitStack() as stack:
        warm, first = _request(child.address, "warm")  # (the first request's imports)
        _rest(warm, first)
        warm.close()
        child.quiet(0.5)
        pid = child.popen.pid
        before, child.entries = peak_rss(pid), {}
        clients = [_request(child.address, "k") for _ in range(CLIENTS)]
        for sock, _ in clients:
            stack.enter_context(sock)
        child.quiet(QUIET)
        stalled = {"growth": peak_rss(pid) - before, "entries": dict(child.entries)}
        bodies = [_rest(sock, first) for sock, first in clients]
        return {"stalled": stalled, "growth": peak_rss(pid) - before, "ids": ids,
                "got": [_ids_and_end(body) for body in bodies]}


def test_redis_sse_response_slow_clients_hold_a_bounded_number_of_entries(
    server: RedisServer,
) -> None:
    result = slow_clients(server)
    stalled = result["stalled"]
    assert len(stalled["entries"]) == CLIENTS
    # (what the sockets' buffers took, a few MB, and one read more: not the whole reply)
    assert all(read < ENTRIES // 2 for read in stalled["entries"].values()), stalled
    assert stalled["growth"] < 16 * MiB, f"{stalled['growth'] / MiB:.0f} MiB"
    for ids, last in result["got"]:  # (read on as the clients read: all of it)
        assert ids == result["ids"]
        assert last == b"event: end\ndata: {}", last[:300]
    assert result["growth"] < 16 * MiB, f"{result['growth'] / MiB:.0f} MiB"
