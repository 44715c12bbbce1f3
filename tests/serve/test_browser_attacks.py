"""A web page against ``llm-rx serve``, in headless Chromium, over real sockets.

The app under test talks to the emulator with its real key (the official SDK as client);
meanwhile the developer's browser shows an attacker's page:

- **DNS rebinding**: the page's name (``rebind.attacker.test``) rebinds to 127.0.0.1, so the
  page and the emulator are one origin to the browser (Chromium's ``--host-resolver-rules``
  maps the name; the page is opened on the emulator's port, as a rebinding attacker does
  once the name resolves to loopback). It reads ``GET /_llm_rx/requests``, posts to a
  provider endpoint and opens the Responses WebSocket, all same-origin.
- **Cross-site requests**: a page on another origin (``attacker.test``, its own server)
  posts ``text/plain`` forms and ``no-cors`` fetches (requests a browser sends without a
  preflight) to ``/_llm_rx/queue`` and ``/_llm_rx/fault``, tries a JSON fetch (which needs
  a preflight the emulator must not grant), and opens the Responses WebSocket (which no
  preflight guards).
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest

from llm_rx.serve import EmulatorThread
from llm_rx.testing import reply
from tests.browser import Chromium

SECRET = "sk-proj-SECRETabcdefghijklmnop1234"
REBOUND = "rebind.attacker.test"
ATTACKER = "attacker.test"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    browser = Chromium(f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1, "
                       f"MAP {ATTACKER} 127.0.0.1", "--disable-features=HttpsUpgrades")
    yield browser
    browser.close()


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _app_call(server: EmulatorThread) -> None:
    """The app under test: one request with its real key, through the official SDK."""
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key=SECRET, max_retries=0) as client:
        client.chat.completions.create(model="openai__chat-text-basic",
                                       messages=[{"role": "user", "content": "hi"}])


_READ = """(async () => {
  const journal = await fetch("/_llm_rx/requests");
  const post = await fetch("/v1/chat/completions", {method: "POST",
    body: JSON.stringify({model: "openai__chat-text-basic", messages: []})});
  const socket = await new Promise((resolve) => {
    const ws = new WebSocket(`ws://${location.host}/v1/responses`);
    ws.onopen = () => { ws.close(); resolve("open"); };
    ws.onerror = () => resolve("refused");
  });
  return JSON.stringify({journal: journal.status, text: await journal.text(),
                         post: post.status, socket});
})()"""


def test_a_rebound_page_reads_no_credential_and_reaches_no_route(
    llm_rx_server: EmulatorThread, chromium: Chromium
) -> None:
    _app_call(llm_rx_server)
    before = len(llm_rx_server.requests)
    got = json.loads(chromium.evaluate(
        f"http://{REBOUND}:{_port(llm_rx_server.url)}/", _READ))
    assert SECRET not in got["text"]
    assert got["journal"] in (403, 421), got
    assert got["post"] in (403, 421), got
    assert got["socket"] == "refused"
    assert len(llm_rx_server.requests) == before  # (nothing of the page reached the journal)


def _attacker_page(target: str, fault: dict[str, Any]) -> bytes:
    queued = {"replies": [reply("ATTACKER: run rm -rf /").model_dump(mode="json")]}
    # (a text/plain form sends "name=value": the name opens the JSON, the value closes it)
    forms = "".join(
        f'<form id="{name}" method="POST" enctype="text/plain" target="sink-{name}" '
        f'action="{target}/_llm_rx/{name}"><input name=\'{html.escape(json.dumps(body)[:-1])}'
        f', "pad": "\' value=\'"}}\'></form><iframe name="sink-{name}"></iframe>'
        for name, body in (("queue", queued), ("fault", fault)))
    script = f"""<script>
window.attack = async () => {{
  const sent = (id) => new Promise((resolve) => {{
    document.querySelector(`iframe[name=sink-${{id}}]`).onload = () => resolve(id);
    document.getElementById(id).submit();
  }});
  await sent("queue");
  await sent("fault");
  const body = {json.dumps(json.dumps(queued))};
  await fetch("{target}/_llm_rx/queue", {{method: "POST", mode: "no-cors", body,
                                           headers: {{"content-type": "text/plain"}}}});
  let json = "sent";
  try {{
    await fetch("{target}/_llm_rx/queue", {{method: "POST", body,
                                             headers: {{"content-type": "application/json"}}}});
  }} catch (error) {{ json = "blocked"; }}
  const socket = await new Promise((resolve) => {{
    const ws = new WebSocket("{target.replace("http://", "ws://")}/v1/responses");
    ws.onopen = () => {{ ws.close(); resolve("open"); }};
    ws.onerror = () => resolve("refused");
  }});
  return JSON.stringify({{json, socket}});
}};
</script>"""
    return f"<!doctype html><html><body>{forms}{script}</body></html>".encode()


@pytest.fixture
def attacker(llm_rx_server: EmulatorThread) -> Iterator[str]:
    """The attacker's own server (another origin), serving its page."""
    page = _attacker_page(llm_rx_server.url, {"fault": "status=500"})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield f"http://{ATTACKER}:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join(10)


def test_a_cross_site_page_queues_nothing_and_sets_no_fault(
    llm_rx_server: EmulatorThread, chromium: Chromium, attacker: str
) -> None:
    got = json.loads(chromium.evaluate(attacker, "window.attack()"))
    assert got["json"] == "blocked"  # (no CORS grant: the browser never sent the JSON post)
    assert got["socket"] == "refused"  # (a WebSocket has no CORS: its Origin is refused)
    assert len(llm_rx_server.emulator.script) == 0
    assert llm_rx_server.emulator.fault is None
    with openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key=SECRET,
                       max_retries=0) as client:
        answer = client.chat.completions.create(model="openai__chat-text-basic",
                                                messages=[{"role": "user", "content": "hi"}])
    assert "ATTACKER" not in (answer.choices[0].message.content or "")
