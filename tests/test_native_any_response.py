"""``to_native`` and the JSON form on any ``Response`` a decoder may build: never an exception
other than an ``LlmRxError``, always a JSON body, and the JSON form read back is the same."""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings

import llm_rx
from llm_rx.native import ENCODERS
from llm_rx.response import OpaqueBlock, Response, TextBlock, ThinkingBlock, ToolCallBlock
from tests.strategies import responses

_PROPERTY = settings(max_examples=200, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])


def _body(response: Response, provider: str) -> bytes | str:
    try:
        return orjson.dumps(llm_rx.to_native(response, provider))
    except llm_rx.LlmRxError as error:  # (typed, the only kind allowed)
        return f"{type(error).__name__}: {error}"


def _bodies(response: Response) -> dict[str, bytes | str]:
    return {provider: _body(response, provider) for provider in sorted(ENCODERS)}


@_PROPERTY
@given(responses())
def test_native_any_response_encodes_for_every_provider(response: Response) -> None:
    _bodies(response)  # another provider's reply: re-encoded from its canonical fields
    for provider in ENCODERS:  # the provider's own reply: its meta and extras read too
        _body(response.model_copy(update={"provider": provider}), provider)


@_PROPERTY
@given(responses())
def test_native_any_response_json_round_trip(response: Response) -> None:
    again = Response.model_validate_json(response.model_dump_json())
    assert again == response
    assert Response.model_validate(response.model_dump()) == response
    assert _bodies(again) == _bodies(response)


# Shapes the property found, pinned (no decoder writes them, but a Response may hold them).


def test_native_openai_chat_reasoning_field_not_a_string() -> None:
    for field in (["reasoning"], 3, None):
        block = ThinkingBlock(text="hm", meta={"field": field})
        body = llm_rx.to_native(Response(provider="openai-chat", content=[block]), "openai-chat")
        message = body["choices"][0]["message"]
        assert message["reasoning_content"] == "hm"  # the default spelling
        orjson.dumps(body)  # every key a string


def test_native_openai_chat_indexed_delta_items_with_unhashable_index() -> None:
    first = OpaqueBlock(kind="delta.audio", raw={"audio": [{"index": [0], "a": 1}]})
    second = OpaqueBlock(kind="delta.audio", raw={"audio": [{"index": [0], "b": 2},
                                                             {"index": 1, "c": 3}]})
    body = llm_rx.to_native(Response(provider="openai-chat", content=[first, second]),
                            "openai-chat")
    assert body["choices"][0]["message"]["audio"] == [
        {"index": [0], "a": 1}, {"index": [0], "b": 2}, {"index": 1, "c": 3}]


def test_native_openai_responses_unmodelled_part_channel_not_a_list_name() -> None:
    raw = {"type": "new_part"}
    item = {"type": "message", "role": "assistant"}
    for channel, place in ((["content"], "content"), ("role", "content"),
                           ("extras", "extras")):
        meta = {"channel": channel, "item_id": "m", "item": item}
        block = OpaqueBlock(kind="new_part", raw=raw, meta=meta)
        body = llm_rx.to_native(Response(provider="openai-responses", content=[block]),
                                "openai-responses")
        assert body["output"][0][place] == [raw]  # kept, never dropped


def test_native_bedrock_tool_use_fields_not_an_object() -> None:
    for fields in ([None], "type", 5):
        call = ToolCallBlock(id="t", name="f", raw_arguments="{}", arguments={},
                             meta={"toolUse": fields})
        body = llm_rx.to_native(Response(provider="bedrock-converse", content=[call]),
                                "bedrock-converse")
        assert body["output"]["message"]["content"] == [
            {"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}]


def test_native_usage_native_not_an_object_is_re_encoded() -> None:
    # ``native`` is not validated (it is the provider's object verbatim), so read back from
    # JSON it may be anything: the counts are encoded instead.
    response = Response.model_validate(
        {"provider": "anthropic", "usage": {"input_tokens": 3, "native": [1, 2]}})
    assert llm_rx.to_native(response, "anthropic")["usage"] == {
        "input_tokens": 3, "output_tokens": 0}


def test_native_anthropic_citation_whose_type_is_no_string() -> None:
    block = TextBlock(text="a", citations=[{"type": []}, {"type": {"x": 1}}])
    body = llm_rx.to_native(Response(provider="anthropic", content=[block]), "anthropic")
    assert body["content"] == [{"type": "text", "text": "a"}]  # (no citation of Anthropic's)
