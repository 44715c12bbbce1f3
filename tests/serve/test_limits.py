"""``llm-rx serve``'s limits on what a client sends: ``--max-body`` (default 16 MiB) answered
413 in the endpoint's error shape while the body arrives (the peak memory of the server
process measured for a 100 MB body), a body that stops arriving answered 408, and a
connection that never finishes its request head closed."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Iterable, Iterator

import openai
import pytest

from llm_rx.serve import EmulatorThread, _limits, _server

from ..loopback import WAIT
from ..memory import MiB, peak_rss, process

BODY = 100 * 1000 * 1000
PIECE = b"x" * MiB


def _head(path: str, fields: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "host: 127.0.0.1", "content-type: application/json"]
    lines += [f"{name}: {value}" for name, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _exchange(address: tuple[str, int], head: bytes, body: Iterable[bytes]) -> tuple[int, bytes]:
    """Send ``head`` then ``body`` (from a thread, as long as the server takes it) and read
    the response meanwhile: its status and body."""
    with socket.create_connection(address, timeout=WAIT) as sock:
        sock.sendall(head)

        def send() -> None:
            try:
                for piece in body:
                    sock.sendall(piece)
            except OSError:  # (the server answered and closed: the rest is not wanted)
                pass

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        data = b""
        while b"\r\n\r\n" not in data:
            got = sock.recv(65536)
            assert got, f"closed without a response: {data!r}"
            data += got
        head_part, _, rest = data.partition(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head_part.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        while len(rest) < length:
            got = sock.recv(65536)
            assert got
            rest += got
        with contextlib.suppress(OSError):  # (wakes the sender, if the server did not)
            sock.shutdown(socket.SHUT_RDWR)
        sender.join(WAIT)
    return int(head_part.split()[1]), rest[:length]


def _chunked(total: int) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        yield b"%x\r\n%s\r\n" % (len(PIECE), PIECE)
        sent += len(PIECE)
    yield b"0\r\n\r\n"


def _pieces(total: int) -> Iterator[bytes]:
    for _ in range(total // len(PIECE)):
        yield PIECE
    yield PIECE[: total % len(PIECE)]


@pytest.fixture(scope="module")
def serving() -> Iterator[tuple[int, tuple[str, int]]]:
    argv = [sys.executable, "-m", "llm_rx", "serve", "--port", "0"]
    with process(argv, lambda line: "listening on" in line) as child:
        yield child.pid, child.address


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_serve_a_100_mb_body_is_413_in_the_endpoints_shape_holding_little(
    serving: tuple[int, tuple[str, int]], framing: str
) -> None:
    pid, address = serving
    before = peak_rss(pid)
    if framing == "chunked":
        head, body = _head("/v1/messages", {"transfer-encoding": "chunked"}), _chunked(BODY)
    else:
        head, body = _head("/v1/messages", {"content-length": str(BODY)}), _pieces(BODY)
    status, answer = _exchange(address, head, body)
    growth = peak_rss(pid) - before
    assert status == 413
    error = json.loads(answer)
    assert error["type"] == "error"
    assert error["error"]["type"] == "request_too_large"
    assert "16777216" in error["error"]["message"]
    assert growth < 32 * MiB, f"the server grew by {growth / MiB:.0f} MiB"


def test_serve_max_body_reaches_the_sdk_as_its_413() -> None:
    with EmulatorThread(max_body=1000) as server, \
            openai.OpenAI(base_url=f"{server.url}/v1", api_key="none", max_retries=0) as client:
        with pytest.raises(openai.APIStatusError) as raised:
            client.chat.completions.create(
                model="openai__chat-text-basic",
                messages=[{"role": "user", "content": "x" * 2000}])
        assert raised.value.status_code == 413
        assert "larger than 1000 bytes" in raised.value.message
        reply = client.chat.completions.create(model="openai__chat-text-basic",
                                               messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content


def test_serve_a_body_that_stops_arriving_is_408(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_limits, "BODY_TIMEOUT", 0.3)
    with EmulatorThread() as server:
        host, port = server.url.removeprefix("http://").split(":")
        status, answer = _exchange((host, int(port)),
                                   _head("/v1/chat/completions", {"content-length": "100"}),
                                   [b'{"model": '])
    assert status == 408
    assert json.loads(answer)["error"]["type"] == "invalid_request_error"


def test_serve_a_request_head_never_finished_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_server, "HEAD_TIMEOUT", 0.3)
    with EmulatorThread() as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=WAIT) as sock:
            sock.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            assert sock.recv(1024) == b""  # (closed, not held: a hang is a timeout here)


def test_serve_a_connection_that_sends_nothing_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_server, "HEAD_TIMEOUT", 0.3)
    with EmulatorThread() as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=WAIT) as sock:
            assert sock.recv(1024) == b""


@pytest.mark.parametrize("route", ["/_llm_rx/queue", "/_llm_rx/fault"])
def test_serve_control_routes_keep_to_the_body_limit(route: str) -> None:
    # bug class: the scripting routes read their bodies whole, past --max-body
    with EmulatorThread(max_body=1000) as server:
        host, port = server.url.removeprefix("http://").split(":")
        status, answer = _exchange((host, int(port)),
                                   _head(route, {"content-length": "5000"}), [b"x" * 5000])
        assert status == 413
        assert "larger than 1000 bytes" in json.loads(answer)["error"]["message"]
        small = json.dumps({"fault": None}).encode()
        status, _ = _exchange((host, int(port)),
                              _head("/_llm_rx/fault", {"content-length": str(len(small))}),
                              [small])
        assert status == 200
