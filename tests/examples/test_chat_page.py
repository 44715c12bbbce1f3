"""The example page (``examples/chat_page.py`` and ``chat_page.html``) in headless Chromium
(driven over the DevTools protocol), with ``llm-rx serve`` as its upstream, all over real
sockets: the page shows each reply's text and reasoning, live (one update per chunk), in
either protocol, smoothed word by word when asked, and a reply's markup as text, never as
markup."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import uvicorn
from ag_ui_validate.transport import TransportOptions, validate_endpoint

import llm_rx
from llm_rx.serve import EmulatorThread
from llm_rx.serve._server import bind, url_of
from tests.browser import Chromium
from tests.captures import capture
from tests.streams import DONE, chat_chunk, sse
from tests.ui_judges import read_ui_endpoint

EXAMPLE = Path(__file__).parents[2] / "examples" / "chat_page.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chat_page", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Page:
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


_SHOWN = """new Promise((resolve) => {
  const ended = () => document.body && document.body.dataset.state === "ended";
  const check = () => ended() ? resolve(JSON.stringify({
    text: document.getElementById("text").textContent,
    reasoning: document.getElementById("reasoning").textContent,
    status: document.getElementById("status").textContent,
    chunks: Number(document.getElementById("status").dataset.chunks),
    deltas: Array.from(document.getElementById("text").childNodes, (n) => n.textContent),
    elements: document.querySelectorAll("#text *, #reasoning *").length,
    title: document.title,
  })) : setTimeout(check, 20);
  check();
})"""


def show(chromium: Chromium, url: str) -> dict[str, Any]:
    """The page's text, reasoning and status once its reply ended."""
    shown: dict[str, Any] = json.loads(chromium.evaluate(url, _SHOWN))
    return shown


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    browser = Chromium()
    yield browser
    browser.close()


@pytest.fixture(scope="module")
def page(llm_rx_server: EmulatorThread) -> Iterator[str]:
    running = Page(llm_rx_server.url)
    yield running.url
    running.stop()


SHOWN = ["anthropic/thinking-signature.sse", "openai/chat-text-basic.sse",
         "gemini/sse-thought-parts.sse", "openai/chat-parallel-tool-calls.sse"]


def _model(name: str) -> str:
    return name.rsplit(".", 1)[0].replace("/", "__")


@pytest.mark.parametrize("protocol", ["vercel-ui", "ag-ui"])
@pytest.mark.parametrize("name", SHOWN)
def test_chat_page_shows_the_reply_live(
    chromium: Chromium, page: str, name: str, protocol: str
) -> None:
    cap = capture(name)
    reply = llm_rx.reassemble(cap.data, cap.provider)
    shown = show(chromium, f"{page}/?model={_model(name)}&protocol={protocol}")
    assert shown["text"] == reply.text
    assert shown["reasoning"] == "".join(b.text for b in reply.content if b.type == "thinking")
    assert shown["status"].startswith("done")
    assert shown["chunks"] > 5  # (the page was updated chunk by chunk)


@pytest.mark.parametrize("protocol", ["vercel-ui", "ag-ui"])
def test_chat_page_shows_a_smoothed_reply_word_by_word(
    chromium: Chromium, page: str, protocol: str
) -> None:
    cap = capture("openai/chat-text-basic.sse")
    reply = llm_rx.reassemble(cap.data, cap.provider)
    shown = show(chromium, f"{page}/?model=openai__chat-text-basic&protocol={protocol}"
                          "&smooth=word")
    deltas = shown["deltas"]  # (each text delta the page appended, as it came)
    assert "".join(deltas) == reply.text
    assert len(deltas) == len(reply.text.split())
    assert all(re.fullmatch(r"\S+\s+", delta) for delta in deltas[:-1]), deltas
    assert re.fullmatch(r"\S+\s*", deltas[-1]), deltas  # (one word and its spaces each)


def test_chat_page_endpoint_serves_use_chats_transport(page: str) -> None:
    read = read_ui_endpoint(f"{page}/api/chat?model=anthropic__thinking-signature")
    assert read["errors"] == []
    cap = capture("anthropic/thinking-signature.sse")
    parts = read["message"]["parts"]
    text = "".join(p["text"] for p in parts if p["type"] == "text")
    assert text == llm_rx.reassemble(cap.data, cap.provider).text


def test_chat_page_endpoint_passes_ag_ui_validate_as_an_agent(page: str) -> None:
    result = asyncio.run(validate_endpoint(
        f"{page}/api/chat?model=openai__chat-parallel-tool-calls&protocol=ag-ui",
        TransportOptions(timeout_ms=30_000)))
    summary = result.report.summary
    assert (summary.errors, summary.warnings) == (0, 0), result.report.diagnostics
    assert result.event_count > 10


MARKUP = '<img src=x onerror="document.title=\'owned\'"><script>document.title="owned"</script>'


@pytest.fixture(scope="module")
def hostile_page() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "openai").mkdir()
        body = sse(chat_chunk({"role": "assistant", "content": MARKUP[:20]}),
                   chat_chunk({"content": MARKUP[20:]}), chat_chunk({}, "stop")) + DONE
        (Path(folder) / "openai" / "chat-markup.sse").write_bytes(body)
        with EmulatorThread([folder]) as upstream:
            running = Page(upstream.url)
            yield running.url
            running.stop()


@pytest.mark.parametrize("protocol", ["vercel-ui", "ag-ui"])
def test_chat_page_shows_markup_as_text(
    chromium: Chromium, hostile_page: str, protocol: str
) -> None:
    shown = show(chromium, f"{hostile_page}/?model=openai__chat-markup&protocol={protocol}")
    assert shown["text"] == MARKUP
    assert shown["elements"] == 0  # (no element was made of the reply)
    assert shown["title"] != "owned"
    assert shown["status"].startswith("done")
