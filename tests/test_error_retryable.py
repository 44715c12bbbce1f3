"""``ErrorInfo.retryable``: a reply's error says whether the provider told it is worth trying
again, the same way ``ProviderError.retryable`` does, and old JSON without it still reads."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import ProviderError
from llm_rx.response import ErrorInfo, Response
from llm_rx.wire.providers import ProviderName

from .captures import capture
from .streams import anthropic_events, block_delta, block_start, chat_chunk, message_start, sse


def _anthropic_then(error: dict[str, Any]) -> bytes:
    start = anthropic_events(
        message_start(), block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "partial"}),
    )
    return start + sse({"type": "error", "error": error}, event="error")


def _chat_then(error: dict[str, Any]) -> bytes:
    return sse(chat_chunk({"role": "assistant", "content": "partial"}), {"error": error})


def _gemini_then(error: dict[str, Any]) -> bytes:
    first = {"candidates": [{"content": {"role": "model", "parts": [{"text": "partial"}]},
                             "index": 0}]}
    return sse(first, {"error": error})


def _responses_failed(error: dict[str, Any]) -> bytes:
    created = {"type": "response.created", "sequence_number": 0, "response": {
        "id": "resp_1", "object": "response", "status": "in_progress", "model": "m",
        "output": []}}
    failed = {"type": "response.failed", "sequence_number": 1, "response": {
        "id": "resp_1", "object": "response", "status": "failed", "model": "m", "output": [],
        "error": error}}
    return sse(created, failed)


CASES = [
    ("anthropic overloaded", _anthropic_then, "anthropic",
     {"type": "overloaded_error", "message": "Overloaded"}, True),
    ("anthropic rate limit", _anthropic_then, "anthropic",
     {"type": "rate_limit_error", "message": "slow down"}, True),
    ("anthropic bad request", _anthropic_then, "anthropic",
     {"type": "invalid_request_error", "message": "bad"}, False),
    ("openai chat code 429", _chat_then, "openai-chat", {"message": "Rate limit", "code": 429},
     True),
    ("openai chat code 503", _chat_then, "openai-chat", {"message": "busy", "code": "503"}, True),
    ("openai chat code 400", _chat_then, "openai-chat", {"message": "bad", "code": 400}, False),
    ("openai chat server_error", _chat_then, "openai-chat",
     {"message": "oops", "type": "server_error"}, True),
    ("openai chat no words", _chat_then, "openai-chat", {"message": "nope"}, False),
    ("gemini unavailable", _gemini_then, "gemini",
     {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}, True),
    ("gemini invalid", _gemini_then, "gemini",
     {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}, False),
    ("responses server_error code", _responses_failed, "openai-responses",
     {"code": "server_error", "message": "The server had an error"}, True),
    ("responses rate_limit_exceeded code", _responses_failed, "openai-responses",
     {"code": "rate_limit_exceeded", "message": "slow"}, True),
    ("responses invalid_prompt", _responses_failed, "openai-responses",
     {"code": "invalid_prompt", "message": "no"}, False),
]


@pytest.mark.parametrize(("make", "provider", "error", "retryable"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_an_in_band_error_says_whether_it_is_retryable(
    make: Any, provider: ProviderName, error: dict[str, Any], retryable: bool
) -> None:
    body = make(error)
    response = llm_rx.reassemble(body, provider)
    assert response.error is not None
    assert (response.error.kind, response.error.retryable) == ("provider", retryable)
    assert response.stop_reason == "error"
    raised: list[Exception] = []  # (the same answer as the error the events end with)
    llm_rx.from_bytes(body, provider).subscribe(on_error=raised.append)
    (failure,) = raised
    assert isinstance(failure, ProviderError)
    assert failure.retryable is retryable
    streamed = llm_rx.from_bytes(body, provider).pipe(lxo.to_response()).run()
    assert streamed.error == response.error


def test_a_cut_stream_or_a_bad_frame_is_not_told_retryable() -> None:
    data = capture("anthropic/thinking-signature.sse").data
    cut = llm_rx.reassemble(data[: len(data) // 2])
    assert cut.error is not None
    assert (cut.error.kind, cut.error.retryable) == ("incomplete", False)
    bad = llm_rx.reassemble(_chat_then({"message": "x"})[:-2] + b"data: {nope\n\n", "openai-chat")
    assert bad.error is not None
    assert bad.error.retryable is False


def test_the_json_carries_retryable_and_json_without_it_still_reads() -> None:
    response = llm_rx.reassemble(
        _anthropic_then({"type": "overloaded_error", "message": "Overloaded"}), "anthropic"
    )
    dumped = response.model_dump(mode="json")
    assert dumped["error"]["retryable"] is True
    assert Response.model_validate_json(response.model_dump_json()) == response
    del dumped["error"]["retryable"]  # (JSON written before the field existed)
    old = Response.model_validate_json(orjson.dumps(dumped))
    assert old.error == ErrorInfo(kind="provider", message=response.error.message,  # type: ignore[union-attr]
                                  raw=response.error.raw)  # type: ignore[union-attr]
    assert old.error is not None
    assert old.error.retryable is False


def test_from_native_of_an_error_body_says_whether_it_is_retryable() -> None:
    for body, retryable in [
        (b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
         True),
        (b'{"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}}', True),
        (b'{"error": {"message": "bad", "type": "invalid_request_error"}}', False),
        (b'{"error": "model not found"}', False),
    ]:
        with pytest.raises(ProviderError) as caught:
            llm_rx.from_native(body)
        assert caught.value.retryable is retryable, body
