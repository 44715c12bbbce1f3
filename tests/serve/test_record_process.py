"""``llm-rx record`` and ``llm-rx serve DIR --timing recorded`` as a user runs them: real
processes, their first lines, a recording session against the emulator, a signal."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

import llm_rx
from llm_rx.serve import EmulatorThread
from tests.captures import HERE

ROOT = HERE.parent.parent


@contextmanager
def running(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``llm-rx ARGS``; yields the process and the URL its first stdout line gives."""
    process = subprocess.Popen([sys.executable, "-m", "llm_rx", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=ROOT)
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: lines.put(process.stdout.readline()),
                              daemon=True)
    reader.start()
    try:
        first = lines.get(timeout=30)  # bounded: a process that never says fails
        assert "listening on http://127.0.0.1:" in first, first
        yield process, first.rsplit(" ", 1)[1].strip()
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)


def test_a_recording_session_then_its_replay(tmp_path: Path) -> None:
    out = tmp_path / "recordings"
    with EmulatorThread([HERE / "anthropic/text-basic.sse"], pace=100) as upstream, running(
            "record", "--upstream", upstream.url, "--out", str(out), "--port", "0"
    ) as (process, url):
        live = httpx.post(f"{url}/v1/messages", timeout=30,
                          headers={"x-api-key": "sk-ant-SECRET"},
                          json={"model": "text-basic", "max_tokens": 5, "stream": True})
        assert live.status_code == 200
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
    saved = sorted(path.relative_to(out).as_posix() for path in out.rglob("*"))
    assert saved == ["anthropic", "anthropic/text-basic-001.sse",
                     "anthropic/text-basic-001.timing.json"]
    assert b"SECRET" not in b"".join(path.read_bytes() for path in out.rglob("*.*"))
    with running("serve", str(out), "--port", "0", "--timing", "recorded",
                 "--replay-speed", "4") as (_, url):
        again = httpx.post(f"{url}/v1/messages", timeout=30,
                           json={"model": "anthropic__text-basic-001", "stream": True})
    assert again.content == live.content
    assert llm_rx.reassemble(again.content) == llm_rx.reassemble(HERE / "anthropic/text-basic.sse")


def test_record_refuses_a_missing_upstream() -> None:
    done = subprocess.run([sys.executable, "-m", "llm_rx", "record", "--out", "x"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2
    assert "--upstream" in done.stderr
