"""What a client can make the emulator hold is bounded in bytes and in connections: the
journal keeps a byte budget (the peak memory of a ``llm-rx serve`` process measured for 12
requests of 16 MiB), scripted replies wait within a byte budget, a WebSocket message within
``--max-body``, and connections past ``--max-connections`` are answered 503 at once (real
sockets), idle WebSockets closed after ``--idle-timeout``."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
from collections.abc import Iterator

import httpx
import openai
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from llm_rx.serve import EmulatorThread, JournalEntry
from llm_rx.serve._defaults import JOURNAL_BUDGET, QUEUE_BUDGET
from llm_rx.serve._journal import Journal
from llm_rx.serve._queue import ScriptQueue
from llm_rx.testing import reply
from tests.captures import HERE

from ..loopback import WAIT
from ..memory import MiB, peak_rss, process
from .test_limits import _exchange, _head

REQUESTS = 12
CHAT = {"model": "openai__chat-text-basic", "messages": [{"role": "user", "content": "hi"}]}


def _big_body(size: int) -> bytes:
    """A chat request of about ``size`` bytes, of many small messages (parsed, it takes
    several times its size)."""
    head, item = b'{"model":"nope","messages":[', b'{"role":"user","content":"x"},'
    return head + item * ((size - len(head) - 64) // len(item)) + item[:-1] + b"]}"


def test_serve_journal_keeps_its_byte_budget_for_12_requests_of_16_mib() -> None:
    # bug class: the journal held every body parsed (12 requests of 16 MiB: over 2 GB here)
    body = _big_body(16 * MiB - 4096)
    pieces = [body[at:at + MiB] for at in range(0, len(body), MiB)]
    argv = [sys.executable, "-m", "llm_rx", "serve", "--port", "0", str(HERE)]
    with process(argv, lambda line: "listening on" in line) as child:
        before = peak_rss(child.pid)
        head = _head("/v1/chat/completions", {"content-length": str(len(body))})
        peaks = []
        for _ in range(REQUESTS):
            status, _ = _exchange(child.address, head, pieces)
            assert status == 404  # (no capture "nope": answered once journaled)
            peaks.append(peak_rss(child.pid) - before)
        growth = peaks[-1] - peaks[0]  # (what the later requests added: what was kept)
        url = "http://{}:{}/_llm_rx/requests".format(*child.address)
        journal = httpx.get(url, timeout=60).json()["requests"]
    assert growth < JOURNAL_BUDGET + 48 * MiB, (
        f"the first request took {peaks[0] / MiB:.0f} MiB, the {REQUESTS} "
        f"{peaks[-1] / MiB:.0f} MiB")
    assert len(journal) == REQUESTS
    kept = [entry for entry in journal if entry["json"] is not None]
    assert 3 <= len(kept) <= JOURNAL_BUDGET // len(body)
    assert journal[-len(kept):] == kept  # (the newest bodies are the ones kept)
    for entry in journal[:-len(kept)]:
        assert entry["dropped"] == len(body)
    assert all(entry["dropped"] == 0 for entry in kept)
    assert len(kept[-1]["json"]["messages"]) > 500_000


def test_journal_drops_the_oldest_bodies_first_then_the_oldest_entries() -> None:
    journal = Journal(budget=3100)  # (each entry counts 1,258 bytes: 1,000 its body)
    for number in range(4):
        journal.add(JournalEntry("POST", f"/{number}", {}, body=b'{"n": %d}' % number
                                 + b" " * 992))
    entries = journal.entries()
    assert [entry.path for entry in entries] == ["/0", "/1", "/2", "/3"]
    assert [entry.dropped for entry in entries] == [1000, 1000, 0, 0]
    assert [entry.json for entry in entries] == [None, None, {"n": 2}, {"n": 3}]
    assert journal.size <= 3100
    journal.add(JournalEntry("GET", "/big", {"x-pad": "p" * 5000}))  # (alone past the budget)
    assert [entry.path for entry in journal.entries()] == ["/big"]
    journal.add(JournalEntry("POST", "/whole", {}, body=b"{}" + b" " * 4000))
    (last,) = [entry for entry in journal.entries() if entry.path == "/whole"]
    assert (last.dropped, last.json) == (4002, None)  # (a body past the budget on its own)
    assert json.loads(last.dumps())["dropped"] == 4002


def test_journal_serves_each_body_as_it_came() -> None:
    entry = JournalEntry("POST", "/v1/messages", {}, body=b'{"b": [1, 2], "a": "\\u00e9"}')
    assert json.loads(entry.dumps())["json"] == {"b": [1, 2], "a": "é"}
    for body, shown in ((b"[1]", None), (b"not json", None), (b"  ", {})):
        parsed = json.loads(JournalEntry("POST", "/", {}, body=body).dumps())
        assert parsed["json"] == shown


def test_the_queue_keeps_a_byte_budget() -> None:
    queue = ScriptQueue(budget=4000)
    queue.put([reply("a" * 1000)])
    with pytest.raises(OverflowError, match="bytes of scripted replies"):
        queue.put([reply("b" * 1000), reply("c" * 2000)])
    assert len(queue) == 1  # (none of a refused call is queued)
    assert queue.take() is not None
    queue.put([reply("d" * 3000)])  # (a reply taken frees its bytes)


def test_serve_queue_route_answers_413_past_the_queue_budget(
    llm_rx_server: EmulatorThread,
) -> None:
    # bug class: 10,000 replies of up to --max-body each could wait (160 GB)
    piece = {"replies": [reply("x" * (15 * MiB)).model_dump(mode="json")]}
    url = f"{llm_rx_server.url}/_llm_rx/queue"
    statuses = [httpx.post(url, json=piece, timeout=60).status_code
                for _ in range(QUEUE_BUDGET // (15 * MiB) + 1)]
    assert statuses[:-1] == [200] * (len(statuses) - 1)
    assert statuses[-1] == 413
    assert len(llm_rx_server.emulator.script) == len(statuses) - 1


def _ws(server: EmulatorThread) -> ClientConnection:
    return connect(server.url.replace("http://", "ws://") + "/v1/responses",
                   open_timeout=WAIT, max_size=None)


def test_serve_websocket_message_past_max_body_closes_the_socket() -> None:
    # bug class: the WebSocket took 16 MiB messages whatever --max-body said
    with EmulatorThread([HERE], max_body=64 * 1024) as server, _ws(server) as ws:
        message = {"type": "response.create", "model": "openai__responses-basic-llm",
                   "input": "x" * (100 * 1024)}
        ws.send(json.dumps(message))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=WAIT)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1009  # (message too big)
        assert server.requests == []


def test_serve_closes_an_idle_websocket() -> None:
    # bug class: idle WebSockets stayed open for ever (1,016 of them ran out of files)
    with EmulatorThread([HERE], idle_timeout=0.3) as server, _ws(server) as ws:
        ws.send(json.dumps({"type": "response.create", "model": "openai__responses-basic-llm"}))
        while json.loads(ws.recv(timeout=WAIT))["type"] != "response.completed":
            pass
        with pytest.raises(ConnectionClosed) as closed:  # (then nothing: closed, not held)
            ws.recv(timeout=WAIT)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1001
        assert "idle" in closed.value.rcvd.reason


@pytest.fixture
def capped() -> Iterator[EmulatorThread]:
    with EmulatorThread([HERE], max_connections=4) as server:
        yield server


def _read_all(address: tuple[str, int]) -> bytes:
    """What the server sends a connection that sends nothing, until it closes it."""
    data = b""
    with socket.create_connection(address, timeout=WAIT) as sock:
        while got := sock.recv(65536):
            data += got
    return data


def test_serve_answers_503_past_its_connection_cap(capped: EmulatorThread) -> None:
    host, port = capped.url.removeprefix("http://").split(":")
    address = (host, int(port))
    with contextlib.ExitStack() as sockets:
        for _ in range(4):  # (open: each handshake answered)
            sockets.enter_context(_ws(capped))
        answer = _read_all(address)  # (the server speaks first: no request needed)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503")
        assert b"retry-after: 1" in head.lower()
        assert "--max-connections" in json.loads(body)["error"]["message"]
        with openai.OpenAI(base_url=f"{capped.url}/v1", api_key="k", max_retries=0) as client, \
                pytest.raises(openai.InternalServerError) as raised:
            client.chat.completions.create(**CHAT)  # type: ignore[call-overload]
        assert raised.value.status_code == 503
        assert capped.stats["busy"] == 2
    # (a client that honours Retry-After gets through once a connection is free)
    with openai.OpenAI(base_url=f"{capped.url}/v1", api_key="k", max_retries=3) as client:
        assert client.chat.completions.create(**CHAT).choices  # type: ignore[call-overload]


def test_serve_resets_connections_far_past_the_cap(capped: EmulatorThread) -> None:
    host, port = capped.url.removeprefix("http://").split(":")
    opened = [socket.create_connection((host, int(port)), timeout=WAIT) for _ in range(200)]
    try:
        # (each was answered 503 or, past the spare ones, reset at once: none is held)
        assert capped.stats.wait("busy", 196, WAIT)
        for sock in opened[4:]:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                data = b""
            assert data == b"" or data.startswith(b"HTTP/1.1 503")
    finally:
        for sock in opened:
            sock.close()
