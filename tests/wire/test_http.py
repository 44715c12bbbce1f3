"""wire/http.py: the provider told by an HTTP response, and its error body as a ProviderError."""

from __future__ import annotations

import pytest

from llm_rx.wire.http import http_error, provider_from_http


@pytest.mark.parametrize(("content_type", "path", "provider"), [
    ("application/x-ndjson", "/v1/chat/completions", "ollama"),  # (the content type first)
    ("application/vnd.amazon.eventstream", "/model/m/converse-stream", "bedrock-converse"),
    ("text/event-stream; charset=utf-8", "/v1/chat/completions", "openai-chat"),
    ("text/event-stream", "/openai/v1/responses", "openai-responses"),
    ("text/event-stream", "/v1/messages", "anthropic"),
    ("text/event-stream", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini"),
    ("application/json", "/api/generate", "ollama"),
    ("application/json", "/model/anthropic.claude/converse", "bedrock-converse"),
    ("text/event-stream", "/v1/interactions", "gemini-interactions"),
    ("text/event-stream", "/somewhere/else", None),
    (None, None, None),
])
def test_provider_from_http_content_type_then_path(
    content_type: str | None, path: str | None, provider: str | None
) -> None:
    assert provider_from_http(content_type, path) == provider


def test_http_error_gemini_list_body_gives_status_and_message() -> None:
    body = (b'[{"error": {"code": 429, "message": "Quota exceeded", '
            b'"status": "RESOURCE_EXHAUSTED"}}]')
    error = http_error(429, body, {}, "gemini", now=0.0)
    assert (error.error_type, error.code, error.retryable) == ("RESOURCE_EXHAUSTED", "429", True)
    assert error.message == "gemini answered HTTP 429: RESOURCE_EXHAUSTED Quota exceeded"


def test_http_error_ollama_string_error() -> None:
    error = http_error(404, b'{"error": "model \\"x\\" not found"}', {}, "ollama", now=0.0)
    assert error.message == 'ollama answered HTTP 404: model "x" not found'
    assert not error.retryable


def test_http_error_bedrock_type_from_its_header_and_request_id() -> None:
    headers = {"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/",
               "x-amzn-RequestId": "abc-123"}
    error = http_error(400, b'{"message": "Too many requests"}', headers, "bedrock-converse",
                       now=0.0)
    assert (error.error_type, error.request_id) == ("ThrottlingException", "abc-123")
    assert error.retryable  # (a throttle is worth retrying whatever its status)


def test_http_error_anthropic_overloaded_is_retryable() -> None:
    body = b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    error = http_error(529, body, {}, "anthropic", now=0.0)
    assert (error.status, error.error_type, error.retryable) == (529, "overloaded_error", True)


def test_http_error_the_providers_should_retry_header_wins() -> None:
    assert not http_error(500, b"{}", {"x-should-retry": "false"}, now=0.0).retryable
    assert http_error(400, b"{}", {"X-Should-Retry": "true"}, now=0.0).retryable


def test_http_error_a_body_that_is_no_json_is_the_message() -> None:
    error = http_error(502, b"<html>Bad Gateway</html>", {}, now=0.0)
    assert error.message == "the provider answered HTTP 502: <html>Bad Gateway</html>"
    assert error.raw == "<html>Bad Gateway</html>"
    assert error.retryable
