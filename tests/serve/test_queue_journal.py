"""The scripted-reply queue and the request journal hold a bounded number of entries, and a
streamed request on an endpoint with no stream encoder says so in the endpoint's shape."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from llm_rx.serve import EmulatorThread, JournalEntry
from llm_rx.serve._journal import Journal
from llm_rx.serve._queue import ScriptQueue
from llm_rx.testing import reply

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_journal_keeps_the_latest_entries() -> None:
    journal = Journal(limit=3)
    for number in range(5):
        journal.add(JournalEntry("POST", f"/{number}", {}, None))
    assert [entry.path for entry in journal.entries()] == ["/2", "/3", "/4"]
    assert [entry.path for entry in journal.since(3)] == ["/3", "/4"]
    assert journal.since(5) == []


def test_the_queue_refuses_past_its_limit_and_anything_but_a_response() -> None:
    queue = ScriptQueue(limit=2)
    queue.put([reply("a"), reply("b")])
    with pytest.raises(OverflowError):
        queue.put([reply("c")])
    assert len(queue) == 2
    with pytest.raises(TypeError, match=r"llm_rx\.Response"):
        queue.put(["text"])  # type: ignore[list-item]
    assert queue.take() is not None
    assert queue.take() is not None
    assert queue.take() is None


def test_a_streamed_scripted_reply_where_no_encoder_writes_is_a_400(
    llm_rx_server: EmulatorThread,
) -> None:
    llm_rx_server.queue(reply("x"))
    answer = httpx.post(f"{llm_rx_server.url}/api/generate", timeout=10,
                        json={"model": "any", "prompt": "hi"})
    assert answer.status_code == 400
    assert "no stream encoder" in answer.json()["error"]


def test_a_fault_that_does_not_parse_is_refused_when_set(llm_rx_server: EmulatorThread) -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        llm_rx_server.fault("explode=1")
    assert llm_rx_server.emulator.fault is None


def test_reply_and_check_client_import_no_server_stack() -> None:
    # bug class: the scripting helpers making the serve extra (or the proxy's httpx) required
    code = ("import sys; from llm_rx.testing import reply, check_client; import llm_rx.cli; "
            "llm_rx.cli._parser(); reply('x'); print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('starlette', 'uvicorn', 'httpx')))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"
