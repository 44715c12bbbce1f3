"""openai-responses against the official SDK and the recorded non-stream bodies.

- Reassembly against openai's own accumulator, ``ResponseStreamState``, fed the capture's
  payloads (read here without llm-rx), on every capture: it takes them all. Where it is wrong
  (PITFALLS 17: the ``encrypted_content`` it reports is ``response.completed``'s, a different
  encryption from the item's ``output_item.done``) the case says so and asserts the wire.
- ``to_native`` validates as ``openai.types.responses.Response``, gives back the wire's own
  ``output_item.done`` items, and has the structure of the ``.nonstream.json`` counterparts
  (compared as ``tests/test_native.py`` does for chat, output items matched by type).
"""

from __future__ import annotations

import copy
import json
import warnings
from functools import cache
from typing import Any

import pytest
from anthropic.types import Message
from openai import omit
from openai._models import construct_type  # how the SDK's own stream builds its events
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.chat import ChatCompletion
from openai.types.responses import Response as SDKResponse
from openai.types.responses import ResponseStreamEvent
from pydantic import ValidationError

import llm_rx
from llm_rx import ApprovalRequestBlock, OpaqueBlock, TextBlock, ThinkingBlock, ToolCallBlock
from tests.captures import CAPTURES, Capture, capture, responses_terminal
from tests.test_contract_sdk import frames, params, response, sdk_dict
from tests.test_native import (
    NEVER_STREAMED,
    STREAMED,
    _walk,
    collapse,
    nonstream_body,
    shape_diffs,
)

pytestmark = pytest.mark.oracle

# The streams that end with response.completed: the SDK's stream helper is the oracle, and it
# has no final response for a stream that ends failed or incomplete (it raises); those are read
# against their own terminal frame in test_responses_unfinished.py.
RESPONSES = [cap for cap in CAPTURES if cap.provider == "openai-responses"
             and responses_terminal(cap.name) == "response.completed"]
COUNTERPARTS = [cap for cap in RESPONSES if cap.nonstream is not None]


def test_responses_captures_all_decode_complete() -> None:
    # Every case below is parametrised over these lists: an empty one would pass vacuously.
    assert len(RESPONSES) >= 19
    assert len(COUNTERPARTS) >= 7
    assert all(response(cap.name).complete for cap in RESPONSES)


def wire_items(name: str) -> list[dict[str, Any]]:
    """The ``output_item.done`` items of the capture, in output order."""
    done = [frame.data for frame in frames(name)
            if frame.data.get("type") == "response.output_item.done"]
    return [frame["item"] for frame in sorted(done, key=lambda frame: frame["output_index"])]


def final_response(name: str) -> dict[str, Any]:
    [frame] = [f.data for f in frames(name) if f.data.get("type") == "response.completed"]
    body: dict[str, Any] = frame["response"]
    return body


# -- ResponseStreamState as the oracle -------------------------------------------------------


@cache
def sdk_final(name: str) -> Any:
    """The SDK's final response for the capture; raises without ``response.completed``."""
    return sdk_fold([frame.data for frame in frames(name)])


def sdk_fold(payloads: list[dict[str, Any]]) -> Any:
    state = ResponseStreamState(input_tools=omit, text_format=omit)
    final = None
    with warnings.catch_warnings():
        # Its own parse of the final response dumps it with warnings on: a web-search source of
        # type "api" (on the wire) is unknown to its types and warns.
        warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning)
        for payload in payloads:
            for event in state.handle_event(construct_type(type_=ResponseStreamEvent,
                                                            value=payload)):
                if event.type == "response.completed":
                    final = event.response
    if final is None:  # what ResponseStream.get_final_response() raises on
        raise RuntimeError("Didn't receive a `response.completed` event.")
    return final


def items_of(resp: llm_rx.Response) -> list[list[Any]]:
    """The canonical blocks grouped by the output item they came from, in order."""
    groups: dict[Any, list[Any]] = {}
    for block in resp.content:
        groups.setdefault((block.meta or {})["item_id"], []).append(block)
    return list(groups.values())


@pytest.mark.parametrize("cap", params(RESPONSES))
def test_openai_responses_items_match_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    sdk_items = [sdk_dict(item) for item in sdk_final(cap.name).output]
    groups = items_of(resp)
    assert len(groups) == len(sdk_items)
    for blocks, item, wire in zip(groups, sdk_items, wire_items(cap.name), strict=True):
        kind = item["type"]
        # The item as it streamed (OpenRouter's response.completed renames its reasoning item:
        # one source, the stream's, is kept).
        assert (blocks[0].meta or {})["item_id"] == wire["id"]
        if cap.name != "openrouter/responses-raw-cot.sse" or kind != "reasoning":
            assert wire["id"] == item["id"]
        if kind == "message":
            texts = [part.get("text", part.get("refusal")) for part in item["content"]]
            assert [block.text for block in blocks] == texts
            assert [getattr(b, "citations", []) for b in blocks] == [
                part.get("annotations", []) for part in item["content"]]
        elif kind == "reasoning":
            parts = [p["text"] for p in item["summary"]] + [
                p["text"] for p in item.get("content") or ()]
            assert [block.text for block in blocks if block.text] == parts
            assert all(isinstance(block, ThinkingBlock) for block in blocks)
            # PITFALLS 17: the SDK reports response.completed's encryption; the signature is
            # the output_item.done one (same item, another encryption where OpenAI re-encrypts).
            signature = blocks[0].signature
            assert signature == wire.get("encrypted_content")
            if cap.name == "openai/responses-web-search.sse":
                assert signature != item["encrypted_content"]
        elif kind in ("function_call", "custom_tool_call"):
            [block] = blocks
            assert isinstance(block, ToolCallBlock)
            raw = item["arguments"] if kind == "function_call" else item["input"]
            assert (block.id, block.name, block.raw_arguments) == (item["call_id"], item["name"],
                                                                    raw)
            assert block.arguments == (json.loads(raw) if kind == "function_call" else None)
        elif kind == "mcp_approval_request":  # (the SDK's typed McpApprovalRequest)
            [block] = blocks
            assert isinstance(block, ApprovalRequestBlock)
            assert (block.id, block.name, block.server, block.raw) == (
                item["id"], item["name"], item["server_label"], wire)
            assert block.arguments == json.loads(item["arguments"])
        else:
            [block] = blocks
            assert isinstance(block, OpaqueBlock)
            # Verbatim from its output_item.done (the SDK reports response.completed's copy).
            assert (block.kind, block.raw) == (kind, wire)


@pytest.mark.parametrize("cap", params(RESPONSES))
def test_openai_responses_usage_model_and_stop_match_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    final = sdk_final(cap.name)
    usage = sdk_dict(final.usage)
    assert resp.usage.input_tokens == usage["input_tokens"]
    assert resp.usage.output_tokens == usage["output_tokens"]
    assert resp.usage.cache_read_tokens == usage["input_tokens_details"]["cached_tokens"]
    assert resp.usage.reasoning_tokens == usage["output_tokens_details"]["reasoning_tokens"]
    assert (resp.model, resp.id) == (final.model, final.id)
    assert resp.text == final.output_text
    assert final.status == "completed"
    client = {"function_call", "custom_tool_call", "apply_patch_call", "mcp_approval_request"}
    expected = "tool_use" if {item.type for item in final.output} & client else "end_turn"
    assert (resp.complete, resp.stop_reason) == (True, expected)


@pytest.mark.parametrize(
    "name", ["openai/responses-reasoning-summary.sse", "openai/responses-function-call.sse"]
)
def test_openai_responses_sdk_raises_without_completed_llm_rx_keeps_the_reply(
    name: str,
) -> None:
    # PITFALLS 29: the SDK's helper has no incomplete result; llm-rx keeps what arrived.
    payloads = [frame.data for frame in frames(name)
                if frame.data.get("type") != "response.completed"]
    with pytest.raises(RuntimeError, match=r"response\.completed"):
        sdk_fold(payloads)
    data = capture(name).data
    resp = llm_rx.reassemble(data[: data.index(b"event: response.completed")],
                             "openai-responses")
    full = response(name)
    assert (resp.complete, resp.stop_reason) == (False, "interrupted")
    assert resp.text == full.text
    assert [b.type for b in resp.content] == [b.type for b in full.content]
    assert resp.usage.input_tokens is None


# -- to_native -------------------------------------------------------------------------------

# Required by today's SDK type but absent from streams (and bodies) recorded before it existed.
SDK_NEWER_THAN_WIRE = {("usage", "input_tokens_details", "cache_write_tokens")}
# Items the SDK type is narrower than the wire for; the item given back is the wire's, verbatim.
SDK_NARROWER_THAN_WIRE = {
    # action.sources[] of type "api" (a weather source): the SDK knows only type "url".
    "openai/responses-web-search.sse": 1,
}


def validation_errors(body: dict[str, Any]) -> set[tuple[Any, ...]]:
    try:
        SDKResponse.model_validate(body)
    except ValidationError as error:
        return {tuple(e["loc"]) for e in error.errors()}
    return set()


def wire_usage_has(name: str, key: str) -> bool:
    return key in final_response(name)["usage"].get("input_tokens_details", {})


@pytest.mark.parametrize("cap", params(RESPONSES))
def test_to_native_responses_validates_as_sdk_response(cap: Capture) -> None:
    native = copy.deepcopy(llm_rx.to_native(response(cap.name), "openai-responses"))
    failed = validation_errors(native)
    narrower = SDK_NARROWER_THAN_WIRE.get(cap.name)
    if narrower is not None:
        outside = {loc for loc in failed if loc[:2] != ("output", narrower)}
        assert outside != failed, "the SDK takes this item now: drop it from the list"
        assert native["output"][narrower] == wire_items(cap.name)[narrower]
        failed = outside
    assert failed <= SDK_NEWER_THAN_WIRE, failed
    if failed:  # a field today's type requires that the recorded wire never had
        assert not wire_usage_has(cap.name, "cache_write_tokens")
        native["usage"]["input_tokens_details"]["cache_write_tokens"] = 0
    if narrower is None:
        parsed = SDKResponse.model_validate(native)
        assert parsed.output_text == response(cap.name).text
        assert parsed.model == response(cap.name).model


# The only differences from the wire's items: the logprobs of output_text.done are rounded
# (-0.0 for -1.9e-07); the deltas' full-precision values are given back.
ROUNDED_LOGPROBS = {"openai/responses-logprobs.sse"}


@pytest.mark.parametrize("cap", params(RESPONSES))
def test_to_native_responses_output_is_the_wire_s_items(cap: Capture) -> None:
    native = llm_rx.to_native(response(cap.name), "openai-responses")
    expected = wire_items(cap.name)
    if cap.name in ROUNDED_LOGPROBS:
        for ours, theirs in zip(native["output"], expected, strict=True):
            for part, wire_part in zip(ours["content"], theirs["content"], strict=True):
                tokens = [lp["token"] for lp in part["logprobs"]]
                assert tokens == [lp["token"] for lp in wire_part["logprobs"]]
                assert [round(lp["logprob"], 5) for lp in part["logprobs"]] == [
                    round(lp["logprob"], 5) for lp in wire_part["logprobs"]]
                part["logprobs"] = wire_part["logprobs"]
    assert native["output"] == expected
    final = final_response(cap.name)
    assert native["usage"] == final["usage"]
    for key, value in final.items():  # every field of the final response, as it said
        if key not in ("output", "usage"):
            assert native[key] == value, key


LEGITIMATE: dict[str, dict[tuple[str, str], str]] = {
    "openai/responses-annotations-raw.sse": {("missing", "billing"): NEVER_STREAMED},
    "openai/responses-basic-llm.sse": {("missing", "billing"): NEVER_STREAMED},
    "openai/responses-code-interpreter-reasoning.sse": {("missing", "billing"): NEVER_STREAMED},
    "openai/responses-logprobs.sse": {
        ("missing", "billing"): NEVER_STREAMED,
        ("extra", "completed_at"): STREAMED,
        ("extra", "frequency_penalty"): STREAMED,
        ("extra", "presence_penalty"): STREAMED,
    },
    "openai/responses-web-search.sse": {
        ("extra", "output[web_search_call].action.sources"): STREAMED,
    },
    "openai/responses-tool-use-llm.sse": {("missing", "billing"): NEVER_STREAMED},
}
# Output item types where the two generations took another course (streamed, non-streamed).
OTHER_COURSE: dict[str, tuple[list[str], list[str], str]] = {
    "openai/responses-annotations-raw.sse": (
        ["web_search_call", "message"], ["web_search_call", "message"],
        "the same course; the streamed reply searched twice (repeats collapse)",
    ),
    "openai/responses-code-interpreter-reasoning.sse": (
        ["reasoning", "code_interpreter_call", "message"],
        ["reasoning", "code_interpreter_call", "reasoning", "message"],
        "the non-streamed reply reasoned again after running its code",
    ),
}


def streamed_paths(name: str) -> set[str]:
    """Every field path the stream carried: its response snapshots' and its items'."""
    out: set[str] = set()
    for frame in frames(name):
        snapshot = frame.data.get("response")
        if isinstance(snapshot, dict):
            _walk({k: v for k, v in snapshot.items() if k != "output"}, "", out)
    for item in wire_items(name):
        _walk(item, f"output[{item['type']}]", out)
    return out


def output_diffs(native: list[Any], body: list[Any]) -> set[tuple[str, str]]:
    """The keys of the first item of each type present on both sides."""
    diffs: set[tuple[str, str]] = set()
    ours = {item["type"]: item for item in reversed(native)}
    theirs = {item["type"]: item for item in reversed(body)}
    for kind in ours.keys() & theirs.keys():
        diffs |= shape_diffs(ours[kind], theirs[kind], f"output[{kind}]")
    return diffs


@pytest.mark.parametrize("cap", params(COUNTERPARTS))
def test_to_native_responses_structure_matches_nonstream(cap: Capture) -> None:
    native = llm_rx.to_native(response(cap.name), "openai-responses")
    body = nonstream_body(cap)
    diffs = shape_diffs({k: v for k, v in native.items() if k != "output"},
                        {k: v for k, v in body.items() if k != "output"})
    diffs |= output_diffs(native["output"], body["output"])
    legitimate = LEGITIMATE.get(cap.name, {})
    streamed = streamed_paths(cap.name)
    for (kind, path), reason in legitimate.items():
        if reason == NEVER_STREAMED:
            assert kind == "missing"
            assert path not in streamed
        else:
            assert reason == STREAMED
            assert kind == "extra"
            assert path in streamed
    assert diffs - legitimate.keys() == set()
    assert legitimate.keys() - diffs == set()  # a listed difference that is gone fails too
    ours = collapse([item["type"] for item in native["output"]])
    theirs = collapse([item["type"] for item in body["output"]])
    if cap.name in OTHER_COURSE:
        assert (ours, theirs) == OTHER_COURSE[cap.name][:2]
    else:
        assert ours == theirs


# -- re-encoding across providers ------------------------------------------------------------

OTHERS = [
    "anthropic/redacted-thinking.sse",
    "anthropic/thinking-signature.sse",
    "anthropic/tool-use-input-json-delta.sse",
    "anthropic/web-search-citations.sse",
    "openai/chat-parallel-tool-calls.sse",
    "openai/chat-refusal.sse",
    "openrouter/web-search-annotations.sse",
]


@pytest.mark.parametrize("name", OTHERS)
def test_to_native_responses_reencodes_another_provider(name: str) -> None:
    resp = response(name)
    native = llm_rx.to_native(resp, "openai-responses")
    parsed = SDKResponse.model_validate(native)
    assert parsed.output_text == resp.text
    assert parsed.model == resp.model
    calls = [(i.call_id, i.name, i.arguments) for i in parsed.output if i.type == "function_call"]
    # A call with no argument fragments ("", arguments {}) is "{}" in a Responses body.
    assert calls == [(c.id, c.name, c.raw_arguments or "{}") for c in resp.tool_calls]
    for item in parsed.output:
        if item.type == "function_call":
            assert json.loads(item.arguments) == next(
                c.arguments for c in resp.tool_calls if c.id == item.call_id)
    reasoning = [i for i in parsed.output if i.type == "reasoning"]
    assert len(reasoning) == len([b for b in resp.content if isinstance(b, ThinkingBlock)])
    # The signature (or redacted data) rides along as encrypted_content, as the stream
    # carries it: a client that sends the item back through llm-rx keeps its next turn valid.
    thinking = [b for b in resp.content if isinstance(b, ThinkingBlock)]
    assert [item.encrypted_content for item in reasoning] == [b.signature for b in thinking]
    assert parsed.usage is not None
    assert parsed.usage.input_tokens == resp.usage.input_tokens
    assert parsed.status == "completed"


@pytest.mark.parametrize(
    "name", ["openai/responses-phase-commentary.sse", "openai/responses-reasoning-summary.sse"]
)
def test_to_native_other_providers_from_a_responses_reply(name: str) -> None:
    resp = response(name)
    chat = ChatCompletion.model_validate(llm_rx.to_native(resp, "openai-chat"))
    assert chat.choices[0].message.content == resp.text
    assert [tc.function.arguments for tc in chat.choices[0].message.tool_calls or ()] == [
        c.raw_arguments for c in resp.tool_calls]
    message = Message.model_validate(llm_rx.to_native(resp, "anthropic"))
    texts = [block.text for block in message.content if block.type == "text"]
    assert "".join(texts) == resp.text
    assert message.stop_reason == ("tool_use" if resp.tool_calls else "end_turn")


def test_to_native_responses_text_parts_of_one_message_stay_one_item() -> None:
    resp = response("openai/responses-basic-llm.sse")
    text = resp.content[0]
    assert isinstance(text, TextBlock)
    doubled = resp.model_copy(update={"content": [text, text.model_copy(update={"text": "!"})]})
    native = llm_rx.to_native(doubled, "openai-responses")
    [item] = native["output"]
    assert [part["text"] for part in item["content"]] == ["pong", "!"]
