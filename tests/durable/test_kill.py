"""A producer killed at each step of a reply (between appends, inside an append whose answer
it never got, before the close): a reader gets each event once, none lost, and ends with a
cut reply (``complete: false``), never a hang. A reader killed after each event and started
again from the last offset it saw: each event once."""

from __future__ import annotations

import subprocess
import sys
import threading

import orjson
import pytest
import reactivex

import llm_rx
from llm_rx import sinks as lxs
from llm_rx.errors import LlmRxError
from tests.captures import capture
from tests.durable.conftest import DurableServer
from tests.durable.proxy import dropping
from tests.durable.test_durable import read, write
from tests.redis.helpers import DEADLINE, ROOT, events_of, fold

pytestmark = pytest.mark.slow

NAME = "openai/chat-text-basic.sse"
EVENTS = events_of(capture(NAME))


def producer(url: str, stop_after: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.durable.producer", url, NAME, "--stop-after",
         str(stop_after)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def killed(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.communicate(timeout=DEADLINE)


def cut_reply_of(url: str, written: int) -> None:
    got, error = read(url, idle_timeout=1.0)
    assert got == EVENTS[:written]  # (each once, in order, none lost)
    assert isinstance(error, LlmRxError)
    assert fold(got, error).complete is False


@pytest.mark.parametrize("step", [1, 2, len(EVENTS) // 2, len(EVENTS)],
                         ids=["after-first", "between", "middle", "before-close"])
def test_durable_producer_killed_between_appends(durable_server: DurableServer,
                                                  step: int) -> None:
    url = durable_server.stream()
    process = producer(url, step)
    assert process.stdout is not None
    assert process.stdout.readline() == "written\n"
    killed(process)
    cut_reply_of(url, step)


@pytest.mark.parametrize("step", [1, 3])
def test_durable_producer_killed_inside_an_append(durable_server: DurableServer,
                                                   step: int) -> None:
    """The server made append ``step`` but the producer dies before it hears so."""
    path = durable_server.stream().removeprefix(durable_server.url)
    held = threading.Event()
    with dropping(durable_server.url, lambda method, n: method == "POST" and n == step,
                  held) as proxy:
        process = producer(proxy + path, step + 5)
        assert held.wait(DEADLINE)
        killed(process)
    cut_reply_of(durable_server.url + path, step)


def reader(url: str, offset: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.durable.reader", url, offset], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


@pytest.mark.parametrize("one_append", [True, False], ids=["inside-an-answer", "per-event"])
def test_durable_reader_killed_at_each_step_resumes_exactly(
    durable_server: DurableServer, one_append: bool
) -> None:
    """A reader killed after its k-th event (k = 1, 2, ...) and started again from the last
    offset it printed: together they print every event once, in order."""
    url = durable_server.stream()
    if one_append:  # (the whole reply one append: one answer, positions inside it)
        lxs.to_durable_stream(reactivex.from_iterable(EVENTS), url, heartbeat=None).run()
    else:
        assert write(url, EVENTS) == []
    offset, printed = "-1", []
    while True:
        process = reader(url, offset)
        assert process.stdout is not None
        line = process.stdout.readline().rstrip("\n")
        killed(process)
        if line == "end":
            break
        offset, event = line.split("\t")
        printed.append(llm_rx.event_from_dict(orjson.loads(event)))
    assert printed == EVENTS
