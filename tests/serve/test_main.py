"""``llm-rx serve`` as a user runs it: a real process, its first line, a request, a signal."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

import llm_rx
from tests.captures import HERE

ROOT = HERE.parent.parent


@contextmanager
def serving(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``llm-rx serve ARGS`` on a free port; yields the process and its first stdout line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "llm_rx", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: lines.put(process.stdout.readline()),
                              daemon=True)
    reader.start()
    try:
        yield process, lines.get(timeout=30)  # bounded: a server that never says fails
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_process_prints_where_it_listens_and_stops_on_a_signal(
    sig: signal.Signals,
) -> None:
    with serving(str(HERE)) as (process, first):
        assert first.startswith("llm-rx serve: listening on http://127.0.0.1:")
        url = first.rsplit(" ", 1)[1].strip()
        assert not url.endswith(":0")  # the real port
        reply = httpx.post(f"{url}/v1/messages",
                           json={"model": "anthropic__thinking-signature", "stream": True},
                           timeout=30)
        assert llm_rx.reassemble(reply.content) == llm_rx.reassemble(
            HERE / "anthropic/thinking-signature.sse")
        process.send_signal(sig)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert "Traceback" not in err


def test_serve_process_stops_while_a_stream_stalls() -> None:
    with serving(str(HERE)) as (process, first):
        url = first.rsplit(" ", 1)[1].strip()
        with httpx.stream("POST", f"{url}/v1/messages",
                          json={"model": "anthropic__text-basic", "stream": True},
                          headers={"x-llm-rx-fault": "stall-after=10"}, timeout=30) as reply:
            chunks = reply.iter_bytes()
            assert next(chunks)
            process.send_signal(signal.SIGTERM)  # the stalled stream ends; the server exits
            _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert "Traceback" not in err


def test_serve_process_with_no_path_serves_the_bundled_captures() -> None:
    with serving() as (process, first):
        url = first.rsplit(" ", 1)[1].strip()
        reply = httpx.post(f"{url}/v1/chat/completions",
                           json={"model": "openai__chat-parallel-tool-calls", "stream": True},
                           timeout=30)
        assert llm_rx.reassemble(reply.content).stop_reason == "tool_use"
        process.terminate()
        process.communicate(timeout=30)
        assert process.returncode == 0
