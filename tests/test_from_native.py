"""``from_native``: a provider's non-stream body as the ``Response`` its stream reassembles to.

Invariant 4 checked directly, both ways: ``from_native(to_native(r, p), p) == r`` for every
capture's reply that finished, and every recorded non-stream counterpart in the captures
reads as a reply of the same shape as its stream (they are separate calls, so their texts
differ: the provider, the kinds of block, the stop and completeness are what both carry).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import llm_rx
from llm_rx.errors import ProviderError, WireFormatError
from llm_rx.response import WITHOUT_NATIVE
from llm_rx.wire.restream import RESTREAMERS

from .captures import CAPTURES, Capture

ROUND_TRIP = [c for c in CAPTURES if c.provider in RESTREAMERS]
FINISHED = [c for c in ROUND_TRIP if llm_rx.reassemble(c.data, c.provider).complete]
COUNTERPARTS = [c for c in CAPTURES if c.nonstream is not None]

# What a non-stream body cannot carry, per capture (see llm_rx/read/from_native.py).
_NOT_CARRIED: dict[str, str] = {
    "groq/web-search-executed-tools.sse": "to_native leaves Groq's executed_tools out of the "
    "message (its non-stream `message.executed_tools` shape is not written yet)",
}
# Separate calls whose settings differ (MANIFEST.tsv says how each was recorded).
_DIFFERENT_CALLS = {
    "anthropic/web-search-citations.sse": "the non-stream call had extended thinking on",
}


def _dump(response: llm_rx.Response) -> dict[str, Any]:
    # (what a non-stream body means; how the stream spelled it, ``native``, is the stream's)
    dumped = response.model_dump(mode="json", exclude=WITHOUT_NATIVE)
    if dumped["extra"].get("stop_details", 0) is None:  # (a message_start placeholder)
        del dumped["extra"]["stop_details"]
    return dumped


@pytest.mark.parametrize(
    "cap",
    [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(strict=True, reason=_NOT_CARRIED[c.name])]
                  if c.name in _NOT_CARRIED else []) for c in FINISHED],
)
def test_from_native_of_to_native_is_the_reply(cap: Capture) -> None:
    # bug class: a field the non-stream body carries read differently from the stream
    response = llm_rx.reassemble(cap.data, cap.provider)
    body = llm_rx.to_native(response, cap.provider)
    again = llm_rx.from_native(body, cap.provider)
    assert _dump(again) == _dump(response)
    assert llm_rx.from_native(orjson.dumps(body)) == again  # bytes, and the provider told


def test_from_native_of_a_cut_reply_is_no_finished_one() -> None:
    # (a cut reply's body has no stop value: PITFALLS 50, nothing says it ended)
    cap = next(c for c in ROUND_TRIP if c not in FINISHED
               and llm_rx.reassemble(c.data, c.provider).content)
    cut = llm_rx.reassemble(cap.data, cap.provider)
    assert not cut.complete
    again = llm_rx.from_native(llm_rx.to_native(cut, cap.provider), cap.provider)
    assert not again.complete
    assert again.error is not None
    assert again.error.kind == "incomplete"
    assert again.content == cut.content


@pytest.mark.parametrize("cap", COUNTERPARTS, ids=lambda c: c.name)
def test_a_recorded_non_stream_body_reads_as_its_stream_does(cap: Capture) -> None:
    assert cap.nonstream is not None
    stream = llm_rx.reassemble(cap.data, cap.provider)
    body = cap.nonstream.read_bytes()
    if stream.error is not None and stream.error.kind == "provider":
        with pytest.raises(ProviderError) as caught:  # (the same failure, as an error body)
            llm_rx.from_native(body)
        # (a separate call: the same failure in other words)
        assert caught.value.message.split(":")[0] == stream.error.message.split(":")[0]
        return
    response = llm_rx.from_native(body)
    assert response.provider == stream.provider
    assert response.complete == stream.complete
    assert response.stop_reason == stream.stop_reason
    kinds, stream_kinds = {b.type for b in response.content}, {b.type for b in stream.content}
    if cap.name in _DIFFERENT_CALLS:
        assert stream_kinds < kinds, _DIFFERENT_CALLS[cap.name]
    else:
        assert kinds == stream_kinds
    assert response.usage.input_tokens is not None
    assert response.usage.output_tokens is not None


@pytest.mark.parametrize(
    ("body", "provider"),
    [
        ({"object": "chat.completion", "choices": []}, "openai-chat"),
        ({"type": "message", "role": "assistant", "content": []}, "anthropic"),
        ({"object": "response", "output": [], "status": "completed"}, "openai-responses"),
        ({"candidates": []}, "gemini"),
        ({"output": {"message": {"content": []}}, "stopReason": "end_turn"}, "bedrock-converse"),
        ({"done": True, "message": {"role": "assistant", "content": "hi"}}, "ollama"),
        ({"choices": [{"index": 0, "message": {"content": "hi"}}]}, "openai-chat"),
    ],
)
def test_from_native_tells_the_provider_from_the_body(body: dict[str, Any], provider: str) -> None:
    assert llm_rx.from_native(body).provider == provider


@pytest.mark.parametrize(
    ("body", "error_type", "message"),
    [
        (b'{"error": {"message": "Rate limit", "type": "requests", "code": "rate_limit"}}',
         "requests", "Rate limit"),
        (b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
         "overloaded_error", "Overloaded"),
        (b'{"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}}',
         "RESOURCE_EXHAUSTED", "Quota"),
        (b'{"error": "model \\"x\\" not found"}', None, 'model "x" not found'),
    ],
    ids=["openai", "anthropic", "gemini", "ollama"],
)
def test_from_native_of_an_error_body_is_a_provider_error(
    body: bytes, error_type: str | None, message: str
) -> None:
    with pytest.raises(ProviderError) as caught:
        llm_rx.from_native(body)
    assert caught.value.error_type == error_type
    assert caught.value.message == message
    assert caught.value.raw == body.decode()


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b'{"hello": "world"}'])
def test_from_native_of_no_reply_is_a_wire_format_error(body: bytes) -> None:
    with pytest.raises(WireFormatError):
        llm_rx.from_native(body)


def test_from_native_refuses_a_str_at_the_call() -> None:
    with pytest.raises(TypeError, match="bytes or a parsed dict"):
        llm_rx.from_native('{"candidates": []}')  # type: ignore[arg-type]
