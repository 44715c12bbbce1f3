"""The canonical ``Response`` JSON is lossless: read back, it is the same response and gives
the same native body, byte for byte, for every recorded capture and every encoder."""

from __future__ import annotations

from functools import cache
from typing import Any

import orjson
import pytest

import llm_rx
from llm_rx.native import ENCODERS
from llm_rx.response import (
    WITHOUT_NATIVE,
    Choice,
    OpaqueBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from tests.captures import CAPTURES, Capture
from tests.test_contract_sdk import params

CANONICAL_KEYS = {"provider", "model", "id", "content", "stop_reason", "complete", "usage",
                  "stop_details", "choices", "error"}
USAGE_KEYS = {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
              "reasoning_tokens"}


@cache
def reassembled(cap: Capture) -> Response | None:
    try:
        return llm_rx.reassemble(cap.data, cap.provider)
    except llm_rx.LlmRxError:  # not a reply at all (Ollama pull progress)
        return None


READABLE = [cap for cap in CAPTURES if reassembled(cap) is not None]


def natives(response: Response) -> dict[str, bytes]:
    return {p: orjson.dumps(llm_rx.to_native(response, p)) for p in sorted(ENCODERS)}


def test_response_captures_cover_every_provider() -> None:
    assert len(READABLE) >= 90
    assert {cap.provider for cap in READABLE} >= set(ENCODERS)


@pytest.mark.parametrize("cap", params(READABLE))
def test_response_json_round_trip_is_the_same_response(cap: Capture) -> None:
    response = reassembled(cap)
    assert response is not None
    again = Response.model_validate_json(response.model_dump_json())
    assert again == response
    assert again.model_dump_json() == response.model_dump_json()


@pytest.mark.parametrize("cap", params(READABLE))
def test_response_json_round_trip_gives_the_same_native_bodies(cap: Capture) -> None:
    response = reassembled(cap)
    assert response is not None
    again = Response.model_validate_json(response.model_dump_json())
    assert natives(again) == natives(response)


@pytest.mark.parametrize("cap", params(READABLE))
def test_response_python_dump_round_trip_is_the_same_response(cap: Capture) -> None:
    response = reassembled(cap)
    assert response is not None
    assert Response.model_validate(response.model_dump()) == response
    assert Response.model_validate(response.model_dump(by_alias=False)) == response
    assert Response.model_validate(orjson.loads(orjson.dumps(
        response.model_dump(mode="json")))) == response


def test_response_json_keeps_the_canonical_keys() -> None:
    response = Response(provider="anthropic", content=[TextBlock(text="hi")])
    dumped = response.model_dump(mode="json")
    assert set(dumped) >= CANONICAL_KEYS
    assert set(dumped["usage"]) >= USAGE_KEYS
    assert dumped["content"] == [{"type": "text", "text": "hi", "signature": None,
                                  "citations": [], "native": None}]


def test_response_json_native_places() -> None:
    # Each object has one ``native`` place for what only the provider's own body needs.
    block = ToolCallBlock(id="c", name="f", raw_arguments="{", arguments=None,
                          meta={"type": "function"})
    response = Response(
        provider="openai-chat",
        content=[block],
        usage=Usage(input_tokens=3, native={"prompt_tokens": 3}),
        choices=[Choice(index=0, content=[block], native_stop_reason="tool_calls",
                        extra={"seed": 1}),
                 Choice(index=1, native_stop_reason="stop")],
        native_stop_reason="tool_calls",
        choice_extra={"seed": 1},
    )
    dumped: dict[str, Any] = orjson.loads(response.model_dump_json())
    assert dumped["native"] == {"stop_reason": "tool_calls", "choice_extra": {"seed": 1}}
    assert dumped["content"][0]["native"] == {"type": "function"}
    assert dumped["usage"]["native"] == {"prompt_tokens": 3}
    assert dumped["choices"][0]["native"] == {"stop_reason": "tool_calls",
                                              "extra": {"seed": 1}}
    assert dumped["choices"][1]["native"] == {"stop_reason": "stop", "extra": {}}
    assert Response.model_validate(dumped) == response


def test_response_blocks_read_meta_under_either_name() -> None:
    assert ThinkingBlock.model_validate({"native": {"field": "reasoning"}}).meta == {
        "field": "reasoning"}
    assert ThinkingBlock.model_validate({"meta": {"field": "reasoning"}}).meta == {
        "field": "reasoning"}
    assert OpaqueBlock(kind="x", meta={"channel": "c"}).model_dump()["native"] == {
        "channel": "c"}


def test_response_dump_native_follows_include_and_exclude() -> None:
    response = Response(provider="gemini", native_stop_reason="STOP",
                        choices=[Choice(index=0), Choice(index=1)])
    assert response.model_dump(include={"provider"}) == {"provider": "gemini"}
    assert "native" not in response.model_dump(exclude={"native"})
    assert response.model_dump(exclude={"choice_extra"})["native"] == {"stop_reason": "STOP"}


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {key for value in node.values() for key in _keys(value)}
    if isinstance(node, list):
        return {key for value in node for key in _keys(value)}
    return set()


def test_response_dump_without_native_is_the_canonical_json_alone() -> None:
    block = TextBlock(text="a", meta={"field": "x"})
    response = Response(provider="openai-chat", content=[block],
                        usage=Usage(input_tokens=1, native={"prompt_tokens": 1}),
                        choices=[Choice(index=0, content=[block], native_stop_reason="stop"),
                                 Choice(index=1, extra={"seed": 2})],
                        native_stop_reason="stop", choice_extra={"seed": 1})
    dumped = response.model_dump(mode="json", exclude=WITHOUT_NATIVE)
    assert "native" not in _keys(dumped)
    assert set(dumped) >= CANONICAL_KEYS
    assert set(dumped["usage"]) == USAGE_KEYS
    assert set(dumped["choices"][0]) == {"index", "content", "stop_reason", "logprobs"}
    assert dumped["content"] == [{"type": "text", "text": "a", "signature": None,
                                  "citations": []}]
