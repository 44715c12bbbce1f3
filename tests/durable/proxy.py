"""A real HTTP proxy on 127.0.0.1 in front of the Durable Streams server that loses the
answers it is told to: the request reaches the server (the append is made), and the client's
connection is closed before the answer arrives — a connection dropped at the worst moment."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@contextmanager
def dropping(upstream: str, drop: Callable[[str, int], bool],
             held: threading.Event | None = None) -> Iterator[str]:
    """A proxy to ``upstream``; ``drop(method, n)`` (n: that method's count, from 1) says
    whether the n-th request's answer is lost. With ``held``, a lost answer is held instead
    (``held`` set once the server made the request; the connection stays open until the
    proxy stops). Yields the proxy's base URL."""
    target = urlsplit(upstream)
    release = threading.Event()
    counts: dict[str, int] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            with lock:
                counts[self.command] = number = counts.get(self.command, 0) + 1
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            connection = http.client.HTTPConnection(target.hostname or "", target.port,
                                                    timeout=30)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            connection.request(self.command, self.path, body=body or None, headers=headers)
            answer = connection.getresponse()
            data = answer.read()
            connection.close()
            if drop(self.command, number):
                if held is not None:
                    held.set()
                    release.wait(60)
                self.close_connection = True
                self.connection.close()
                return
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("transfer-encoding", "content-length", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_HEAD = _forward

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        release.set()
        server.shutdown()
        server.server_close()
