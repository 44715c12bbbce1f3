"""The Durable Streams reference server (npm ``@durable-streams/server``, installed in
tests/js by ``npm ci``) for the session: started with ``node`` on a free loopback port, stopped
at the end. Where node or the package is missing the tests that need it are skipped locally,
and fail under CI (``CI`` set): they never pass by not running there."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

JS = Path(__file__).parents[1] / "js"
STARTUP_DEADLINE = 30.0  # seconds for the server to say it listens
#: The server's long-poll timeout (ms): short, so a reader's idle timeout is reached soon.
LONG_POLL_MS = 1000


@dataclass
class DurableServer:
    url: str
    process: subprocess.Popen[str]

    def stream(self) -> str:
        """A fresh stream's URL (every test writes its own)."""
        return f"{self.url}/v1/stream/{uuid.uuid4().hex}"


def start_server() -> DurableServer:
    node = shutil.which("node")
    package = JS / "node_modules" / "@durable-streams" / "server"
    if node is None or not package.is_dir():
        if os.environ.get("CI"):
            pytest.fail("node or @durable-streams/server missing: .ci/run installs them")
        pytest.skip("node or @durable-streams/server (tests/js: npm ci) not installed")
    process = subprocess.Popen(
        [node, "durable_server.mjs", str(LONG_POLL_MS)], cwd=JS, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    # (one line, then the server runs: readline returns at once if the process dies)
    line = process.stdout.readline()
    if not line.startswith("ready "):
        process.kill()
        raise RuntimeError(f"the Durable Streams server did not start: {line!r}")
    return DurableServer(line.split()[1], process)


@pytest.fixture(scope="session")
def durable_server() -> Iterator[DurableServer]:
    server = start_server()
    try:
        yield server
    finally:
        server.process.terminate()
        server.process.communicate(timeout=STARTUP_DEADLINE)  # (and its pipes closed)
