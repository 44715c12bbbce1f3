"""The official SDKs as independent oracles for reassembly and ``to_native``, on every capture.

openai's ``ChatCompletionStreamState`` and anthropic's ``accumulate_event`` fold the same SSE
payloads llm-rx decodes; the canonical ``Response`` must say what they say. The payloads are
split here, naively (blank-line separated events, ``data:`` lines, ``[DONE]``, comments and
non-JSON skipped), so the oracle never reads the wire through llm-rx.

Where an SDK is known wrong (PITFALLS 28-31) the case says so in a comment and asserts the right
answer from the wire instead. Hosts whose chunks an SDK cannot take at all are listed, the list
is itself tested (each listed capture must still defeat the SDK), and each gets its own case
asserting llm-rx's answer against values read off the raw wire.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message
from anthropic.types.beta import BetaMessage
from openai import LengthFinishReasonError
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from pydantic import ValidationError

import llm_rx
from llm_rx import (
    OpaqueBlock,
    RefusalBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from tests.captures import CAPTURES, Capture, capture
from tests.helpers import first_reply

pytestmark = pytest.mark.oracle


# -- the wire, read without llm-rx ---------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    event: str | None  # the ``event:`` name, if the frame had one
    data: dict[str, Any]


@cache
def frames(name: str) -> tuple[Frame, ...]:
    """Every JSON object payload of the capture, in order (``[DONE]`` and comments skipped)."""
    text = capture(name).data.decode("utf-8")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out: list[Frame] = []
    for block in text.split("\n\n"):
        event: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif line.startswith("event:"):
                event = line[6:].strip()
        payload = "\n".join(data)
        if not data or payload == "[DONE]":
            continue
        try:
            obj = json.loads(payload)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(Frame(event, obj))
    return tuple(out)


@cache
def response(name: str) -> Response:
    cap = capture(name)
    return first_reply(cap.data, cap.provider)  # (a body of several messages: the first)


def sdk_dict(model: Any) -> Any:
    """An SDK object as JSON. ``warnings=False``: the SDKs build blocks their types do not know
    with a lenient ``construct()``, and dumping those warns although the values are the wire's."""
    return model.to_dict(mode="json", warnings=False)


def blocks_of(resp: Response, kind: type[Any]) -> list[Any]:
    return [block for block in resp.content if isinstance(block, kind)]


def params(captures: list[Capture]) -> list[Any]:
    return [pytest.param(cap, id=cap.name) for cap in captures]


OPENAI = [cap for cap in CAPTURES if cap.provider == "openai-chat"]
ANTHROPIC = [cap for cap in CAPTURES if cap.provider == "anthropic"]


def test_captures_cover_both_providers() -> None:
    # Every case below is parametrised over these lists: an empty one would pass vacuously.
    assert len(OPENAI) >= 20
    assert len(ANTHROPIC) >= 15
    assert {cap.provider for cap in CAPTURES} >= {"openai-chat", "anthropic"}


# -- OpenAI chat: ChatCompletionStreamState as the oracle ----------------------------------

# Hosts whose chunks the SDK cannot take at all; each has a wire case further down.
OPENAI_SDK_CANNOT = {
    "groq/error-event-tool-use-failed.sse": "an `event: error` frame {'error': ...} is no chunk",
    "mistral/magistral-thinking-chunks.sse": "delta.content is an array of typed parts",
    "mistral/magistral-thinking-vercel.sse": "delta.content is an array of typed parts",
    "mistral/tool-call.sse": "its tool_calls entries carry no index",
    # No `object` at all; `.stream()` skips every chunk, then AssertionError (PITFALLS 28).
    "moonshot/kimi-reasoning.sse": "its chunks carry no `object`",
    # The finish chunk has object "chat.completion.done"; `.stream()` drops it (PITFALLS 28).
    "perplexity/citations.sse": "its finish chunk's object is 'chat.completion.done'",
    "openrouter/web-search-annotations.sse": "delta.annotations entries carry no index",
}

# Canonical stop reason for each OpenAI finish_reason (DESIGN section 4).
FINISH = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}


def canonical_stop(finish_reason: str, tool_calls: Any, refusal: Any) -> str:
    expected = FINISH[finish_reason]
    if expected == "end_turn" and tool_calls:
        return "tool_use"  # a host's plain stop after client tool calls
    if expected == "end_turn" and refusal:
        return "refusal"
    return expected


# xAI's completion_tokens excludes reasoning: output_tokens adds reasoning_tokens (DESIGN).
COMPLETION_EXCLUDES_REASONING = {"xai/chat-reasoning-tool-call.sse"}


@cache
def openai_sdk(name: str) -> Any:
    """The SDK's accumulated completion for the capture (raises where the SDK cannot)."""
    state = ChatCompletionStreamState()
    for frame in frames(name):
        if frame.data.get("object") == "":
            # Azure's asynchronous content-filter chunk: `.stream()` skips it by design.
            continue
        state.handle_chunk(ChatCompletionChunk.model_validate(frame.data))
    try:
        return state.get_final_completion()
    except LengthFinishReasonError:
        # PITFALLS 28: a plain max_tokens reply raises; the snapshot is the reply it lost.
        return state.current_completion_snapshot


def wire_usage(name: str) -> dict[str, Any] | None:
    """The last usage object on the wire, top-level or in Groq's ``x_groq.usage``."""
    found = None
    for frame in frames(name):
        usage = frame.data.get("usage")
        x_groq = frame.data.get("x_groq")
        if not isinstance(usage, dict) and isinstance(x_groq, dict):
            usage = x_groq.get("usage")
        if isinstance(usage, dict):
            found = usage
    return found


def wire_error(name: str) -> dict[str, Any] | None:
    for frame in frames(name):
        if frame.event == "error" or frame.data.get("error"):
            return frame.data
    return None


def assert_openai_usage(resp: Response, usage: dict[str, Any] | None, name: str) -> None:
    if usage is None:
        assert resp.usage.input_tokens is None
        assert resp.usage.output_tokens is None
        return
    details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    # Azure's DeepSeek puts reasoning_tokens at the top of usage: a dialect place (DESIGN).
    reasoning = completion_details.get("reasoning_tokens", usage.get("reasoning_tokens"))
    output = usage.get("completion_tokens")
    if name in COMPLETION_EXCLUDES_REASONING:
        assert usage["prompt_tokens"] + output + reasoning == usage["total_tokens"]
        output += reasoning
    assert resp.usage.input_tokens == usage.get("prompt_tokens")
    assert resp.usage.output_tokens == output
    assert resp.usage.reasoning_tokens == reasoning
    cache_read = details.get("cached_tokens", usage.get("prompt_cache_hit_tokens"))
    assert resp.usage.cache_read_tokens == cache_read
    assert resp.usage.cache_write_tokens == details.get("cache_write_tokens")


OPENAI_ORACLE = [cap for cap in OPENAI if cap.name not in OPENAI_SDK_CANNOT]


@pytest.mark.parametrize("cap", params([capture(name) for name in OPENAI_SDK_CANNOT]))
def test_openai_sdk_cannot_decode_listed_hosts(cap: Capture) -> None:
    # Keeps the list honest: a capture the SDK learns to take belongs with the oracle cases.
    with pytest.raises((ValidationError, RuntimeError)):
        openai_sdk(cap.name)


@pytest.mark.parametrize("cap", params(OPENAI_ORACLE))
def test_openai_chat_content_matches_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    message = openai_sdk(cap.name).choices[0].message
    assert resp.text == (message.content or "")
    refusal = "".join(block.text for block in blocks_of(resp, RefusalBlock))
    assert refusal == (message.refusal or "")
    # The SDK keeps a dialect's reasoning string (`reasoning_content`, `reasoning`) verbatim.
    reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
    thinking = "".join(block.text for block in blocks_of(resp, ThinkingBlock))
    assert thinking == (reasoning or "")
    # OpenRouter's reasoning_details: the SDK merges entries by their index; each entry's text
    # and signature (or encrypted data) belong to one thinking block, byte-identical.
    details = getattr(message, "reasoning_details", None) or []
    if details:
        pairs = zip(blocks_of(resp, ThinkingBlock), details, strict=True)
        for block, entry in pairs:
            assert block.text == entry.get("text", "")
            assert (block.signature or "") == (entry.get("signature") or entry.get("data") or "")


@pytest.mark.parametrize("cap", params(OPENAI_ORACLE))
def test_openai_chat_tool_calls_match_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    expected = openai_sdk(cap.name).choices[0].message.tool_calls or []
    got = [(call.id, call.name, call.raw_arguments) for call in resp.tool_calls]
    assert got == [(tc.id, tc.function.name, tc.function.arguments) for tc in expected]
    for call, tc in zip(resp.tool_calls, expected, strict=True):
        raw = tc.function.arguments
        assert call.arguments == (json.loads(raw) if raw else {})


@pytest.mark.parametrize("cap", params(OPENAI_ORACLE))
def test_openai_chat_stop_reason_matches_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    error = wire_error(cap.name)
    if error is not None:
        # The SDK folds an in-band {"error": ...} chunk like any other and reports the earlier
        # finish_reason ("length" on OpenRouter); the reply failed: error, not finished.
        assert resp.stop_reason == "error"
        assert not resp.complete
        assert resp.error is not None
        assert resp.error.kind == "provider"
        assert resp.error.message == error["error"]["message"]
        return
    choice = openai_sdk(cap.name).choices[0]
    expected = canonical_stop(choice.finish_reason, resp.tool_calls, choice.message.refusal)
    assert resp.stop_reason == expected
    assert resp.complete
    assert resp.error is None


@pytest.mark.parametrize("cap", params(OPENAI_ORACLE))
def test_openai_chat_usage_matches_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    sdk_usage = openai_sdk(cap.name).usage
    on_wire = wire_usage(cap.name)
    if sdk_usage is None:
        # The SDK overwrites usage with every chunk's: a later chunk without it (or a usage of
        # null, PITFALLS 31) erases it, and it never reads Groq's x_groq.usage. The wire decides.
        assert_openai_usage(resp, on_wire, cap.name)
        return
    assert sdk_dict(sdk_usage) == on_wire  # the oracle read the wire's last usage
    assert_openai_usage(resp, sdk_dict(sdk_usage), cap.name)


@pytest.mark.parametrize("cap", params(OPENAI_ORACLE))
def test_openai_chat_served_model_matches_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    completion = openai_sdk(cap.name)
    assert resp.model == completion.model
    assert resp.id == completion.id
    assert resp.provider == "openai-chat"


# -- OpenAI chat hosts the SDK cannot take: the wire is the oracle -------------------------


def delta_text(name: str, key: str) -> str:
    """The concatenated string values of ``choices[].delta[key]`` on the wire."""
    out = []
    for frame in frames(name):
        for choice in frame.data.get("choices") or ():
            value = (choice.get("delta") or {}).get(key)
            if isinstance(value, str):
                out.append(value)
    return "".join(out)


def part_text(name: str, kind: str) -> str:
    """Mistral's array content: the text of every part of ``kind`` (thinking parts nest)."""
    out = []
    for frame in frames(name):
        for choice in frame.data.get("choices") or ():
            parts = (choice.get("delta") or {}).get("content")
            for part in parts if isinstance(parts, list) else ():
                if part.get("type") != kind:
                    continue
                if kind == "thinking":
                    out.extend(piece["text"] for piece in part["thinking"])
                else:
                    out.append(part["text"])
    return "".join(out)


@dataclass(frozen=True)
class WireCase:
    text: str
    thinking: str
    stop_reason: str
    model: str
    usage: tuple[int, int, int | None] | None  # input, output, reasoning
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    error: str | None = None  # the provider's error message
    annotations: list[Any] = field(default_factory=list)


def wire_case(name: str) -> WireCase:
    """What each host the SDK cannot take says, read off its raw frames (values checked by
    hand against the capture; the usage is the last cumulative report, never a sum)."""
    last = frames(name)[-1].data
    if name == "groq/error-event-tool-use-failed.sse":
        # Reasoning deltas, then `event: error` and no [DONE]: a failed reply, reasoning kept.
        return WireCase("", delta_text(name, "reasoning"), "error", "openai/gpt-oss-120b", None,
                        error=last["error"]["message"])
    if name in ("mistral/magistral-thinking-chunks.sse", "mistral/magistral-thinking-vercel.sse"):
        usage = last["usage"]
        return WireCase(
            delta_text(name, "content") + part_text(name, "text"),
            part_text(name, "thinking"),
            "end_turn",
            last["model"],
            (usage["prompt_tokens"], usage["completion_tokens"], None),
        )
    if name == "mistral/tool-call.sse":
        call = last["choices"][0]["delta"]["tool_calls"][0]
        assert "index" not in call
        return WireCase("", "", "tool_use", "mistral-small-latest", (124, 22, None),
                        [(call["id"], "weather", call["function"]["arguments"])])
    if name == "moonshot/kimi-reasoning.sse":
        return WireCase("Hello!", "Thinking aloud. ", "end_turn", "kimi-k3", (9, 12, 7))
    if name == "perplexity/citations.sse":
        # Usage repeats on every chunk as a running total: 10 in / 336 out (PITFALLS 32).
        assert last["object"] == "chat.completion.done"
        assert last["choices"][0]["finish_reason"] == "stop"
        return WireCase(delta_text(name, "content"), "", "end_turn", "sonar", (10, 336, None))
    if name == "openrouter/web-search-annotations.sse":
        annotations = [
            annotation
            for frame in frames(name)
            for choice in frame.data.get("choices") or ()
            for annotation in (choice.get("delta") or {}).get("annotations") or ()
        ]
        assert annotations
        return WireCase(delta_text(name, "content"), "", "end_turn", "deepseek/deepseek-chat",
                        (2317, 53, 0), annotations=annotations)
    raise AssertionError(f"no wire case for {name}")


@pytest.mark.parametrize("cap", params([capture(name) for name in OPENAI_SDK_CANNOT]))
def test_openai_chat_sdk_rejected_host_matches_wire(cap: Capture) -> None:
    expected = wire_case(cap.name)
    resp = response(cap.name)
    assert resp.text == expected.text
    assert "".join(block.text for block in blocks_of(resp, ThinkingBlock)) == expected.thinking
    assert resp.stop_reason == expected.stop_reason
    assert resp.model == expected.model
    got = [(call.id, call.name, call.raw_arguments) for call in resp.tool_calls]
    assert got == expected.tool_calls
    for call in resp.tool_calls:
        assert call.arguments == json.loads(call.raw_arguments)
    if expected.usage is None:
        assert not resp.usage.reported
    else:
        usage = resp.usage
        assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == expected.usage
    if expected.error is None:
        assert resp.complete
        assert resp.error is None
    else:
        assert not resp.complete
        assert resp.error is not None
        assert resp.error.kind == "provider"
        assert resp.error.message == expected.error
    citations = [c for block in blocks_of(resp, TextBlock) for c in block.citations]
    assert citations == expected.annotations


def test_openai_chat_groq_error_matches_nonstream_error_body() -> None:
    # The non-streamed counterpart of this call is an HTTP 400 body: the same provider error.
    cap = capture("groq/error-event-tool-use-failed.sse")
    assert cap.nonstream is not None
    body = json.loads(cap.nonstream.read_text())
    resp = response(cap.name)
    assert resp.error is not None
    assert resp.error.raw is not None
    raw = json.loads(resp.error.raw)
    assert raw["error"]["code"] == body["error"]["code"] == "tool_use_failed"
    assert raw["error"]["type"] == body["error"]["type"]


# -- Anthropic: accumulate_event as the oracle ---------------------------------------------

# Captures the accumulator cannot fold: it raises on anything before `message_start`.
ANTHROPIC_SDK_CANNOT = {
    "anthropic/error-api-error-midstream.partial.sse": "the excerpt has no message_start",
}

ANTHROPIC_STOP = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_use",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
}

# Delta types accumulate_event applies; it silently drops any other (e.g. compaction_delta).
SDK_DELTAS = {"text_delta", "input_json_delta", "citations_delta", "thinking_delta",
              "signature_delta"}


@dataclass
class AnthropicOracle:
    snapshot: Any
    json_bufs: dict[int, bytes]
    stopped: bool  # a message_stop arrived


@cache
def anthropic_sdk(name: str) -> AnthropicOracle:
    """The accumulator's snapshot, folded up to the first ``message_stop`` only."""
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for frame in frames(name):
        snapshot = accumulate_event(event=frame.data, current_snapshot=snapshot,
                                    json_bufs=json_bufs)
        if frame.data.get("type") == "message_stop":
            return AnthropicOracle(snapshot, json_bufs, True)
    return AnthropicOracle(snapshot, json_bufs, False)


# Block types whose input the accumulator builds from input_json_delta (it leaves any other's,
# an mcp_tool_use's, as content_block_start gave it).
SDK_TRACKS_INPUT = {"tool_use", "server_tool_use"}


def ignored_deltas(name: str) -> dict[int, dict[str, Any]]:
    """Per wire block index, the string fields of delta types the accumulator drops, joined,
    and the ``input`` of a block whose input_json_delta it does not apply."""
    out: dict[int, dict[str, Any]] = {}
    kinds: dict[int, str] = {}
    inputs: dict[int, str] = {}
    for frame in frames(name):
        if frame.data.get("type") == "content_block_start":
            kinds[frame.data["index"]] = frame.data["content_block"]["type"]
        if frame.data.get("type") != "content_block_delta":
            continue
        delta, index = frame.data["delta"], frame.data["index"]
        if delta["type"] == "input_json_delta" and kinds.get(index) not in SDK_TRACKS_INPUT:
            inputs[index] = inputs.get(index, "") + delta["partial_json"]
            continue
        if delta["type"] in SDK_DELTAS:
            continue
        fields = out.setdefault(index, {})
        for key, value in delta.items():
            if key != "type" and isinstance(value, str):
                fields[key] = fields.get(key, "") + value
    for index, joined in inputs.items():
        if joined:
            out.setdefault(index, {})["input"] = json.loads(joined)
    return out


def wire_kind(block: Any) -> str:
    """The Anthropic block type a canonical block stands for."""
    if isinstance(block, TextBlock):
        return "text"
    if isinstance(block, ThinkingBlock):
        return "redacted_thinking" if block.redacted else "thinking"
    if isinstance(block, ToolCallBlock):
        return "tool_use"
    if isinstance(block, OpaqueBlock):
        return block.kind
    return type(block).__name__


ANTHROPIC_ORACLE = [cap for cap in ANTHROPIC if cap.name not in ANTHROPIC_SDK_CANNOT]


@pytest.mark.parametrize("cap", params([capture(name) for name in ANTHROPIC_SDK_CANNOT]))
def test_anthropic_sdk_cannot_decode_listed_captures(cap: Capture) -> None:
    with pytest.raises(RuntimeError, match="message_start"):
        anthropic_sdk(cap.name)


@pytest.mark.parametrize("cap", params(ANTHROPIC_ORACLE))
def test_anthropic_blocks_match_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    oracle = anthropic_sdk(cap.name)
    sdk_blocks = oracle.snapshot.content
    assert [wire_kind(block) for block in resp.content] == [block.type for block in sdk_blocks]
    dropped = ignored_deltas(cap.name)
    for index, (block, sdk) in enumerate(zip(resp.content, sdk_blocks, strict=True)):
        if isinstance(block, TextBlock):
            assert block.text == sdk.text
            assert block.citations == [sdk_dict(c) for c in sdk.citations or ()]
        elif isinstance(block, ThinkingBlock) and block.redacted:
            assert block.text == ""
            assert block.signature == sdk.data
        elif isinstance(block, ThinkingBlock):
            assert block.text == sdk.thinking
            # Byte-identical, on the block it came with; "" on the wire is no signature.
            assert (block.signature or "") == sdk.signature
            assert block.signature != ""
        elif isinstance(block, ToolCallBlock):
            assert (block.id, block.name) == (sdk.id, sdk.name)
            assert block.arguments == sdk.input
            fragments = oracle.json_bufs.get(index, b"").decode()
            if fragments:
                assert block.raw_arguments == fragments
            else:  # input given whole at the start (or none): its compact JSON, key order kept
                compact = json.dumps(sdk.input, separators=(",", ":"), ensure_ascii=False)
                assert block.raw_arguments == (compact if sdk.input else "")
        else:
            assert isinstance(block, OpaqueBlock)
            # Verbatim, with the deltas applied. The accumulator drops delta types it does not
            # know (compaction_delta): their strings, joined, are the block's field.
            assert block.raw == {**sdk_dict(sdk), **dropped.get(index, {})}


@pytest.mark.parametrize("cap", params(ANTHROPIC_ORACLE))
def test_anthropic_stop_reason_matches_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    oracle = anthropic_sdk(cap.name)
    error = wire_error(cap.name)
    if oracle.stopped:
        assert resp.complete
        assert resp.error is None
        assert resp.stop_reason == ANTHROPIC_STOP[oracle.snapshot.stop_reason]
        stop_details = oracle.snapshot.stop_details
        explanation = stop_details.explanation if stop_details is not None else None
        assert resp.stop_details == explanation
        return
    # No message_stop: the accumulator has no notion of an unfinished message and reports
    # whatever message_delta said, as if finished (PITFALLS 30). The reply is not finished.
    assert not resp.complete
    assert resp.error is not None
    if error is not None:
        assert resp.stop_reason == "error"
        assert resp.error.kind == "provider"
        assert error["error"]["type"] in resp.error.message
    else:
        assert resp.stop_reason == "interrupted"
        assert resp.error.kind == "incomplete"


@pytest.mark.parametrize("cap", params(ANTHROPIC_ORACLE))
def test_anthropic_usage_matches_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    usage = sdk_dict(anthropic_sdk(cap.name).snapshot.usage)
    # Compaction steps are billed but left out of the top-level counts (Anthropic's rule):
    # the canonical counts add them; the SDK gives the top-level ones and drops the steps.
    deltas = [frame.data for frame in frames(cap.name) if frame.data.get("type") == "message_delta"]
    last = (deltas[-1].get("usage") or {}) if deltas else {}  # (cumulative: the last one)
    steps = [step for step in last.get("iterations") or () if step.get("type") == "compaction"]

    def billed(name: str) -> int | None:
        counts = [n for n in (usage.get(name), *(step.get(name) for step in steps))
                  if n is not None]
        return sum(counts) if counts else None

    fresh = billed("input_tokens")
    parts = [fresh, billed("cache_creation_input_tokens"), billed("cache_read_input_tokens")]
    total = sum(part or 0 for part in parts) if fresh is not None else None
    assert resp.usage.input_tokens == total  # a total, never message_start + message_delta
    assert resp.usage.output_tokens == billed("output_tokens")
    assert resp.usage.cache_read_tokens == billed("cache_read_input_tokens")
    assert resp.usage.cache_write_tokens == billed("cache_creation_input_tokens")
    details = usage.get("output_tokens_details") or {}
    assert resp.usage.reasoning_tokens == details.get("thinking_tokens")


def _served(cap: Capture, model: str) -> str:
    """The model that served the end of an Anthropic reply: after a ``fallback`` block, its
    ``to`` model (as the non-stream body says; the SDK's accumulator keeps message_start's)."""
    for frame in frames(cap.name):
        block = frame.data.get("content_block")
        if isinstance(block, dict) and block.get("type") == "fallback":
            model = block["to"]["model"]
    return model


@pytest.mark.parametrize("cap", params(ANTHROPIC_ORACLE))
def test_anthropic_served_model_matches_sdk(cap: Capture) -> None:
    resp = response(cap.name)
    snapshot = anthropic_sdk(cap.name).snapshot
    assert resp.model == _served(cap, snapshot.model)
    assert resp.id == snapshot.id
    assert resp.provider == "anthropic"


def test_anthropic_sdk_rejected_excerpt_matches_wire() -> None:
    # A stream tail pasted in a bug report: text deltas, then `event: error`, no message_start
    # and no message_stop. Kept: the text; the result: a provider error, not a finished reply.
    name = "anthropic/error-api-error-midstream.partial.sse"
    text = "".join(
        frame.data["delta"]["text"]
        for frame in frames(name)
        if frame.data.get("type") == "content_block_delta"
    )
    error = frames(name)[-1].data
    assert error["type"] == "error"
    resp = response(name)
    assert text
    assert resp.text == text
    assert [wire_kind(block) for block in resp.content] == ["text"]
    assert resp.stop_reason == "error"
    assert not resp.complete
    assert resp.error is not None
    assert resp.error.kind == "provider"
    assert error["error"]["message"] in resp.error.message
    assert resp.model is None
    assert not resp.usage.reported


# -- to_native: the SDKs' non-stream types -------------------------------------------------

OPENAI_COMPLETE = [cap for cap in OPENAI if response(cap.name).complete]
ANTHROPIC_COMPLETE = [cap for cap in ANTHROPIC if response(cap.name).complete]


def test_to_native_incomplete_captures_are_the_failed_ones() -> None:
    incomplete = {cap.name for cap in CAPTURES if not response(cap.name).complete}
    assert incomplete == {
        "anthropic/error-api-error-midstream.partial.sse",
        "anthropic/error-overloaded-midstream.synthetic.sse",
        "groq/error-event-tool-use-failed.sse",
        "openai/responses-error-event-failed.sse",
        "openrouter/error-chunk-finish-length.sse",
    }


# Mistral's own non-stream spelling of reasoning: `content` as an array of typed parts, which
# ChatCompletion's `content: str` cannot hold. The body is validated with the text part as
# its content, and the parts are checked against the reply.
ARRAY_CONTENT = {"mistral/magistral-thinking-chunks.sse", "mistral/magistral-thinking-vercel.sse"}


@pytest.mark.parametrize("cap", params(OPENAI_COMPLETE))
def test_to_native_openai_chat_validates_as_chat_completion(cap: Capture) -> None:
    resp = response(cap.name)
    native = llm_rx.to_native(resp, cap.provider)
    body = copy.deepcopy(native)
    content = native["choices"][0]["message"]["content"]
    if cap.name in ARRAY_CONTENT:
        assert [part["type"] for part in content] == ["thinking", "text"]
        thinking = "".join(piece["text"] for piece in content[0]["thinking"])
        assert thinking == "".join(block.text for block in blocks_of(resp, ThinkingBlock))
        body["choices"][0]["message"]["content"] = content[1]["text"]
    completion = ChatCompletion.model_validate(body)
    choice = completion.choices[0]
    assert completion.model == resp.model
    assert completion.id == resp.id
    assert (choice.message.content or "") == resp.text
    refusal = "".join(block.text for block in blocks_of(resp, RefusalBlock))
    assert (choice.message.refusal or "") == refusal
    tool_calls = choice.message.tool_calls or ()
    calls = [(tc.id, tc.function.name, tc.function.arguments) for tc in tool_calls]
    assert calls == [(call.id, call.name, call.raw_arguments) for call in resp.tool_calls]
    finish = canonical_stop(choice.finish_reason, resp.tool_calls, choice.message.refusal)
    assert finish == resp.stop_reason


@pytest.mark.parametrize("cap", params([c for c in OPENAI_COMPLETE if c in OPENAI_ORACLE]))
def test_to_native_openai_chat_matches_sdk(cap: Capture) -> None:
    native = llm_rx.to_native(response(cap.name), cap.provider)
    completion = openai_sdk(cap.name)
    sdk_choice = completion.choices[0]
    choice = native["choices"][0]
    message = choice["message"]
    assert (native["id"], native["model"], native["created"]) == (
        completion.id, completion.model, completion.created
    )
    # The host's own finish_reason comes back as sent.
    assert choice["finish_reason"] == sdk_choice.finish_reason
    assert (message["content"] or "") == (sdk_choice.message.content or "")
    assert message["refusal"] == (sdk_choice.message.refusal or None)
    sdk_calls = [sdk_dict(tc) for tc in sdk_choice.message.tool_calls or ()]
    assert message.get("tool_calls", []) == [
        {"id": tc["id"], "type": tc["type"], "function": {
            "name": tc["function"]["name"], "arguments": tc["function"]["arguments"]}}
        for tc in sdk_calls
    ]
    # Per-token logprobs are choice data the stream carried; the non-stream body has them.
    sdk_logprobs = sdk_choice.logprobs
    assert choice["logprobs"] == (sdk_dict(sdk_logprobs) if sdk_logprobs is not None else None)
    # The usage object comes back verbatim (the SDK's, or Groq's x_groq.usage it ignores).
    sdk_usage = sdk_dict(completion.usage) if completion.usage is not None else None
    assert native.get("usage") == (sdk_usage or wire_usage(cap.name))
    for key in ("reasoning_content", "reasoning"):
        if getattr(sdk_choice.message, key, None):
            assert message[key] == getattr(sdk_choice.message, key)


# Block types (or server tools) the installed anthropic SDK has no model for at all: the
# body is validated without them and they are checked verbatim against the wire instead.
SDK_UNKNOWN_BLOCKS = {
    ("server_tool_use", "advisor"),
    ("advisor_tool_result", None),
    ("fallback", None),
}
# Beta-only block types: `Message` does not know them, `BetaMessage` does.
SDK_BETA_BLOCKS = {"compaction", "mcp_tool_use", "mcp_tool_result"}
# Required by today's SDK types but absent from streams recorded before the field existed.
SDK_NEWER_THAN_WIRE = {("usage", "server_tool_use", "web_fetch_requests")}


def unknown_to_sdk(block: dict[str, Any]) -> bool:
    return (block["type"], block.get("name")) in SDK_UNKNOWN_BLOCKS or (
        block["type"], None) in SDK_UNKNOWN_BLOCKS


def wire_blocks(name: str) -> list[dict[str, Any]]:
    return [frame.data["content_block"] for frame in frames(name)
            if frame.data.get("type") == "content_block_start"]


def wire_has(name: str, loc: tuple[Any, ...]) -> bool:
    """Whether any message_start or message_delta frame carries ``loc`` (e.g. a usage field)."""
    for frame in frames(name):
        for root in (frame.data, frame.data.get("message")):
            node = root
            for key in loc:
                node = node.get(key, _ABSENT) if isinstance(node, dict) else _ABSENT
            if node is not _ABSENT:
                return True
    return False


_ABSENT = object()


@pytest.mark.parametrize("cap", params(ANTHROPIC_COMPLETE))
def test_to_native_anthropic_validates_as_message(cap: Capture) -> None:
    native = llm_rx.to_native(response(cap.name), cap.provider)
    content = native["content"]
    known = [block for block in content if not unknown_to_sdk(block)]
    for block in content:
        if unknown_to_sdk(block):  # these arrive whole in content_block_start: the wire's block
            assert block in wire_blocks(cap.name)
    body = {**native, "content": known}
    model = BetaMessage if any(b["type"] in SDK_BETA_BLOCKS for b in known) else Message
    failed = validation_errors(model, body)
    assert failed <= SDK_NEWER_THAN_WIRE, failed
    for loc in failed:  # a field today's type requires that the recorded wire never had
        assert not wire_has(cap.name, loc)
    if not failed:
        message = model.model_validate(body)
        assert [block.type for block in message.content] == [block["type"] for block in known]
        assert message.model == response(cap.name).model


def validation_errors(model: type[Any], body: dict[str, Any]) -> set[tuple[Any, ...]]:
    try:
        model.model_validate(body)
    except ValidationError as error:
        return {tuple(e["loc"]) for e in error.errors()}
    return set()


@pytest.mark.parametrize("cap", params([c for c in ANTHROPIC_COMPLETE if c in ANTHROPIC_ORACLE]))
def test_to_native_anthropic_matches_sdk(cap: Capture) -> None:
    native = llm_rx.to_native(response(cap.name), cap.provider)
    expected = sdk_dict(anthropic_sdk(cap.name).snapshot)
    expected["model"] = _served(cap, expected["model"])
    # The accumulator drops delta types it does not know (compaction_delta): the right field
    # is the joined strings of those deltas.
    for index, fields in ignored_deltas(cap.name).items():
        expected["content"][index].update(fields)
    # It copies only the message_delta usage fields it knows (no `iterations`): the right
    # value is the wire's last.
    last_usage = [frame.data["usage"] if frame.data.get("type") == "message_delta"
                  else frame.data["message"]["usage"] for frame in frames(cap.name)
                  if frame.data.get("type") in ("message_start", "message_delta")][-1]
    for key in native["usage"].keys() - expected["usage"].keys():
        assert native["usage"][key] == last_usage[key]
        expected["usage"][key] = last_usage[key]
    # It reads only `delta` and `usage` of message_delta: fields beside them
    # (`context_management`) are the wire's.
    last_delta = ([frame.data for frame in frames(cap.name)
                   if frame.data.get("type") == "message_delta"] or [{}])[-1]
    for key in native.keys() - expected.keys():
        assert native[key] == last_delta[key]
        expected[key] = last_delta[key]
    assert native == expected
