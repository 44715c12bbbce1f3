"""The journal keeps no credential whole: each official SDK sends its real-looking key the
way it sends a real one (``Authorization``, ``x-api-key``, ``x-goog-api-key``, AWS SigV4 and
its session token, ``?key=``, cookies, the Responses WebSocket's upgrade), and neither
``server.requests`` nor ``GET /_llm_rx/requests`` holds it, only a hint to recognise it by.
``keep_credentials`` keeps them whole for a test that asserts the exact key."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anthropic
import boto3
import httpx
import openai
import pytest
from google import genai

from llm_rx.serve import EmulatorThread, JournalEntry
from llm_rx.serve._journal import Journal
from llm_rx.serve._redact import hint, redact_headers, redact_query
from tests.captures import HERE

OPENAI_KEY = "sk-proj-OPENAIsecretsecret0001"
ANTHROPIC_KEY = "sk-ant-api03-ANTHROPICsecret0002"
GOOGLE_KEY = "AIzaSyGOOGLEsecretsecret0003"
QUERY_KEY = "AIzaSyQUERYsecretsecret0004"
AWS_ID = "AKIAAWSIDSECRET00005"
AWS_TOKEN = "IQoJb3JpZ2luX2VjAWSTOKENsecret0006"
COOKIE = "SESSIONcookiesecretvalue0007"
SECRETS = (OPENAI_KEY, ANTHROPIC_KEY, GOOGLE_KEY, QUERY_KEY, AWS_ID, AWS_TOKEN, COOKIE)
MESSAGES = [{"role": "user", "content": "hi"}]


def _send_every_credential(server: EmulatorThread) -> None:
    """The app under test, through each official SDK with its key."""
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key=OPENAI_KEY,
                       max_retries=0) as client:
        client.chat.completions.create(model="openai__chat-text-basic", messages=MESSAGES)  # type: ignore[arg-type]
        with client.responses.connect() as connection:  # (the WebSocket's upgrade)
            connection.response.create(model="openai__responses-basic-llm", input="hi")
            for event in connection:
                if event.type == "response.completed":
                    break
    with anthropic.Anthropic(base_url=server.url, api_key=ANTHROPIC_KEY,
                             max_retries=0) as claude:
        claude.messages.create(model="anthropic__text-basic", max_tokens=5, messages=[])
    gemini = genai.Client(api_key=GOOGLE_KEY, http_options={"base_url": server.url})
    gemini.models.generate_content(model="gemini__sse-thought-parts", contents="hi")
    bedrock = boto3.client("bedrock-runtime", endpoint_url=server.url, region_name="us-east-1",
                           aws_access_key_id=AWS_ID, aws_secret_access_key="not-sent-at-all",
                           aws_session_token=AWS_TOKEN)
    bedrock.converse(modelId="bedrock__converse-stream-text",
                     messages=[{"role": "user", "content": [{"text": "hi"}]}])
    bedrock.close()
    httpx.post(f"{server.url}/v1beta/models/gemini__sse-thought-parts:streamGenerateContent",
               params={"alt": "sse", "key": QUERY_KEY}, json={"contents": []},
               headers={"cookie": f"theme=dark; session={COOKIE}"}, timeout=10)


@pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager")
def test_the_journal_redacts_every_sdks_credentials(llm_rx_server: EmulatorThread) -> None:
    _send_every_credential(llm_rx_server)
    kept = llm_rx_server.requests
    assert len(kept) == 6
    served = httpx.get(f"{llm_rx_server.url}/_llm_rx/requests", timeout=10).text
    held = repr([entry.to_dict() for entry in kept])
    for secret in SECRETS:
        assert secret not in served, secret
        assert secret not in held, secret
    by_path = {entry.path: entry for entry in kept}
    assert by_path["/v1/chat/completions"].headers["authorization"] == "Bearer sk-p…0001"
    assert by_path["/v1/responses"].headers["authorization"] == "Bearer sk-p…0001"
    claude = by_path["/v1/messages"].headers  # (x-api-key, or a bearer token: by version)
    assert (claude.get("x-api-key") or claude["authorization"]).endswith("sk-a…0002")
    genai_entry = by_path["/v1/models/gemini__sse-thought-parts:generateContent"]
    assert genai_entry.headers["x-goog-api-key"] == "AIza…0003"
    keyed = by_path["/v1beta/models/gemini__sse-thought-parts:streamGenerateContent"]
    assert keyed.query == {"alt": "sse", "key": "AIza…0004"}
    assert keyed.headers["cookie"] == "theme=…; session=SESS…0007"
    aws = by_path["/model/bedrock__converse-stream-text/converse"].headers
    assert aws["authorization"].startswith("AWS4-HMAC-SHA256 Cred…")
    assert aws["x-amz-security-token"] == "IQoJ…0006"
    assert json.loads(served)["requests"][0]["headers"]["authorization"] == "Bearer sk-p…0001"


@pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager")
def test_keep_credentials_in_a_block_then_redacted_again(llm_rx_server: EmulatorThread) -> None:
    with llm_rx_server.keep_credentials():
        _send_every_credential(llm_rx_server)
    kept = repr([entry.to_dict() for entry in llm_rx_server.requests])
    for secret in SECRETS:
        assert secret in kept, secret
    llm_rx_server.reset()
    _send_every_credential(llm_rx_server)
    assert OPENAI_KEY not in repr([entry.to_dict() for entry in llm_rx_server.requests])


def test_keep_credentials_until_reset_then_the_default(llm_rx_server: EmulatorThread) -> None:
    llm_rx_server.keep_credentials()
    headers = {"authorization": f"Bearer {OPENAI_KEY}"}
    url = f"{llm_rx_server.url}/v1/chat/completions"
    body = {"model": "openai__chat-text-basic", "messages": MESSAGES}
    httpx.post(url, json=body, headers=headers, timeout=10)
    assert llm_rx_server.requests[-1].headers["authorization"] == headers["authorization"]
    llm_rx_server.reset()  # (the plugin's reset after each test)
    httpx.post(url, json=body, headers=headers, timeout=10)
    assert llm_rx_server.requests[-1].headers["authorization"] == "Bearer sk-p…0001"


@pytest.fixture(scope="module")
def keeping() -> Iterator[EmulatorThread]:
    with EmulatorThread([HERE], keep_credentials=True) as server:
        yield server


def test_an_emulator_made_to_keep_credentials_keeps_them(keeping: EmulatorThread) -> None:
    headers = {"x-api-key": ANTHROPIC_KEY, "cookie": f"session={COOKIE}"}
    httpx.post(f"{keeping.url}/v1/messages", headers=headers, timeout=10,
               json={"model": "anthropic__text-basic", "max_tokens": 5, "messages": []})
    keeping.reset()  # (what it was made with stays)
    httpx.post(f"{keeping.url}/v1/messages", headers=headers, timeout=10,
               json={"model": "anthropic__text-basic", "max_tokens": 5, "messages": []})
    (entry,) = httpx.get(f"{keeping.url}/_llm_rx/requests", timeout=10).json()["requests"]
    assert entry["headers"]["x-api-key"] == ANTHROPIC_KEY
    assert entry["headers"]["cookie"] == f"session={COOKIE}"


def test_hints_keep_little_of_a_short_secret() -> None:
    assert hint("sk-0123456789abcdef") == "sk-0…cdef"
    assert hint("short-secret") == "…"  # (under 16 characters: nothing of it)
    assert redact_headers({"authorization": "Bearer test", "x-api-key": "",
                           "content-type": "application/json"}) == {
        "authorization": "Bearer …", "x-api-key": "…", "content-type": "application/json"}
    assert redact_headers({"authorization": "sk-0123456789abcdef"}) == {
        "authorization": "sk-0…cdef"}
    assert redact_query({"KEY": "x", "alt": "sse"}) == {"KEY": "…", "alt": "sse"}


def test_journal_entries_stay_immutable_and_a_journal_entry_added_is_redacted() -> None:
    journal = Journal()
    entry = JournalEntry("POST", "/v1/messages", {"x-api-key": ANTHROPIC_KEY}, {"a": 1})
    journal.add(entry)
    (kept,) = journal.entries()
    assert kept.headers["x-api-key"] == "sk-a…0002"
    assert entry.headers["x-api-key"] == ANTHROPIC_KEY  # (the one given is not changed)
    assert kept.json == {"a": 1}
    with pytest.raises(AttributeError):
        kept.path = "/elsewhere"  # type: ignore[misc]


def test_the_websocket_key_subprotocol_and_azure_subscription_key_are_redacted() -> None:
    # bug class: a key sent in a header the journal did not know (a browser's WebSocket
    # carries OpenAI's key as a subprotocol; Azure API Management's subscription key)
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz"
    shown = redact_headers({
        "sec-websocket-protocol": f"realtime, openai-insecure-api-key.{key}",
        "ocp-apim-subscription-key": "0123456789abcdef0123",
    })
    assert key not in json.dumps(shown)
    assert shown["sec-websocket-protocol"] == "realtime, openai-insecure-api-key.sk-p…wxyz"
    assert shown["ocp-apim-subscription-key"] == "0123…0123"
