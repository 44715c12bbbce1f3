"""Peak memory of a process, and a raw loopback server that sends without end.

Memory tests run the party whose memory matters in a child process and read its peak
resident set (``VmHWM`` in ``/proc/PID/status``): the growth from the peak after start-up to
the peak after the test says what a buffer held, whatever the garbage collector did since.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
MiB = 1024 * 1024

#: Seconds a send may block before the reader is taken to have stopped reading.
STALL = 2.0


def peak_rss(pid: int | None = None) -> int:
    """The peak resident set of process ``pid`` (this one by default), in bytes."""
    try:
        status = Path(f"/proc/{pid or 'self'}/status").read_text()
    except FileNotFoundError:
        pytest.skip("peak memory is read from /proc (Linux)")
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    pytest.skip("no VmHWM in /proc/PID/status")


def child_env(root: Path = ROOT) -> dict[str, str]:
    """The environment of a child process that imports the ``llm_rx`` of the checkout at
    ``root`` (this one by default)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    return env


def run_child(code: str, timeout: float = 120.0, root: Path = ROOT) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter (in ``root``, importing its ``llm_rx``); its last
    line of stdout is a JSON object."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=child_env(root), cwd=root, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


#: Child code: the peak memory so far, as ``HWM()`` (bytes).
PEAK = """
def HWM():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
"""


@dataclass
class Endless:
    """A loopback server answering every request with ``head``, then ``first``, then
    ``piece`` again and again until ``budget`` bytes went out, the client went away, or a
    send blocked for ``STALL`` seconds (the client stopped reading: ``stalled`` is set).
    ``done`` is set when the sending stopped, ``sent`` counts the body bytes."""

    url: str = ""
    sent: int = 0
    stalled: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)


def _request_of(conn: socket.socket) -> None:
    """Read a request's head and its ``Content-Length`` body."""
    data = b""
    while b"\r\n\r\n" not in data:
        got = conn.recv(65536)
        if not got:
            return
        data += got
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        got = conn.recv(65536)
        if not got:
            return
        rest += got


@contextmanager
def endless(head: bytes, first: bytes, piece: bytes, budget: int) -> Iterator[Endless]:
    """Serve as `Endless` says, on 127.0.0.1, for as long as the block runs."""
    state = Endless()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)
    state.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop = threading.Event()

    def send(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(STALL)
            try:
                _request_of(conn)
                conn.sendall(head + first)
                while state.sent < budget and not stop.is_set():
                    conn.sendall(piece)
                    state.sent += len(piece)
            except TimeoutError:
                state.stalled.set()
            except OSError:
                pass
            finally:
                state.done.set()

    def accept() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        send(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        stop.set()
        listener.close()
        thread.join(STALL + 10)


@dataclass
class Child:
    """A child process and the line of its stdout that said it was ready."""

    popen: subprocess.Popen[str]
    line: str

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def address(self) -> tuple[str, int]:
        """The ``host, port`` of the ``http://HOST:PORT`` URL in its ready line."""
        url = self.line.split("http://", 1)[1].split()[0].rstrip("/")
        host, _, port = url.rpartition(":")
        return host, int(port)


@contextmanager
def process(argv: list[str], ready: Callable[[str], bool], root: Path = ROOT) -> Iterator[Child]:
    """A child process (in ``root``, importing its ``llm_rx``), once a line of its stdout is
    ``ready``; stopped at the end."""
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=child_env(root), cwd=root)
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if ready(line):
                break
        else:
            raise AssertionError(f"the child ended: {child.communicate(timeout=10)[1][-3000:]}")
        yield Child(child, line)
    finally:
        child.terminate()
        try:
            child.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
