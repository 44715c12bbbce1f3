"""The native bodies write the stop values and usage the stream encoders write (one table per
provider, ``llm_rx/native/_tables.py``), and differ from a stream only where ``BODY_STOP``
and the ``*_body_usage`` functions say: each such difference is pinned here."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from llm_rx import to_native
from llm_rx.encoders._tables import (
    STOP,
    anthropic_usage,
    bedrock_usage,
    cohere_usage,
    gemini_usage,
    ollama_usage,
    openai_chat_usage,
)
from llm_rx.native._tables import BODY_STOP
from llm_rx.response import Response, StopReason, TextBlock, Usage

REASONS: list[StopReason] = ["end_turn", "max_tokens", "tool_use", "stop_sequence", "refusal",
                             "content_filter", "pause_turn"]
_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
           "reasoning_tokens")
#: every combination of reported and unreported counts (the cache and reasoning counts
#: parts of the input and output)
USAGES = [
    Usage.model_validate({name: value for name, value, on in zip(
        _COUNTS, (100, 40, 30, 7, 9), mask, strict=True) if on})
    for mask in itertools.product((False, True), repeat=len(_COUNTS))
]

#: where each body says how the reply stopped
STOP_VALUE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "anthropic": lambda body: body["stop_reason"],
    "bedrock-converse": lambda body: body["stopReason"],
    "cohere": lambda body: body["finish_reason"],
    "gemini": lambda body: body["candidates"][0]["finishReason"],
    "ollama": lambda body: body["done_reason"],
    "openai-chat": lambda body: body["choices"][0]["finish_reason"],
    "openai-completions": lambda body: body["choices"][0]["finish_reason"],
}


def _reply(reason: StopReason | None = "end_turn", usage: Usage | None = None) -> Response:
    """Another provider's finished reply (its own spellings would be given back verbatim)."""
    return Response(provider="elsewhere", id="r1", model="m", stop_reason=reason,
                    complete=True, usage=usage or Usage(),
                    content=[TextBlock(text="hi")])


@pytest.mark.parametrize("reason", REASONS)
@pytest.mark.parametrize("provider", sorted(STOP_VALUE))
def test_native_stop_is_the_encoders_table(provider: str, reason: StopReason) -> None:
    expected = STOP.get(provider, STOP["openai-chat"])[reason]
    if provider == "openai-completions" and reason == "tool_use":
        expected = "stop"  # (BODY_STOP: a completion has no tool calls)
    assert STOP_VALUE[provider](to_native(_reply(reason), provider)) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("reason", REASONS)
def test_native_responses_status_is_the_encoders_table(reason: StopReason) -> None:
    body = to_native(_reply(reason), "openai-responses")
    incomplete = STOP["openai-responses"].get(reason)
    assert body["status"] == ("incomplete" if incomplete else "completed")
    assert body["incomplete_details"] == ({"reason": incomplete} if incomplete else None)


@pytest.mark.parametrize("provider", sorted(BODY_STOP))
def test_native_body_stop_is_the_streams_but_for_what_it_lists(provider: str) -> None:
    stream = STOP.get(provider, STOP["openai-chat"])
    own = {reason: value for reason, value in BODY_STOP[provider].items()
           if stream.get(reason) != value}
    assert own  # (else the body's table is the stream's: no entry here)
    for reason, value in BODY_STOP[provider].items():
        body = to_native(_reply(reason), provider)  # type: ignore[arg-type]
        assert STOP_VALUE[provider](body) == value


@pytest.mark.parametrize("usage", USAGES, ids=repr)
def test_native_usage_is_the_streams_where_the_body_has_its_object(usage: Usage) -> None:
    reply = _reply(usage=usage)
    assert to_native(reply, "bedrock-converse").get("usage") == bedrock_usage(usage)
    assert to_native(reply, "cohere").get("usage") == cohere_usage(usage)
    body = to_native(reply, "ollama")
    assert {key: body[key] for key in ("prompt_eval_count", "eval_count") if key in body} == (
        ollama_usage(usage))


@pytest.mark.parametrize("usage", USAGES, ids=repr)
def test_native_usage_differs_from_the_streams_only_as_its_tables_say(usage: Usage) -> None:
    reply = _reply(usage=usage)
    both = usage.input_tokens is not None and usage.output_tokens is not None
    # Anthropic: always written, the two required counts 0 when unreported
    anthropic = to_native(reply, "anthropic")["usage"]
    assert anthropic == {"input_tokens": 0, "output_tokens": 0, **anthropic_usage(usage)}
    # Gemini: a total of the counts reported, always
    gemini = to_native(reply, "gemini").get("usageMetadata")
    if usage.reported:
        total = (usage.input_tokens or 0) + (usage.output_tokens or 0)
        assert gemini == {**(gemini_usage(usage) or {}), "totalTokenCount": total}
    else:
        assert gemini is None
        assert gemini_usage(usage) is None
    # OpenAI chat: written once anything was reported (unreported counts 0), no cache write
    chat = to_native(reply, "openai-chat").get("usage")
    stream = openai_chat_usage(usage.model_copy(update={"cache_write_tokens": None}))
    if both:
        assert chat == stream
    else:
        assert stream is None
        assert (chat is None) == (not usage.reported)
    completions = to_native(reply, "openai-completions").get("usage")
    assert completions == (None if chat is None else {
        key: chat[key] for key in ("prompt_tokens", "completion_tokens", "total_tokens")})
