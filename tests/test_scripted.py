"""``llm_rx.testing.reply`` and the events of a reply: a scripted ``Response`` written in any
provider's wire by llm-rx's own encoders reads back as the same reply."""

from __future__ import annotations

import base64
import re
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

import llm_rx
from llm_rx.encoders import ENCODERS, make_encoder
from llm_rx.events import Dropped, SignatureDelta, ToolArgsDelta
from llm_rx.response import ToolCallBlock, Usage
from llm_rx.serve._scripted import response_events
from llm_rx.testing import reply
from llm_rx.wire.providers import PROVIDERS

SIGNED = {"anthropic", "bedrock-converse", "gemini", "gemini-json-array", "openai-chat",
          "openai-responses"}


def full() -> llm_rx.Response:
    return reply("Sunny.", thinking="Weather asked.",
                 tool_calls=[("get_weather", {"city": "Paris"}),
                             {"name": "lookup", "arguments": '{"q": "x"}', "id": "call_9"}],
                 usage={"input_tokens": 10, "output_tokens": 4}, stop="tool_use",
                 model="m-1")


def test_reply_builds_a_complete_response() -> None:
    response = full()
    assert response.complete
    assert response.stop_reason == "tool_use"
    assert response.model == "m-1"
    assert [block.type for block in response.content] == ["thinking", "text", "tool_call",
                                                          "tool_call"]
    first, second = response.tool_calls
    assert (first.id, first.name, first.arguments) == ("call_scripted_1", "get_weather",
                                                       {"city": "Paris"})
    assert (second.id, second.arguments, second.raw_arguments) == ("call_9", {"q": "x"},
                                                                   '{"q": "x"}')
    assert response.usage == Usage(input_tokens=10, output_tokens=4)
    assert response.content[0].signature == full().content[0].signature  # type: ignore[union-attr]


def test_reply_defaults_report_nothing() -> None:
    response = reply("hi")
    assert response.usage == Usage()
    assert response.stop_reason == "end_turn"
    assert response.model == "scripted"
    assert reply().content == []


def test_reply_takes_a_tool_call_block_and_keeps_unparsed_arguments() -> None:
    block = ToolCallBlock(name="f", arguments=None, raw_arguments='{"a": ')
    (call,) = reply(tool_calls=[block]).tool_calls
    assert (call.id, call.arguments, call.raw_arguments) == ("call_scripted_1", None, '{"a": ')
    (raw,) = reply(tool_calls=[{"name": "g", "arguments": "{oops"}]).tool_calls
    assert raw.arguments is None
    with pytest.raises(TypeError, match="a tool call is"):
        reply(tool_calls=[{"arguments": {}}])


def test_arguments_go_out_in_two_fragments() -> None:
    fragments = [e.fragment for e in response_events(full()) if isinstance(e, ToolArgsDelta)]
    assert fragments[:2] == ['{"city":', '"Paris"}']


# (every provider wire; the browser targets are no provider's, and read back by no decoder)
WIRES = sorted(target for target in ENCODERS
               if target in PROVIDERS or target == "gemini-json-array")


@pytest.mark.parametrize("target", WIRES)
def test_every_wire_reads_back_the_scripted_reply(target: str) -> None:
    dropped: list[Dropped] = []
    encoder = make_encoder(target, dropped)
    body = encoder.encode(response_events(full())) + encoder.finish(None)
    back = llm_rx.reassemble(body, "gemini" if target == "gemini-json-array" else target)
    assert back.complete
    assert (back.text, back.thinking, back.stop_reason) == ("Sunny.", "Weather asked.",
                                                            "tool_use")
    assert [(c.name, c.arguments) for c in back.tool_calls] == [
        ("get_weather", {"city": "Paris"}), ("lookup", {"q": "x"})]
    assert (back.usage.input_tokens, back.usage.output_tokens) == (10, 4)
    signatures = {getattr(block, "signature", None) for block in back.content} - {None}
    signature = full().content[0].signature  # type: ignore[union-attr]
    if target in SIGNED:
        assert signatures == {signature}
    else:
        assert signatures == set()
        assert [item.what for item in dropped] == ["signature"]


def test_every_provider_stream_encoder_is_checked() -> None:
    assert len(WIRES) >= 8


def test_the_events_carry_the_signature_on_its_block() -> None:
    (signed,) = [e for e in response_events(full()) if isinstance(e, SignatureDelta)]
    assert signed.index == 0


def test_the_stand_in_signature_is_base64_that_every_alphabet_gives_back() -> None:
    # (google-genai reads a thoughtSignature as base64 bytes and writes them back: '-' came
    # back '+', and the next turn's signature was not the one sent)
    signature = full().content[0].signature  # type: ignore[union-attr]
    assert signature is not None
    assert re.fullmatch(r"[A-Za-z0-9]+", signature)  # (no '+/' nor '-_': either alphabet)
    assert len(signature) % 4 == 0  # (no padding, no spare bits: it decodes to whole bytes)
    assert base64.b64encode(base64.b64decode(signature, validate=True)).decode() == signature
    assert base64.urlsafe_b64encode(base64.urlsafe_b64decode(signature)).decode() == signature
    assert reply(thinking="other").content[0].signature != signature  # type: ignore[union-attr]


@pytest.mark.parametrize("usage", [{"prompt_tokens": 3}, {"input_tokens": 1, "total": 2}])
def test_an_unknown_usage_key_is_an_error_not_a_reply_without_usage(
    usage: dict[str, int],
) -> None:
    with pytest.raises(ValueError, match="usage") as raised:
        reply("hi", usage=usage)
    assert next(iter(usage.keys() - set(Usage.model_fields))) in str(raised.value)
    with pytest.raises(ValidationError, match="prompt_tokens"):
        Usage(prompt_tokens=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="prompt_tokens"):
        llm_rx.Response.model_validate({"provider": "scripted",
                                        "usage": {"prompt_tokens": 3}})


def test_the_usage_json_form_still_reads_back() -> None:
    usage = Usage(input_tokens=3, output_tokens=1, native={"prompt_tokens": 3})
    assert Usage.model_validate_json(usage.model_dump_json()) == usage
    response = full()
    assert llm_rx.Response.model_validate_json(response.model_dump_json()) == response


@pytest.mark.parametrize("call", [
    ToolCallBlock(name="f", arguments={"a": 1}),
    ToolCallBlock.model_validate({"name": "f", "arguments": {"a": 1}}),
    ToolCallBlock.model_validate({"name": "f", "raw_arguments": '{"a": 1}'}),
    {"name": "f", "arguments": {"a": 1}},
    ("f", '{"a": 1}'),
])
def test_a_call_given_one_form_of_its_arguments_carries_both(call: Any) -> None:
    (block,) = reply(tool_calls=[call]).tool_calls
    assert block.arguments == {"a": 1}
    assert orjson.loads(block.raw_arguments) == {"a": 1}
    assert block.id == "call_scripted_1"
    fragments = "".join(e.fragment for e in response_events(reply(tool_calls=[call]))
                        if isinstance(e, ToolArgsDelta))
    assert orjson.loads(fragments) == {"a": 1}
