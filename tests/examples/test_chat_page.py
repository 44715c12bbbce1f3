"""The example page (``examples/chat_page.py`` and ``chat_page.html``) in headless Chromium,
with ``llm-rx serve`` as its upstream, all over real sockets: the page shows each reply's
text and reasoning, live (one update per chunk), in either protocol, and a reply's markup as
text, never as markup."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import pytest
import uvicorn

import llm_rx
from llm_rx.serve import EmulatorThread
from llm_rx.serve._server import bind, url_of
from tests.captures import capture
from tests.streams import DONE, chat_chunk, sse

EXAMPLE = Path(__file__).parents[2] / "examples" / "chat_page.py"
# (the flags a headless run in a container needs, and nothing that reaches the network)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found is not None:
            return found
    pytest.skip("headless Chromium is not installed (apt-get install -y chromium)")


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


class _Dom(HTMLParser):
    """The text of the elements with an id, and every tag seen (outside scripts)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: dict[str, list[str]] = {}
        self.attrs: dict[str, dict[str, str | None]] = {}
        self.tags: list[str] = []
        self._open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs).get("id")
        self.tags.append(tag)
        if found is not None:
            self.texts[found] = []
            self.attrs[found] = dict(attrs)
        if tag not in ("input", "meta", "br", "img"):
            self._open.append(found)

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for found in self._open:
            if found is not None:
                self.texts[found].append(data)

    def text(self, element: str) -> str:
        return "".join(self.texts[element])


def _show(page: str, model: str, protocol: str) -> _Dom:
    """The page's DOM once the reply was read (virtual time stops while fetches are open)."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [_chromium(), *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=20000",
             "--dump-dom", f"{page}/?model={model}&protocol={protocol}"],
            capture_output=True, timeout=120, check=True)
    dom = _Dom()
    dom.feed(done.stdout.decode())
    return dom


@pytest.fixture(scope="module")
def page(llm_rx_server: EmulatorThread) -> Iterator[str]:
    running = Page(llm_rx_server.url)
    yield running.url
    running.stop()


SHOWN = ["anthropic/thinking-signature.sse", "openai/chat-text-basic.sse",
         "gemini/sse-thought-parts.sse"]


@pytest.mark.parametrize("protocol", ["vercel-ui", "ag-ui"])
@pytest.mark.parametrize("name", SHOWN)
def test_chat_page_shows_the_reply_live(page: str, name: str, protocol: str) -> None:
    cap = capture(name)
    reply = llm_rx.reassemble(cap.data, cap.provider)
    dom = _show(page, name.rsplit(".", 1)[0].replace("/", "__"), protocol)
    assert dom.text("text") == reply.text
    assert dom.text("reasoning") == "".join(b.text for b in reply.content if b.type == "thinking")
    assert dom.text("status").startswith("done")
    chunks = dom.attrs["status"]["data-chunks"]
    assert chunks is not None
    assert int(chunks) > 5  # (the page was updated chunk by chunk)


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
def test_chat_page_shows_markup_as_text(hostile_page: str, protocol: str) -> None:
    dom = _show(hostile_page, "openai__chat-markup", protocol)
    assert dom.text("text") == MARKUP
    assert "img" not in dom.tags
    assert dom.text("status").startswith("done")
