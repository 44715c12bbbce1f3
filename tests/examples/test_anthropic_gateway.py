"""The example gateway (``examples/anthropic_gateway.py``) driven by the ``anthropic`` SDK, with
``llm-rx serve`` as its OpenAI-compatible upstream, all over real sockets: the SDK gets each
OpenAI chat capture's reply as an Anthropic message, and leaving mid-stream closes the
upstream request."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anthropic
import pytest
import uvicorn

import llm_rx
from llm_rx.serve import EmulatorThread
from llm_rx.serve._server import bind, url_of
from tests.captures import CAPTURES, HERE, Capture
from tests.serve.replies import model_of

pytestmark = pytest.mark.oracle

EXAMPLE = Path(__file__).parents[2] / "examples" / "anthropic_gateway.py"
MESSAGES = [{"role": "user", "content": "hi"}]


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("anthropic_gateway", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Gateway:
    """The example app on a free port, in a thread (bound first: reachable at once)."""

    def __init__(self, upstream: str) -> None:
        app = _example().create_app(f"{upstream}/v1")
        self._sock = bind("127.0.0.1", 0)
        self.url = url_of(self._sock)
        config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                                lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._sock]}, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()


@pytest.fixture(scope="module")
def gateway(llm_rx_server: EmulatorThread) -> Iterator[str]:
    server = Gateway(llm_rx_server.url)
    yield server.url
    server.stop()


def _ok(cap: Capture) -> bool:
    if cap.provider != "openai-chat" or cap.host != "openai":
        return False
    return llm_rx.reassemble(cap.data, "openai-chat").complete


CHAT = [cap for cap in CAPTURES if _ok(cap)]


@pytest.mark.parametrize("cap", CHAT, ids=[cap.name for cap in CHAT])
def test_gateway_streams_the_upstream_reply_as_an_anthropic_message(
    gateway: str, cap: Capture
) -> None:
    original = llm_rx.reassemble(cap.data, "openai-chat")
    with anthropic.Anthropic(base_url=gateway, api_key="test", max_retries=0) as client, \
            client.messages.stream(model=model_of(cap), max_tokens=100,
                                   messages=MESSAGES) as stream:
        message = stream.get_final_message()
    text = "".join(b.text for b in message.content if b.type == "text")
    refusal = "".join(b.text for b in original.content if b.type == "refusal")
    assert text == original.text + refusal
    assert [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"] == [
        (c.id, c.name, c.arguments) for c in original.tool_calls]
    usage = original.usage
    assert (message.usage.input_tokens + (message.usage.cache_read_input_tokens or 0),
            message.usage.output_tokens) == (usage.input_tokens, usage.output_tokens)
    assert message.stop_reason == {"end_turn": "end_turn", "tool_use": "tool_use",
                                   "max_tokens": "max_tokens", "refusal": "refusal"}[
        str(original.stop_reason)]


def test_gateway_client_gone_closes_the_upstream_request() -> None:
    # a slow upstream (20 tokens a second): the client leaves after the first text delta
    with EmulatorThread([HERE], pace=20) as slow:
        server = Gateway(slow.url)
        try:
            cap = next(c for c in CHAT if c.name == "openai/chat-text-langchaingo.sse")
            with anthropic.Anthropic(base_url=server.url, api_key="test",
                                     max_retries=0) as client:
                with client.messages.stream(model=model_of(cap), max_tokens=100,
                                            messages=MESSAGES) as stream:
                    first: Any = next(event for event in stream if event.type == "text")
                assert first.text
            assert slow.stats.wait("disconnected", 1, timeout=20)
            assert slow.stats["completed"] == 0
        finally:
            server.stop()
