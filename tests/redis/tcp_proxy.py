"""A real TCP proxy on 127.0.0.1 in front of ``redis-server`` that loses one answer: the first
command that holds ``marker`` reaches the server (which runs it), and the connection is closed
before its answer gets back — the dropped connection a client then retries on."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress


@contextmanager
def losing_one_answer(port: int, marker: bytes) -> Iterator[int]:
    """Yields the proxy's port; ``marker``'s first command's answer is lost."""
    listener = socket.create_server(("127.0.0.1", 0))
    state = {"armed": True, "pending": False}
    lock = threading.Lock()

    def pump(source: socket.socket, sink: socket.socket, upward: bool) -> None:
        try:
            while data := source.recv(65536):
                with lock:
                    if upward and state["armed"] and marker in data:
                        state["armed"], state["pending"] = False, True
                    elif not upward and state["pending"]:
                        state["pending"] = False
                        raise ConnectionResetError  # (the answer is dropped with the line)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", port))
            for args in ((client, upstream, True), (upstream, client, False)):
                threading.Thread(target=pump, args=args, daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
