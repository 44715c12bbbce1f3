"""What the Redis tests share: running the helper processes, folding events."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import llm_rx
from llm_rx import Response
from llm_rx.events import Event
from llm_rx.fold.builder import ResponseBuilder
from tests.captures import Capture

ROOT = Path(__file__).parents[2]
DEADLINE = 30.0  # seconds any wait in these tests may last at most


def events_of(recorded: Capture) -> list[Event]:
    """The capture's events (those before a decoding error too)."""
    out: list[Event] = []
    llm_rx.from_bytes(recorded.data, recorded.provider).subscribe(
        out.append, lambda _: None
    )
    return out


def fold(events: Sequence[Event], error: BaseException | None = None) -> Response:
    builder = ResponseBuilder(history=False)
    builder.feed_all(list(events))
    return builder.build(error)


def spawn(module: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", f"tests.redis.{module}", *map(str, args)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )


def finish(process: subprocess.Popen[str]) -> str:
    out, _ = process.communicate(timeout=DEADLINE)
    assert process.returncode == 0, out
    return out


def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for a state another process reaches, checking with a deadline (no fixed sleep)."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)  # (a poll interval, not a wait for an outcome)


def blocked_readers(client: object) -> int:
    """How many clients are blocked in XREAD on the server."""
    clients = client.client_list()  # type: ignore[attr-defined]
    return sum(1 for entry in clients if "b" in entry["flags"] and entry["cmd"] == "xread")
