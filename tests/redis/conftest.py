"""A real ``redis-server`` for the session: started on a free loopback port in a temporary
folder (no persistence), stopped at the end. Where it is missing the tests that need it are
skipped locally, and fail under CI (``CI`` set): they never pass by not running there."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

STARTUP_DEADLINE = 20.0  # seconds for the server to answer PING


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RedisServer:
    """One ``redis-server`` process, stoppable and restartable on the same port."""

    def __init__(self, executable: str, folder: Path) -> None:
        self.executable, self.folder, self.port = executable, folder, _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.executable, "--save", "", "--appendonly", "no", "--port", str(self.port),
             "--bind", "127.0.0.1", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self._await_ping()

    def _await_ping(self) -> None:
        import redis

        # (a process has no "ready" signal but answering: poll, with a deadline)
        deadline = time.monotonic() + STARTUP_DEADLINE
        client = redis.Redis(port=self.port, socket_timeout=1)
        try:
            while True:
                try:
                    client.ping()
                    return
                except redis.ConnectionError:
                    if time.monotonic() > deadline or self.process is None or (
                        self.process.poll() is not None
                    ):
                        raise
        finally:
            client.close()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=20)
            self.process = None

    def client(self, **options: object) -> object:
        import redis

        return redis.Redis(port=self.port, socket_timeout=10, **options)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    executable = shutil.which("redis-server")
    missing = [name for name, found in (("redis-server", executable),
                                        ("redis (redis-py)", importlib.util.find_spec("redis")))
               if found is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{', '.join(missing)} missing: .ci/run installs them")
        pytest.skip(f"{', '.join(missing)} not installed")
    assert executable is not None
    server = RedisServer(executable, tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def server(redis_server: RedisServer) -> RedisServer:
    """The session's server, running and empty (a test may have stopped it)."""
    if redis_server.process is None:
        redis_server.start()
    client = redis_server.client()
    client.flushall()  # type: ignore[attr-defined]
    client.close()  # type: ignore[attr-defined]
    return redis_server
