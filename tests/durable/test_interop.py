"""What llm-rx writes the protocol's published clients read, and what they write llm-rx
reads: the JavaScript client (npm ``@durable-streams/client``: its reader in each live mode,
its ``IdempotentProducer``) and the Python client (PyPI ``durable-streams``)."""

from __future__ import annotations

import shutil
import subprocess

import durable_streams
import orjson
import pytest

import llm_rx
from llm_rx import operators as lxo
from llm_rx import sinks as lxs
from tests.captures import capture
from tests.durable.conftest import JS, DurableServer
from tests.durable.test_durable import items_of

pytestmark = pytest.mark.slow

RECORDED = capture("anthropic/tool-use-input-json-delta.sse")


def node(*args: str, stdin: str = "") -> str:
    done = subprocess.run([shutil.which("node") or "node", "durable_client.mjs", *args],
                          cwd=JS, input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def written(server: DurableServer) -> str:
    url = server.stream()
    lxs.to_durable_stream(llm_rx.from_bytes(RECORDED.data, RECORDED.provider), url,
                          heartbeat=None).run()
    return url


@pytest.mark.parametrize("live", ["false", "long-poll", "sse"])
def test_durable_js_client_reads_what_llm_rx_writes(
    durable_server: DurableServer, live: str
) -> None:
    url = written(durable_server)
    assert orjson.loads(node("read", url, live)) == items_of(url)


def test_durable_llm_rx_reads_what_the_js_idempotent_producer_writes(
    durable_server: DurableServer,
) -> None:
    items = items_of(written(durable_server))
    url = durable_server.stream()
    lines = "".join(orjson.dumps(item).decode() + "\n" for item in items)
    assert node("write", url, stdin=lines) == "done\n"
    assert llm_rx.from_durable_stream(url).pipe(lxo.to_response()).run() == (
        llm_rx.reassemble(RECORDED.data, RECORDED.provider))


def test_durable_python_client_round_trip(durable_server: DurableServer) -> None:
    url = written(durable_server)
    with durable_streams.stream(url, offset="-1", live=False) as response:
        assert response.read_json() == items_of(url)
    copy = durable_server.stream()
    handle = durable_streams.DurableStream.create(copy, content_type="application/json")
    with handle:
        for item in items_of(url):
            handle.append(item)
    assert llm_rx.from_durable_stream(copy).pipe(lxo.to_response()).run() == (
        llm_rx.reassemble(RECORDED.data, RECORDED.provider))
