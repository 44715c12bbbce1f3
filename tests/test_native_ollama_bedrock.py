"""``to_native`` for ``ollama`` and ``bedrock-converse``: the SDK type, the recorded bodies.

Ollama: the body validates as ``ollama.ChatResponse`` / ``ollama.GenerateResponse`` (the
official client's types) and has the structure of the recorded non-stream bodies. Bedrock has
no SDK type installed (boto3 is no dependency): the body's structure is compared with the
recorded ``Converse`` bodies, content blocks by their Converse kind.

As in ``tests/test_native.py``, a recorded body is another generation of a comparable call:
structure is compared, never text, and every difference is listed with its reason, the reason
checked against the stream. On top of that, a stream built from a recorded body's own values
(split into fragments the way the provider streams them) must give that body back exactly.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import orjson
import pytest
from anthropic.types import Message
from ollama import ChatResponse, GenerateResponse
from openai.types.chat import ChatCompletion

import llm_rx
from llm_rx.response import Response, ToolCallBlock
from llm_rx.wire.eventstream import encode_message
from tests.captures import CAPTURES, HERE, Capture, capture
from tests.test_native import collapse, shape_diffs

NEVER_STREAMED = "the stream never carries this field, so no reassembly can know it"
STREAMED = "the stream carried it; this other generation's body happens not to have it"
OTHER_COURSE = "this reply did not think or call a tool; the recorded cloud reply did"
LOCAL_TIMINGS = "a local server streams these timings; the recorded cloud reply has none"

OLLAMA_TEXT_VS_CLOUD = {
    ("missing", "message.thinking"): OTHER_COURSE,
    ("missing", "message.tool_calls"): OTHER_COURSE,
    ("extra", "load_duration"): LOCAL_TIMINGS,
    ("extra", "prompt_eval_duration"): LOCAL_TIMINGS,
    ("extra", "eval_duration"): LOCAL_TIMINGS,
}
# Stream -> (recorded non-stream body of a comparable call, legitimate differences).
PAIRS: dict[str, tuple[str, dict[tuple[str, str], str]]] = {
    "ollama/generate-gemma3-text.ndjson": ("ollama/generate-gemma3.nonstream.json", {}),
    "ollama/chat-gemma3-text.ndjson": (
        "ollama/cloud-gpt-oss-tool-call-thinking.nonstream.json", OLLAMA_TEXT_VS_CLOUD),
    "ollama/chat-gemma3-format-json.ndjson": (
        "ollama/cloud-gpt-oss-tool-call-thinking.nonstream.json", OLLAMA_TEXT_VS_CLOUD),
    "bedrock/converse-stream-text.eventstream": (
        "bedrock/converse-stream-text.nonstream.json",
        {("extra", "usage.serverToolUsage"): STREAMED},
    ),
    "bedrock/converse-stream-redacted-reasoning.eventstream": (
        "bedrock/converse-stream-redacted-reasoning.nonstream.json",
        {("missing", f"usage.{key}"): NEVER_STREAMED for key in (
            "cacheReadInputTokenCount", "cacheReadInputTokens",
            "cacheWriteInputTokenCount", "cacheWriteInputTokens")},
    ),
    "bedrock/converse-stream-document-citations.eventstream": (
        "bedrock/converse-stream-document-citations.nonstream.json",
        {("missing", f"usage.{key}"): NEVER_STREAMED for key in (
            "cacheReadInputTokenCount", "cacheReadInputTokens",
            "cacheWriteInputTokenCount", "cacheWriteInputTokens")},
    ),
}
OWN = [cap for cap in CAPTURES if cap.provider in ("ollama", "bedrock-converse")]


def params(captures: list[Capture]) -> list[Any]:
    return [pytest.param(cap, id=cap.name) for cap in captures]


@cache
def response(name: str) -> Response:
    cap = capture(name)
    return llm_rx.reassemble(cap.data, cap.provider)


def body(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((HERE / name).read_text())
    return loaded


def _walk(node: Any, path: str, out: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            child = f"{path}.{key}" if path else key
            out.add(child)
            _walk(value, child, out)
    elif isinstance(node, list):
        for item in node:
            _walk(item, f"{path}[]", out)


def eventstream_payloads(data: bytes) -> list[dict[str, Any]]:
    """Every JSON payload of an AWS event stream, read by its length prefixes."""
    out = []
    pos = 0
    while pos < len(data):
        total = int.from_bytes(data[pos : pos + 4], "big")
        headers = int.from_bytes(data[pos + 4 : pos + 8], "big")
        out.append(orjson.loads(data[pos + 12 + headers : pos + total - 4]))
        pos += total
    return out


@cache
def streamed_paths(name: str) -> frozenset[str]:
    """Every field path the stream carried, spelled as in the non-stream body."""
    out: set[str] = set()
    cap = capture(name)
    if cap.provider == "ollama":
        for raw in cap.data.splitlines():
            _walk(orjson.loads(raw), "", out)
    else:
        for payload in eventstream_payloads(cap.data):
            _walk({k: v for k, v in payload.items() if k not in ("p", "delta", "start")}, "", out)
    return frozenset(out)


def converse_kind(block: dict[str, Any]) -> str:
    (kind,) = block
    if kind == "reasoningContent":
        (inner,) = block[kind]
        return f"{kind}.{inner}"
    return str(kind)


def structure_diffs(provider: str, native: dict[str, Any], recorded: dict[str, Any]) -> set[
    tuple[str, str]
]:
    if provider != "bedrock-converse":
        return shape_diffs(native, recorded)
    ours = native["output"]["message"].pop("content")
    theirs = recorded["output"]["message"].pop("content")
    diffs = shape_diffs(native, recorded)
    # Content: the keys of the first block of each Converse kind present on both sides.
    mine = {converse_kind(block): block for block in reversed(ours)}
    other = {converse_kind(block): block for block in reversed(theirs)}
    for kind in mine.keys() & other.keys():
        diffs |= shape_diffs(mine[kind], other[kind], f"content[{kind}]")
    return diffs


# -- the recorded bodies -------------------------------------------------------------------


def test_to_native_every_own_capture_is_paired() -> None:
    assert {cap.name for cap in OWN if cap.nonstream is not None} <= PAIRS.keys()
    assert {cap.provider for cap in OWN} == {"ollama", "bedrock-converse"}
    assert len(PAIRS) == 6
    for name, (nonstream, _) in PAIRS.items():
        assert response(name).complete, name
        assert (HERE / nonstream).exists()


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_to_native_structure_matches_nonstream(name: str) -> None:
    nonstream, legitimate = PAIRS[name]
    provider = capture(name).provider
    diffs = structure_diffs(provider, llm_rx.to_native(response(name), provider), body(nonstream))
    streamed = streamed_paths(name)
    for (kind, path), reason in legitimate.items():
        if reason in (NEVER_STREAMED, OTHER_COURSE):
            assert kind == "missing"
            assert path not in streamed, f"{path} is on the wire: to_native should keep it"
        else:
            assert reason in (STREAMED, LOCAL_TIMINGS)
            assert kind == "extra"
            assert path in streamed, f"{path} never streamed: to_native invented it"
    assert diffs - legitimate.keys() == set()
    assert legitimate.keys() - diffs == set()  # a listed difference that no longer occurs


@pytest.mark.parametrize("name", [n for n in sorted(PAIRS) if n.startswith("bedrock/")])
def test_to_native_bedrock_block_kinds_match_nonstream(name: str) -> None:
    native = llm_rx.to_native(response(name), "bedrock-converse")
    ours = [converse_kind(b) for b in native["output"]["message"]["content"]]
    theirs = [converse_kind(b) for b in body(PAIRS[name][0])["output"]["message"]["content"]]
    # How many redacted blocks follow each other is the generation's; kinds and order are not.
    assert collapse(ours) == collapse(theirs)


@pytest.mark.parametrize("cap", params([c for c in OWN if c.provider == "ollama"]))
def test_to_native_ollama_validates_as_sdk_type(cap: Capture) -> None:
    resp = response(cap.name)
    native = llm_rx.to_native(resp, "ollama")
    last = orjson.loads(cap.data.splitlines()[-1])
    if "response" in last:
        generated = GenerateResponse.model_validate(native)
        assert generated.response == resp.text
        assert generated.context == last["context"]
        assert "message" not in native
    else:
        chat = ChatResponse.model_validate(native)
        assert chat.message.content == resp.text
        assert chat.message.role == "assistant"
        assert chat.message.thinking is None
        assert "response" not in native
    parsed = ChatResponse.model_validate(native) if "message" in native else (
        GenerateResponse.model_validate(native))
    assert parsed.model == last["model"]
    assert parsed.done is True
    for key in ("created_at", "done_reason", "total_duration", "load_duration",
                "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"):
        assert getattr(parsed, key) == last[key], key  # the done line's values, given back


# -- a stream built from a recorded body gives that body back ------------------------------


def ndjson(*frames: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(frame) + b"\n" for frame in frames)


def pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_to_native_ollama_cloud_tool_call_body_round_trips() -> None:
    recorded = body("ollama/cloud-gpt-oss-tool-call-thinking.nonstream.json")
    message = recorded["message"]
    head = {"model": recorded["model"], "created_at": "2026-03-03T23:44:43.5Z"}
    stream = ndjson(
        *({**head, "message": {"role": "assistant", "content": "", "thinking": part},
           "done": False} for part in pieces(message["thinking"])),
        {**head, "message": {"role": "assistant", "content": "",
                             "tool_calls": message["tool_calls"]}, "done": False},
        {**head, "created_at": recorded["created_at"],
         "message": {"role": "assistant", "content": ""}, "done": True,
         **{key: recorded[key] for key in ("done_reason", "total_duration", "prompt_eval_count",
                                           "eval_count")}},
    )
    resp = llm_rx.reassemble(stream)
    assert resp.stop_reason == "tool_use"
    (call,) = resp.tool_calls
    assert call.raw_arguments == '{"location":"San Francisco, CA"}'
    native = llm_rx.to_native(resp, "ollama")
    assert native == recorded
    chat = ChatResponse.model_validate(native)
    assert chat.message.tool_calls is not None
    assert chat.message.tool_calls[0].function.arguments == {"location": "San Francisco, CA"}
    assert chat.message.thinking == message["thinking"]


def test_to_native_ollama_generate_body_round_trips() -> None:
    recorded = body("ollama/generate-gemma3.nonstream.json")
    head = {"model": recorded["model"], "created_at": "2025-08-20T13:48:20.9Z"}
    stream = ndjson(
        *({**head, "response": part, "done": False} for part in pieces(recorded["response"])),
        {**head, **{k: v for k, v in recorded.items() if k != "response"}, "response": ""},
    )
    native = llm_rx.to_native(llm_rx.reassemble(stream, "ollama"), "ollama")
    assert native == recorded
    assert list(native) == list(recorded)  # the server's key order too
    GenerateResponse.model_validate(native)


def converse_stream(recorded: dict[str, Any]) -> bytes:
    """ConverseStream events for a recorded Converse body, text in fragments."""
    def event(kind: str, payload: dict[str, Any]) -> bytes:
        return encode_message({":event-type": kind, ":content-type": "application/json",
                               ":message-type": "event"}, orjson.dumps({**payload, "p": "ab"}))

    frames = [event("messageStart", {"role": "assistant"})]
    for index, block in enumerate(recorded["output"]["message"]["content"]):
        text = block.get("text")
        deltas = [{"text": part} for part in pieces(text)] if text is not None else [block]
        frames += [event("contentBlockDelta", {"contentBlockIndex": index, "delta": d})
                   for d in deltas]
        frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
    frames.append(event("messageStop", {"stopReason": recorded["stopReason"]}))
    frames.append(event("metadata", {"usage": recorded["usage"], "metrics": recorded["metrics"]}))
    return b"".join(frames)


@pytest.mark.parametrize("name", [
    "bedrock/converse-stream-text.nonstream.json",
    "bedrock/converse-stream-redacted-reasoning.nonstream.json",
])
def test_to_native_bedrock_body_round_trips(name: str) -> None:
    recorded = body(name)
    resp = llm_rx.reassemble(converse_stream(recorded))
    assert resp.provider == "bedrock-converse"
    assert resp.complete
    assert llm_rx.to_native(resp, "bedrock-converse") == recorded


def test_to_native_bedrock_thinking_with_signature() -> None:
    recorded = {"output": {"message": {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"text": "Let me see.", "signature": "Eq0B"}}},
        {"text": "Yes."},
    ]}}, "stopReason": "end_turn", "metrics": {"latencyMs": 9},
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}}

    def event(kind: str, payload: dict[str, Any]) -> bytes:
        return encode_message({":event-type": kind, ":message-type": "event"},
                              orjson.dumps(payload))

    stream = b"".join([
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0,
                                    "delta": {"reasoningContent": {"text": "Let me see."}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0,
                                    "delta": {"reasoningContent": {"signature": "Eq0B"}}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Yes."}}),
        event("contentBlockStop", {"contentBlockIndex": 1}),
        event("messageStop", {"stopReason": "end_turn"}),
        event("metadata", {"usage": recorded["usage"], "metrics": recorded["metrics"]}),
    ])
    assert llm_rx.to_native(llm_rx.reassemble(stream), "bedrock-converse") == recorded


# -- re-encoding another provider's reply --------------------------------------------------

OTHERS = [cap for cap in CAPTURES if cap.provider in ("openai-chat", "anthropic")
          and response(cap.name).complete and not response(cap.name).choices]


def test_reencode_has_enough_other_replies() -> None:
    assert len(OTHERS) >= 30
    assert any(response(cap.name).tool_calls for cap in OTHERS)


@pytest.mark.parametrize("cap", params(OTHERS + OWN))
def test_reencode_as_ollama_validates_as_chat_response(cap: Capture) -> None:
    resp = response(cap.name)
    native = llm_rx.to_native(resp, "ollama")
    if cap.provider == "ollama":
        return  # its own body: compared above
    chat = ChatResponse.model_validate(native)
    assert chat.model == (resp.model or "")
    assert chat.message.content == resp.text + "".join(
        getattr(b, "text", "") for b in resp.content if b.type == "refusal"
    )
    calls = chat.message.tool_calls or []
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == [
        (call.name, call.arguments if isinstance(call.arguments, dict)
         else {"_raw_arguments": call.raw_arguments})
        for call in resp.tool_calls
    ]
    assert chat.done_reason == ("length" if resp.stop_reason == "max_tokens" else "stop")
    assert chat.prompt_eval_count == resp.usage.input_tokens
    assert chat.eval_count == resp.usage.output_tokens
    thinking = [b for b in resp.content if b.type == "thinking" and not b.redacted]
    assert (chat.message.thinking is None) == (not thinking)
    # Another provider's spelling notes (tool call `type`, `caller`...) do not leak in.
    for call in native["message"].get("tool_calls", []):
        assert set(call) <= {"id", "function"}
        assert set(call["function"]) == {"name", "arguments"}


@pytest.mark.parametrize("cap", params(OTHERS + OWN))
def test_reencode_as_bedrock_has_converse_shape(cap: Capture) -> None:
    resp = response(cap.name)
    native = llm_rx.to_native(resp, "bedrock-converse")
    if cap.provider == "bedrock-converse":
        return  # its own body: compared above
    assert set(native) <= {"output", "stopReason", "usage", "metrics"}
    assert native["stopReason"] in {"end_turn", "tool_use", "max_tokens", "stop_sequence",
                                    "content_filtered"}
    content = native["output"]["message"]["content"]
    assert {converse_kind(block) for block in content} <= {
        "text", "reasoningContent.reasoningText", "reasoningContent.redactedContent", "toolUse"
    }
    tools = [block["toolUse"] for block in content if "toolUse" in block]
    assert [(t["toolUseId"], t["name"]) for t in tools] == [
        (c.id, c.name) for c in resp.tool_calls
    ]
    for tool in tools:
        assert set(tool) == {"toolUseId", "name", "input"}
    usage = resp.usage
    if usage.reported:
        wire = native["usage"]
        assert wire["inputTokens"] + wire.get("cacheReadInputTokens", 0) + wire.get(
            "cacheWriteInputTokens", 0) == (usage.input_tokens or 0)
        assert wire["totalTokens"] == (usage.input_tokens or 0) + (usage.output_tokens or 0)
    else:
        assert "usage" not in native
    assert "metrics" not in native  # another provider never reported a Bedrock latency


@pytest.mark.parametrize("cap", OWN, ids=lambda cap: cap.name)
def test_reencode_own_replies_as_openai_and_anthropic(cap: Capture) -> None:
    resp = response(cap.name)
    completion = ChatCompletion.model_validate(llm_rx.to_native(resp, "openai-chat"))
    assert (completion.choices[0].message.content or "") == resp.text
    message = Message.model_validate(llm_rx.to_native(resp, "anthropic"))
    assert [b.type for b in message.content if b.type == "tool_use"] == [
        "tool_use" for block in resp.content if isinstance(block, ToolCallBlock)
    ]
    assert message.usage.output_tokens == resp.usage.output_tokens


def test_to_native_ollama_incomplete_reply_is_not_done() -> None:
    resp = llm_rx.reassemble(capture("ollama/chat-gemma3-text.ndjson").data[:500], "ollama")
    assert not resp.complete
    native = llm_rx.to_native(resp, "ollama")
    assert native["done"] is False
    assert "done_reason" not in native
    assert native["message"]["content"] == resp.text
    ChatResponse.model_validate(native)


def test_to_native_ollama_unparsed_arguments_kept_as_evidence() -> None:
    resp = llm_rx.reassemble(
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":'
        b'[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","type":"function","function":'
        b'{"name":"f","arguments":"{not json"}}]},"finish_reason":"tool_calls"}]}\n\n'
        b"data: [DONE]\n\n",
        "openai-chat",
    )
    native = llm_rx.to_native(resp, "ollama")
    assert native["message"]["tool_calls"][0]["function"]["arguments"] == {
        "_raw_arguments": "{not json"}
    bedrock = llm_rx.to_native(resp, "bedrock-converse")
    assert bedrock["output"]["message"]["content"][0]["toolUse"]["input"] == {
        "_raw_arguments": "{not json"}


def test_bedrock_reencoding_leaves_out_counts_nobody_reported() -> None:
    # bug class: a re-encoded reply whose unreported input count became 0 (looks free)
    from llm_rx.response import Response, TextBlock, Usage

    response = Response(
        provider="openai-chat", content=[TextBlock(text="hi")], stop_reason="end_turn",
        complete=True, usage=Usage(output_tokens=7),
    )
    usage = llm_rx.to_native(response, "bedrock-converse")["usage"]
    assert usage == {"outputTokens": 7}
