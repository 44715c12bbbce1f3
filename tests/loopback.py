"""A real HTTP server on 127.0.0.1 that replays a recorded body in small chunked writes."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: How long a test waits for the server to see something (bounded: never a hang).
WAIT = 10.0


@dataclass
class Server:
    """The base URL, and what the server saw: ``hung_up`` is set when the client closed the
    connection while a reply was held; ``release`` lets a held reply go on."""

    url: str
    hung_up: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    paths: list[str] = field(default_factory=list)


@contextmanager
def serving(body: bytes, content_type: str = "text/event-stream", chunk: int = 97) -> Iterator[str]:
    """Serve ``body`` to any request (chunked, ``chunk`` bytes per write); yields the base URL."""
    with server(body, content_type, chunk) as running:
        yield running.url


@contextmanager
def server(
    body: bytes | list[bytes],
    content_type: str = "text/event-stream",
    chunk: int = 97,
    *,
    status: int | list[int] = 200,
    headers: Mapping[str, str] | None = None,
    drop_after: int | None = None,
    hold_after: int | None = None,
) -> Iterator[Server]:
    """Serve ``body`` with ``status`` (each a list: one per request in turn, the last
    repeated), and extra ``headers``. ``drop_after=N`` closes the
    connection after N body bytes without the end of the chunked body; ``hold_after=N``
    waits after N body bytes until ``release`` is set (at teardown at the latest)."""
    state = Server("")
    statuses = [status] if isinstance(status, int) else list(status)
    bodies = [body] if isinstance(body, bytes) else list(body)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _reply(self) -> None:
            state.paths.append(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            try:
                self._send()
            except OSError:  # (a write failed: the client hung up)
                state.hung_up.set()
            self.close_connection = True

        def _hold(self) -> bool:
            """Wait until released, or ``WAIT`` seconds (``True``), or until the client hangs
            up (``False``)."""
            deadline = time.monotonic() + WAIT
            while not state.release.is_set() and time.monotonic() < deadline:
                readable, _, _ = select.select([self.connection], [], [], 0.05)
                if readable and self._gone():
                    state.hung_up.set()
                    return False
            return True

        def _gone(self) -> bool:
            """The client closed: EOF, or a reset (it closed with our bytes still unread)."""
            try:
                return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
            except ConnectionResetError:
                return True

        def _send(self) -> None:
            self.send_response(statuses.pop(0) if len(statuses) > 1 else statuses[0])
            body = bodies.pop(0) if len(bodies) > 1 else bodies[0]
            self.send_header("Content-Type", content_type)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            held = False
            for start in range(0, len(body), chunk):
                if drop_after is not None and start >= drop_after:
                    return
                if hold_after is not None and start >= hold_after and not held:
                    held = True
                    if not self._hold():
                        return
                piece = body[start : start + chunk]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

        do_GET = _reply
        do_POST = _reply

        def log_message(self, format: str, *args: object) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=http.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{http.server_address[1]}"
    try:
        yield state
    finally:
        state.release.set()
        http.shutdown()
        http.server_close()
        thread.join()
