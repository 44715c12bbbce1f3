"""Recorded HTTP error replies: each body as its provider sent it, served on loopback with the
status and the ``Retry-After`` the cassette recorded beside it (``PROVENANCE.tsv`` notes them),
reads as the provider's error through ``from_httpx``: that status, whether the same request may
succeed later, and the wait the server asked for (its header, or Gemini's ``RetryInfo``)."""

from __future__ import annotations

import httpx
import orjson
import pytest

import llm_rx
from llm_rx import ProviderError
from llm_rx import operators as lxo
from tests.captures import HERE
from tests.loopback import server

_GEMINI = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
_CHAT = "/openai/v1/chat/completions"
#: body -> (request path, HTTP status, Retry-After as recorded (None: none), wait expected)
RECORDED: dict[str, tuple[str, int, str | None, float | None]] = {
    "anthropic/error-429-rate-limit.nonstream.json": ("/v1/messages", 429, "4", 4.0),
    "groq/error-429-rate-limit.nonstream.json": (_CHAT, 429, "3", 3.0),
    "openai/error-429-insufficient-quota.nonstream.json": ("/v1/responses", 429, None, None),
    "gemini/error-503-unavailable.nonstream.json": (_GEMINI, 503, None, None),
    "gemini/error-500-internal.nonstream.json": (_GEMINI, 500, None, None),
    # (no header recorded: the wait is the body's RetryInfo)
    "gemini/error-429-retry-info.nonstream.json": (_GEMINI, 429, None, 34.4),
    # (a request the model cannot fulfil as asked: the same request fails again)
    "groq/error-event-tool-use-failed.nonstream.json": (_CHAT, 400, None, None),
}


def test_every_recorded_error_body_is_listed() -> None:
    assert {f"{path.parent.name}/{path.name}"
            for path in HERE.glob("*/error-*.nonstream.json")} == set(RECORDED)


def _error_fields(body: dict[str, object]) -> tuple[object, object]:
    """(type, message) as the body spells them (Gemini's ``status`` is its type)."""
    error = body["error"]
    assert isinstance(error, dict)
    return error.get("type") or error.get("status"), error["message"]


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_a_recorded_error_reply_is_the_providers_retryable_error(name: str) -> None:
    path, status, header, wait = RECORDED[name]
    body = (HERE / name).read_bytes()
    headers = {"Retry-After": header} if header is not None else {}
    with (server(body, "application/json", status=status, headers=headers) as running,
          httpx.Client(timeout=10) as client):
        request = client.build_request("POST", running.url + path, json={"stream": True})
        response = client.send(request, stream=True)
        try:
            with pytest.raises(ProviderError) as caught:
                llm_rx.from_httpx(response).pipe(lxo.to_response()).run()
        finally:
            response.close()
    error = caught.value
    error_type, message = _error_fields(orjson.loads(body))
    assert error.status == status
    assert (error.error_type, str(message) in error.message) == (error_type, True)
    # A rate limit or a server error: the SDKs retry these, and so may retry_backoff.
    assert error.retryable == (status == 429 or status >= 500)
    assert error.retry_after == wait
    assert error.raw is not None


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_a_recorded_error_body_alone_names_the_same_error(name: str) -> None:
    # (without the status: the type and message the body carries, as from_native reads them)
    body = (HERE / name).read_bytes()
    with pytest.raises(ProviderError) as caught:
        llm_rx.from_native(body)
    error_type, message = _error_fields(orjson.loads(body))
    assert (caught.value.error_type, caught.value.message) == (error_type, message)
    assert caught.value.status is None
