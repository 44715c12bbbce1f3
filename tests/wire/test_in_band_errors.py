"""An error frame inside a stream is a ProviderError with the provider's type and code, and
says whether the request is worth trying again (status ``None``: it came with HTTP 200)."""

from __future__ import annotations

import pytest

from llm_rx.errors import ProviderError
from llm_rx.wire.http import in_band_error

from ..captures import capture
from ..helpers import decode_events


@pytest.mark.parametrize(("name", "error_type", "code", "retryable"), [
    ("anthropic/error-overloaded-midstream.synthetic.sse", "overloaded_error", None, True),
    ("anthropic/error-api-error-midstream.partial.sse", "api_error", None, True),
    ("groq/error-event-tool-use-failed.sse", "invalid_request_error", "tool_use_failed", False),
])
def test_in_band_error_carries_the_providers_type_code_and_retryable(
    name: str, error_type: str, code: str | None, retryable: bool
) -> None:
    events, error = decode_events([capture(name).data])
    assert events  # (what came before the error is kept)
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.code, error.retryable) == (
        None, error_type, code, retryable
    )


def test_in_band_error_gemini_status_and_bedrock_exception_name() -> None:
    gemini = in_band_error("UNAVAILABLE: busy", "{}", {"code": 503, "status": "UNAVAILABLE"})
    assert (gemini.error_type, gemini.code, gemini.retryable) == ("UNAVAILABLE", "503", True)
    bedrock = in_band_error("throttlingException: slow", None, "throttlingException")
    assert (bedrock.error_type, bedrock.retryable) == ("throttlingException", True)
    ollama = in_band_error("model not found", None, "model not found")
    assert (ollama.error_type, ollama.retryable) == (None, False)
