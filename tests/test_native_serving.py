"""What the emulator knows of each provider, kept in native/: endpoints, frames, the error
bodies and in-band error frames (each read back by llm-rx's own decoder as a provider error)."""

from __future__ import annotations

import pytest

import llm_rx
from llm_rx.serve._endpoints import capture_form, find_endpoint, reframe, wants_stream
from llm_rx.serve._error_bodies import error_body, error_frame
from llm_rx.serve._frames import cut_after, split_frames
from tests.captures import CAPTURES, Capture, capture

FORMS = {"openai-chat": "sse", "openai-responses": "sse", "anthropic": "sse",
         "bedrock-converse": "eventstream"}


def form_of(cap: Capture) -> str:
    return capture_form(cap.provider, cap.data)


@pytest.mark.parametrize("cap", [pytest.param(c, id=c.name) for c in CAPTURES])
def test_split_frames_joins_back_to_the_recording(cap: Capture) -> None:
    pieces = split_frames(cap.data, form_of(cap))
    assert b"".join(pieces) == cap.data
    assert all(pieces)


def test_split_frames_ends_each_piece_at_a_frame() -> None:
    data = b"data: 1\n\ndata: 2\r\n\r\ndata: 3"
    assert split_frames(data, "sse") == [b"data: 1\n\n", b"data: 2\r\n\r\n", b"data: 3"]
    assert split_frames(b'{"a":1}\n{"b":2}\n', "chat") == [b'{"a":1}\n', b'{"b":2}\n']
    assert split_frames(b'[{"a":1},\n{"b":[2]}\n]', "json-array") == [
        b'[{"a":1}', b',\n{"b":[2]}', b"\n]"]


def test_cut_after_keeps_the_frame_that_holds_the_byte() -> None:
    pieces = [b"aaa", b"bbb", b"ccc"]
    assert cut_after(pieces, 4) == [b"aaa", b"bbb"]
    assert cut_after(pieces, 3) == [b"aaa"]
    assert cut_after(pieces, 100) == pieces


def test_capture_forms_are_told_from_the_bytes() -> None:
    assert form_of(capture("gemini/json-array-multi-chunk.json")) == "json-array"
    assert form_of(capture("gemini/sse-thought-parts.sse")) == "sse"
    assert form_of(capture("ollama/generate-gemma3-text.ndjson")) == "generate"
    assert form_of(capture("ollama/chat-gemma3-text.ndjson")) == "chat"


def test_reframe_refuses_forms_of_different_replies() -> None:
    assert reframe("ollama", b"{}\n", "chat", "generate") is None
    assert reframe("anthropic", b"x", "sse", "sse") == b"x"


def test_find_endpoint_reads_the_path_and_query() -> None:
    gemini = find_endpoint("/v1beta/models/gemini-2.5-pro:streamGenerateContent", {"alt": "sse"})
    assert gemini is not None
    assert (gemini.provider, gemini.form, gemini.model) == ("gemini", "sse", "gemini-2.5-pro")
    bedrock = find_endpoint("/model/us.amazon.nova-micro-v1:0/converse", {})
    assert bedrock is not None
    assert (bedrock.model, bedrock.stream) == ("us.amazon.nova-micro-v1:0", False)
    ollama = find_endpoint("/api/chat", {})
    assert ollama is not None
    assert wants_stream(ollama, {})  # Ollama streams unless told not to
    chat = find_endpoint("/v1/chat/completions", {})
    assert chat is not None
    assert not wants_stream(chat, {})
    assert find_endpoint("/v1/embeddings", {}) is None


# A whole stream of each form with the provider's in-band error after its first frame.
ERROR_CASES = {
    "openai-chat": "openai/chat-text-basic.sse",
    "openai-responses": "openai/responses-basic-llm.sse",
    "anthropic": "anthropic/text-basic.sse",
    "gemini": "gemini/json-array-multi-chunk.json",
    "ollama": "ollama/chat-gemma3-text.ndjson",
    "bedrock-converse": "bedrock/converse-stream-text.eventstream",
    "cohere": "cohere/v2-tool-call.sse",
    "openai-completions": "openai/completions-legacy-text.sse",
}


@pytest.mark.parametrize(("provider", "name"), list(ERROR_CASES.items()))
def test_error_frame_is_read_as_the_provider_s_in_band_error(provider: str, name: str) -> None:
    cap = capture(name)
    form = form_of(cap)
    pieces = split_frames(cap.data, form)
    body = b"".join(pieces[:2]) + error_frame(provider, form, "overloaded, try again")
    response = llm_rx.reassemble(body, provider)
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert "overloaded, try again" in response.error.message


@pytest.mark.parametrize("provider", sorted(ERROR_CASES))
def test_error_body_carries_the_status_and_message(provider: str) -> None:
    body, headers = error_body(provider, 503, "busy")
    assert "busy" in str(body)
    if provider == "bedrock-converse":
        assert headers["x-amzn-ErrorType"].startswith("ServiceUnavailableException")
    if provider == "gemini":
        assert body["error"]["code"] == 503
