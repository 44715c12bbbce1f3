"""to_message: the assistant turn for the next request, in the provider's request shape."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import llm_rx
from llm_rx.encoders.messages import DROPPED, MESSAGE_PROVIDERS, MessageDrop
from llm_rx.response import Response

from ..captures import CAPTURES, Capture
from ..native.request_types import check

MINE = [cap for cap in CAPTURES if cap.provider in MESSAGE_PROVIDERS]


@pytest.fixture(scope="module")
def replies() -> dict[str, Response]:
    return {cap.name: llm_rx.reassemble(cap.data, cap.provider) for cap in MINE}


def _strings(node: Any) -> list[str]:
    """Every string in a JSON value, in document order."""
    if isinstance(node, dict):
        return [text for value in node.values() for text in _strings(value)]
    if isinstance(node, list):
        return [text for item in node for text in _strings(item)]
    return [node] if isinstance(node, str) else []


def _in_order(wanted: list[str], strings: list[str]) -> bool:
    found = iter(strings)
    return all(any(text == item for item in found) for text in wanted)


def _signatures(response: Response) -> list[str]:
    return [sig for block in response.content
            if (sig := getattr(block, "signature", None)) is not None]


# Fields a capture's server-tool block carries that the installed SDK's param types do not
# know yet (the block goes back verbatim): checked without them.
NEWER_THAN_SDK = {"anthropic/message-start-prepopulated-content.sse": "abort_reason"}


def _without(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [_without(item, key) for item in value]
    return value


@pytest.mark.parametrize("cap", MINE, ids=lambda cap: cap.name)
def test_to_message_of_every_capture_is_its_providers_request_type(
    cap: Capture, replies: dict[str, Response]
) -> None:
    message = llm_rx.to_message(replies[cap.name], cap.provider)  # type: ignore[call-overload]
    if cap.name in NEWER_THAN_SDK:
        message = _without(message, NEWER_THAN_SDK[cap.name])
    check(cap.provider, message)


@pytest.mark.parametrize("cap", MINE, ids=lambda cap: cap.name)
def test_to_message_keeps_every_signature_byte_for_byte_in_order(
    cap: Capture, replies: dict[str, Response]
) -> None:
    response = replies[cap.name]
    dropped: list[MessageDrop] = []
    message = llm_rx.to_message(response, cap.provider, dropped=dropped)  # type: ignore[call-overload]
    # (only what a request type has no place for: annotations, a search's non-URL sources)
    assert {drop.what for drop in dropped} <= {"citation", "search_source", "tool_call_id"}
    assert _in_order(_signatures(response), _strings(message))


@pytest.mark.parametrize("cap", MINE, ids=lambda cap: cap.name)
def test_to_message_keeps_the_blocks_texts_in_order(
    cap: Capture, replies: dict[str, Response]
) -> None:
    response = replies[cap.name]
    message = llm_rx.to_message(response, cap.provider)  # type: ignore[call-overload]
    texts = [text for block in response.content
             if (text := getattr(block, "text", "")) and block.type != "refusal"]
    if cap.provider in ("openai-chat", "ollama"):  # (one field per kind: joined there)
        texts = [t for t in (response.text, response.thinking) if t]
    assert _in_order(texts, _strings(message)) or _joined_in(texts, message)


def _joined_in(texts: list[str], message: Any) -> bool:
    """Text split over blocks joined in one string (Responses: one item's parts)."""
    strings = _strings(message)
    return all(any(text in item for item in strings) for text in texts)


@pytest.mark.parametrize("target", MESSAGE_PROVIDERS)
def test_to_message_of_another_providers_reply_is_the_targets_type_and_reports_drops(
    target: str, replies: dict[str, Response]
) -> None:
    table = DROPPED[target]
    for cap in MINE:
        if target == cap.provider:
            continue  # (the provider's own reply: above)
        response = replies[cap.name]
        dropped: list[MessageDrop] = []
        message = llm_rx.to_message(response, target, dropped=dropped)  # type: ignore[call-overload]
        check(target, message)
        for drop in dropped:
            assert drop.why in table.values(), (cap.name, drop)
            assert drop.what in table or drop.what.split(":")[0] + ":*" in table, cap.name
            assert 0 <= drop.index < len(response.content), cap.name
        opaque = {drop.index for drop in dropped if drop.what.startswith("opaque:")}
        assert all(response.content[i].type == "opaque" for i in opaque), cap.name


def test_to_message_anthropic_keeps_thinking_redacted_and_server_blocks_verbatim() -> None:
    for name in ("anthropic/thinking-signature.sse", "anthropic/redacted-thinking.sse",
                 "anthropic/web-search-citations.sse"):
        cap = next(cap for cap in MINE if cap.name == name)
        response = llm_rx.reassemble(cap.data)
        body = llm_rx.to_native(response, "anthropic")
        message = llm_rx.to_message(response, "anthropic")
        assert message == {"role": "assistant", "content": body["content"]}
        assert orjson.dumps(message["content"]) == orjson.dumps(body["content"])


def test_to_message_gemini_keeps_the_thought_signature_on_its_part() -> None:
    cap = next(cap for cap in MINE if cap.name == "gemini/sse-function-call-thought-signature.sse")
    response = llm_rx.reassemble(cap.data)
    message = llm_rx.to_message(response, "gemini")
    (call,) = [part for part in message["parts"] if "functionCall" in part]
    assert call["thoughtSignature"] == response.tool_calls[0].signature


def test_to_message_responses_keeps_reasoning_ids_and_encrypted_content() -> None:
    cap = next(cap for cap in MINE if cap.name == "openai/responses-code-interpreter-reasoning.sse")
    response = llm_rx.reassemble(cap.data)
    items = llm_rx.to_message(response, "openai-responses")
    reasoning = [item for item in items if item["type"] == "reasoning"]
    assert reasoning
    assert all(item["id"].startswith("rs_") for item in reasoning)
    native = [item for item in llm_rx.to_native(response, "openai-responses")["output"]]
    assert items == native


def test_to_message_deepseek_reads_back_its_reasoning_content() -> None:
    cap = next(cap for cap in MINE if cap.name == "deepseek/chat-reasoning-content.sse")
    response = llm_rx.reassemble(cap.data)
    message = llm_rx.to_message(response, "openai-chat")
    assert message == {"role": "assistant", "content": response.text,
                       "reasoning_content": response.thinking}


def test_to_message_claude_signatures_cross_between_anthropic_and_bedrock() -> None:
    cap = next(cap for cap in MINE if cap.name == "anthropic/thinking-signature.sse")
    response = llm_rx.reassemble(cap.data)
    dropped: list[MessageDrop] = []
    message = llm_rx.to_message(response, "bedrock-converse", dropped=dropped)
    reasoning = message["content"][0]["reasoningContent"]["reasoningText"]
    assert reasoning["signature"] == response.content[0].signature
    assert dropped == []


def test_to_message_another_models_signature_is_dropped_and_reported() -> None:
    cap = next(cap for cap in MINE if cap.name == "gemini/sse-thought-parts.sse")
    response = llm_rx.reassemble(cap.data)
    dropped: list[MessageDrop] = []
    message = llm_rx.to_message(response, "anthropic", dropped=dropped)
    signatures = _signatures(response)
    assert signatures
    assert not set(signatures) & set(_strings(message))
    assert {drop.what for drop in dropped} >= {"signature"}


def test_to_message_of_an_unknown_provider_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no message shape"):
        llm_rx.to_message(Response(provider="x"), "cohere")  # type: ignore[call-overload]
