"""Who the emulator and the recorder answer: requests whose ``Host`` and ``Origin`` name a
loopback host or one allowed; the others (what a page whose name rebinds to 127.0.0.1, or a
page of another site, sends) are refused 403 in the endpoint's own error shape, on every
route. The control routes take only ``application/json`` and grant no CORS. Real clients
over real sockets: httpx, the official SDKs, ``websockets``, the ``llm-rx serve`` process.
(The same attacks from a real browser: ``test_browser_attacks.py``.)"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from llm_rx.serve import EmulatorThread
from llm_rx.serve._record_main import RecorderThread
from llm_rx.testing import reply
from tests.captures import HERE

from .test_main import serving

FOREIGN = "rebind.attacker.test"
CHAT = {"model": "openai__chat-text-basic", "messages": [{"role": "user", "content": "hi"}]}
QUEUED = {"replies": [reply("queued").model_dump(mode="json")]}


def _host(server: EmulatorThread | RecorderThread, name: str = FOREIGN) -> dict[str, str]:
    return {"host": f"{name}:{server.url.rsplit(':', 1)[1]}"}


# (path, method, body, the error object's place in the endpoint's shape)
ROUTES: list[tuple[str, str, Any, Any]] = [
    ("/v1/chat/completions", "POST", CHAT, lambda b: b["error"]["message"]),
    ("/v1/messages", "POST", {"model": "anthropic__text-basic", "max_tokens": 5,
                              "messages": []}, lambda b: b["error"]["message"]),
    ("/v1beta/models/gemini__sse-thought-parts:streamGenerateContent?alt=sse", "POST",
     {"contents": []}, lambda b: b["error"]["status"] == "PERMISSION_DENIED" and
     b["error"]["message"]),
    ("/api/chat", "POST", {"model": "x", "messages": []}, lambda b: b["error"]),
    ("/v1/models", "GET", None, lambda b: b["error"]["message"]),
    ("/_llm_rx/requests", "GET", None, lambda b: b["error"]["message"]),
    ("/_llm_rx/requests", "DELETE", None, lambda b: b["error"]["message"]),
    ("/_llm_rx/queue", "POST", QUEUED, lambda b: b["error"]["message"]),
    ("/_llm_rx/fault", "POST", {"fault": "status=500"}, lambda b: b["error"]["message"]),
    ("/nowhere", "GET", None, lambda b: b["error"]["message"]),
]


@pytest.mark.parametrize(("path", "method", "body", "message"), ROUTES,
                         ids=[f"{m} {p.split('?')[0]}" for p, m, _, _ in ROUTES])
def test_serve_refuses_a_foreign_host_on_every_route(
    llm_rx_server: EmulatorThread, path: str, method: str, body: Any, message: Any,
) -> None:
    llm_rx_server.queue(reply("the app's own"))
    answer = httpx.request(method, llm_rx_server.url + path, json=body, timeout=10,
                           headers=_host(llm_rx_server))
    assert answer.status_code == 403
    assert "rebinds" in message(answer.json())
    assert "access-control-allow-origin" not in answer.headers
    assert llm_rx_server.requests == []  # (nothing journaled, queued, cleared or set)
    assert len(llm_rx_server.emulator.script) == 1
    assert llm_rx_server.emulator.fault is None


@pytest.mark.parametrize("name", ["localhost", "LOCALHOST.", "app.localhost", "127.0.0.1",
                                  "127.3.2.1", "[::1]", "[::ffff:127.0.0.1]"])
def test_serve_answers_loopback_names_and_addresses(llm_rx_server: EmulatorThread,
                                                    name: str) -> None:
    answer = httpx.post(f"{llm_rx_server.url}/v1/chat/completions", json=CHAT, timeout=10,
                        headers=_host(llm_rx_server, name))
    assert answer.status_code == 200, answer.text


def test_the_official_sdks_get_their_own_403(llm_rx_server: EmulatorThread) -> None:
    headers = _host(llm_rx_server)
    with openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="k", max_retries=0,
                       default_headers=headers) as client, \
            pytest.raises(openai.PermissionDeniedError, match="rebinds"):
        client.chat.completions.create(**CHAT)
    with anthropic.Anthropic(base_url=llm_rx_server.url, api_key="k", max_retries=0,
                             default_headers=headers) as claude, \
            pytest.raises(anthropic.PermissionDeniedError, match="rebinds"):
        claude.messages.create(model="anthropic__text-basic", max_tokens=5, messages=[])
    gemini = genai.Client(api_key="k", http_options={"base_url": llm_rx_server.url,
                                                     "headers": headers})
    with pytest.raises(genai_errors.ClientError) as raised:
        gemini.models.generate_content(model="gemini__sse-thought-parts", contents="hi")
    assert raised.value.code == 403
    assert raised.value.status == "PERMISSION_DENIED"


def test_serve_refuses_a_foreign_origin_and_answers_a_local_one(
    llm_rx_server: EmulatorThread,
) -> None:
    url = f"{llm_rx_server.url}/v1/chat/completions"
    for origin in ("http://attacker.test", "https://attacker.test:443", "null",
                   "chrome-extension://abcdef", "http://127.0.0.1.attacker.test"):
        answer = httpx.post(url, json=CHAT, timeout=10, headers={"origin": origin})
        assert answer.status_code == 403, origin
        assert "another site" in answer.json()["error"]["message"]
    for origin in ("http://localhost:3000", "http://127.0.0.1:5173", "http://[::1]:8080"):
        assert httpx.post(url, json=CHAT, timeout=10,
                          headers={"origin": origin}).status_code == 200, origin


def test_serve_refuses_a_cross_site_request_that_carries_no_origin(
    llm_rx_server: EmulatorThread,
) -> None:
    # bug class: a page's <img> or link GET (no Origin) reaching a route: journaled, and
    # forwarded upstream by the recorder, though the page cannot read the answer
    url = f"{llm_rx_server.url}/v1/models"
    answer = httpx.get(url, timeout=10, headers={"sec-fetch-site": "cross-site"})
    assert answer.status_code == 403
    assert "another site" in answer.json()["error"]["message"]
    for site in ("same-origin", "same-site", "none"):  # (and a CORS request's own Origin)
        assert httpx.get(url, timeout=10, headers={"sec-fetch-site": site}).status_code == 200
    assert httpx.get(url, timeout=10, headers={"sec-fetch-site": "cross-site",
                                               "origin": "http://localhost:3000"}
                     ).status_code == 200


def _ws(server: EmulatorThread) -> str:
    return server.url.replace("http://", "ws://") + "/v1/responses"


def test_serve_refuses_a_websocket_upgrade_with_a_foreign_host_or_origin(
    llm_rx_server: EmulatorThread,
) -> None:
    refused: list[InvalidStatus] = []
    port = int(llm_rx_server.url.rsplit(":", 1)[1])
    with pytest.raises(InvalidStatus) as raised:  # (the socket to 127.0.0.1, Host the name's)
        connect(f"ws://{FOREIGN}:{port}/v1/responses", open_timeout=10,
                sock=socket.create_connection(("127.0.0.1", port), timeout=10))
    refused.append(raised.value)
    with pytest.raises(InvalidStatus) as raised:
        connect(_ws(llm_rx_server), open_timeout=10,
                additional_headers={"origin": "http://attacker.test"})
    refused.append(raised.value)
    for error in refused:
        assert error.response.status_code == 403
        assert b'"error"' in error.response.body
    with connect(_ws(llm_rx_server), open_timeout=10,
                 additional_headers={"origin": "http://localhost:3000"}) as ws:
        ws.send('{"type": "response.create", "model": "openai__chat-text-basic"}')
        while json.loads(ws.recv(timeout=10))["type"] != "response.completed":
            pass


@pytest.fixture
def allowing() -> Iterator[EmulatorThread]:
    with EmulatorThread([HERE],
                        allow_hosts=["dev.example"]) as server:
        yield server


def test_allow_hosts_names_a_host_to_answer(allowing: EmulatorThread) -> None:
    url = f"{allowing.url}/v1/chat/completions"
    assert httpx.post(url, json=CHAT, headers=_host(allowing, "dev.example"),
                      timeout=10).status_code == 200
    assert httpx.post(url, json=CHAT, headers={"origin": "http://dev.example:3000"},
                      timeout=10).status_code == 200
    assert httpx.post(url, json=CHAT, headers=_host(allowing), timeout=10).status_code == 403


def test_allow_hosts_star_answers_any_host() -> None:
    with EmulatorThread([HERE],
                        allow_hosts=["*"]) as server:
        url = f"{server.url}/v1/chat/completions"
        for headers in (_host(server), {"origin": "http://attacker.test"}):
            assert httpx.post(url, json=CHAT, headers=headers, timeout=10).status_code == 200


@pytest.mark.parametrize("route", ["/_llm_rx/queue", "/_llm_rx/fault"])
@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x"])
def test_control_routes_take_only_json(llm_rx_server: EmulatorThread, route: str,
                                       content_type: str | None) -> None:
    # bug class: a "simple" cross-site request (a form, a no-cors fetch: no preflight) with a
    # JSON text as its body was read as JSON, queueing replies for the app under test
    body = QUEUED if route.endswith("queue") else {"fault": "status=500"}
    headers = {"content-type": content_type} if content_type else {}
    request = httpx.Request("POST", llm_rx_server.url + route, json=body)
    if content_type is None:
        del request.headers["content-type"]
    request.headers.update(headers)
    with httpx.Client(timeout=10) as client:
        answer = client.send(request)
    assert answer.status_code == 415
    assert "application/json" in answer.json()["error"]["message"]
    assert len(llm_rx_server.emulator.script) == 0
    assert llm_rx_server.emulator.fault is None
    ok = httpx.post(llm_rx_server.url + route, timeout=10, content=json.dumps(body),
                    headers={"content-type": "application/json; charset=utf-8"})
    assert ok.status_code == 200, ok.text


def test_no_route_grants_cors(llm_rx_server: EmulatorThread) -> None:
    origin = "http://localhost:3000"  # (even a local page: no answer may be read across)
    for path in ("/_llm_rx/queue", "/_llm_rx/requests", "/v1/chat/completions"):
        preflight = httpx.options(llm_rx_server.url + path, timeout=10, headers={
            "origin": origin, "access-control-request-method": "POST",
            "access-control-request-headers": "content-type"})
        assert not any(name.startswith("access-control-") for name in preflight.headers), path
    journal = httpx.get(f"{llm_rx_server.url}/_llm_rx/requests", timeout=10,
                        headers={"origin": origin})
    assert journal.status_code == 200
    assert not any(name.startswith("access-control-") for name in journal.headers)


@pytest.fixture
def upstream() -> Iterator[EmulatorThread]:
    with EmulatorThread([HERE]) as server:
        yield server


def test_the_recorder_refuses_a_foreign_host_or_origin(upstream: EmulatorThread,
                                                       tmp_path: Path) -> None:
    with RecorderThread(upstream.url, tmp_path) as proxy:
        url = f"{proxy.url}/v1/chat/completions"
        for headers in (_host(proxy), {"origin": "http://attacker.test"}):
            answer = httpx.post(url, json=CHAT, headers=headers, timeout=10)
            assert answer.status_code == 403
            assert answer.json()["error"]["type"] == "invalid_request_error"  # (OpenAI's)
        assert upstream.requests == []  # (nothing went on)
        assert httpx.post(url, json=CHAT, timeout=10).status_code == 200
        assert len(upstream.requests) == 1
    with RecorderThread(upstream.url, tmp_path, allow_hosts=["proxy.example"]) as proxy:
        answer = httpx.post(f"{proxy.url}/v1/chat/completions", json=CHAT, timeout=10,
                            headers=_host(proxy, "proxy.example"))
        assert answer.status_code == 200


def test_serve_process_allow_host_and_keep_credentials() -> None:
    with serving("--allow-host", "dev.example", "--keep-credentials",
                 str(HERE)) as (_, first):
        url = first.rsplit(" ", 1)[1].strip()
        port = url.rsplit(":", 1)[1]
        chat = f"{url}/v1/chat/completions"
        key = {"authorization": "Bearer sk-proj-0123456789abcdefWXYZ"}
        assert httpx.post(chat, json=CHAT, timeout=10,
                          headers={"host": f"dev.example:{port}", **key}).status_code == 200
        assert httpx.post(chat, json=CHAT, timeout=10,
                          headers={"host": f"{FOREIGN}:{port}"}).status_code == 403
        (entry,) = httpx.get(f"{url}/_llm_rx/requests", timeout=10).json()["requests"]
        assert entry["headers"]["authorization"] == key["authorization"]


def test_the_guides_curl_commands_drive_the_control_routes(llm_rx_server: EmulatorThread) -> None:
    # (the emulator guide's own commands, as written, against this server)
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    page = (HERE.parents[1] / "docs" / "how-to" / "emulator.md").read_text("utf-8")
    (block,) = [code for code in re.findall(r"^```sh\n(.*?)^```", page, re.S | re.M)
                if "/_llm_rx/queue" in code]
    address = llm_rx_server.url.removeprefix("http://")
    script = block.replace("localhost:8000", address)
    done = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    answers = [json.loads(line) for line in done.stdout.replace("}{", "}\n{").splitlines()]
    assert answers == [{"queued": 1, "waiting": 1}, {"requests": []},
                       {"fault": "malformed"}, {"cleared": True}]
