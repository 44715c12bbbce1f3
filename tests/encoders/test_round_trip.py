"""Translation contract over every capture: same-provider round trips are faithful, every
capture re-encoded for every other target decodes and keeps what the target can carry, and
the encoded bytes do not depend on how the source was chunked."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx import Dropped, Response, ThinkingBlock
from llm_rx.encoders import ENCODERS, UI_TARGETS
from tests.captures import ONE_REPLY, Capture
from tests.helpers import first_reply, split_at

from .oracles import ORACLES

TARGETS = sorted(set(ENCODERS) - UI_TARGETS)  # (the targets a decoder reads back)
EVERY = sorted(ENCODERS)


def _decodes(capture: Capture) -> bool:
    try:
        first_reply(capture.data, capture.provider)
    except llm_rx.LlmRxError:
        return False  # (a body that is no reply at all: Ollama pull progress)
    return True


STREAMS = [capture for capture in ONE_REPLY if _decodes(capture)]
_IDS = [capture.name for capture in STREAMS]


def provider_of(target: str) -> str:
    """The provider whose decoder reads a target's stream."""
    return "gemini" if target == "gemini-json-array" else target


def required_counts(usage: llm_rx.Usage, target: str) -> llm_rx.Usage:
    """The usage a target's stream gives back: Anthropic's requires ``input_tokens`` and
    ``output_tokens`` (``message_start``, ``message_delta``), so a count nobody reported is
    ``0`` there."""
    if target != "anthropic":
        return usage
    return usage.model_copy(update={"input_tokens": usage.input_tokens or 0,
                                    "output_tokens": usage.output_tokens or 0})


OWN = [capture for capture in STREAMS if capture.provider in ENCODERS]


@pytest.mark.parametrize("cap", OWN, ids=[capture.name for capture in OWN])
def test_translate_same_provider_round_trip_is_faithful(cap: Capture) -> None:
    original = first_reply(cap.data, cap.provider)
    translated = llm_rx.translate(cap.data, cap.provider, cap.provider)
    again = llm_rx.reassemble(translated, cap.provider)
    if cap.provider == "anthropic" and original.usage.native is None:  # (a tail: no start)
        original = original.model_copy(update={"usage": required_counts(
            original.usage, "anthropic").model_copy(update={"native": again.usage.native})})
    # signatures, redacted data, encrypted reasoning, citations, opaque blocks, metadata,
    # usage and stop, all compared whole
    assert again.model_dump(mode="json") == original.model_dump(mode="json")


@pytest.mark.parametrize("cap", [c for c in STREAMS if c.provider == "gemini"],
                         ids=[c.name for c in STREAMS if c.provider == "gemini"])
def test_translate_gemini_json_array_form_round_trip_is_faithful(cap: Capture) -> None:
    translated = llm_rx.translate(cap.data, "gemini-json-array", cap.provider)
    assert translated.startswith(b"[")
    again = llm_rx.reassemble(translated, "gemini")
    assert again.model_dump(mode="json") == (
        first_reply(cap.data, cap.provider).model_dump(mode="json"))


# What a target's stop values cannot tell apart (by the STOP table): canonical -> as read back.
_COLLAPSED: dict[str, dict[str, str]] = {
    "openai-chat": {"stop_sequence": "end_turn", "pause_turn": "end_turn"},
    "openai-responses": {"stop_sequence": "end_turn", "pause_turn": "end_turn"},
    "anthropic": {"content_filter": "refusal"},
    "gemini": {"stop_sequence": "end_turn", "pause_turn": "end_turn",
               "refusal": "content_filter"},
    "ollama": {"stop_sequence": "end_turn", "pause_turn": "end_turn", "refusal": "end_turn",
               "content_filter": "end_turn"},
    "gemini-interactions": {"stop_sequence": "end_turn", "refusal": "end_turn",
                            "content_filter": "end_turn"},
    "bedrock-converse": {"refusal": "end_turn", "pause_turn": "end_turn"},
    "cohere": {"refusal": "end_turn", "pause_turn": "end_turn", "content_filter": "end_turn"},
}


def _summary(response: Response, *, refusal_as_text: bool) -> dict[str, Any]:
    text = response.text
    if refusal_as_text:
        text += "".join(b.text for b in response.content if b.type == "refusal")
    return {
        "text": text,
        "thinking": "".join(b.text for b in response.content if isinstance(b, ThinkingBlock)),
        "calls": [(b.name, b.arguments, b.raw_arguments) for b in response.tool_calls],
        "ids": [b.id for b in response.tool_calls if b.id is not None],
        "complete": response.complete,
    }


def _expected_stop(original: Response, target: str, dropped: list[Dropped]) -> str | None:
    reason = original.stop_reason
    if reason == "tool_use" and not original.tool_calls:  # a client-run opaque item, dropped
        assert any(item.what.startswith("opaque:") for item in dropped)
        return "tool_use" if target in ("anthropic", "bedrock-converse", "openai-chat",
                                        "cohere") else "end_turn"
    if reason == "end_turn" and original.tool_calls and target in (
            "gemini", "gemini-interactions", "ollama", "bedrock-converse", "cohere"):
        return "tool_use"  # (these read a stop after calls as tool_use)
    if reason == "refusal" and target in ("openai-chat", "openai-responses"):
        refused = any(b.type == "refusal" for b in original.content)
        return "refusal" if refused else "end_turn"
    return _COLLAPSED[provider_of(target)].get(str(reason), reason)


CROSS = [(cap, target) for cap in STREAMS for target in TARGETS
         if provider_of(target) != cap.provider]


@pytest.mark.parametrize(("cap", "target"), CROSS,
                         ids=[f"{c.name}->{t}" for c, t in CROSS])
def test_translate_across_providers_keeps_what_the_target_carries(
    cap: Capture, target: str
) -> None:
    original = first_reply(cap.data, cap.provider)
    dropped: list[Dropped] = []
    translated = llm_rx.translate(cap.data, target, cap.provider, on_dropped=dropped.append)
    again = llm_rx.reassemble(translated, provider_of(target))
    carries_refusal = provider_of(target) in ("openai-chat", "openai-responses")
    want = _summary(original, refusal_as_text=not carries_refusal)
    got = _summary(again, refusal_as_text=False)
    # a call without an id gets one (the target requires it); one with an id keeps it
    assert got["ids"][: len(want["ids"])] == want["ids"] or set(want["ids"]) <= set(got["ids"])
    want["calls"] = [(name, _object(args, raw, target)) for name, args, raw in want["calls"]]
    got["calls"] = [(name, args) for name, args, _ in got["calls"]]
    assert {k: v for k, v in got.items() if k != "ids"} == {
        k: v for k, v in want.items() if k != "ids"}
    if original.complete:
        assert again.stop_reason == _expected_stop(original, target, dropped)
    else:
        assert again.stop_reason in ("interrupted", "error")
        assert again.error is not None


def _object(arguments: Any, raw: str, target: str, *, sdk: bool = False) -> Any:
    """Arguments as a target that carries an object gives free text back (a target whose
    arguments are a string, OpenAI's and Cohere's, keeps the text; an SDK gives the string
    itself)."""
    if isinstance(arguments, dict):
        return arguments
    if target in ("openai-chat", "openai-responses", "cohere"):
        return raw if sdk and arguments is None else arguments
    return {"_raw_arguments": raw}


@pytest.mark.parametrize(("cap", "target"), CROSS,
                         ids=[f"{c.name}->{t}" for c, t in CROSS])
def test_translate_across_providers_usage_only_where_reported(
    cap: Capture, target: str
) -> None:
    reply = first_reply(cap.data, cap.provider)
    original = required_counts(reply.usage, target)
    again = llm_rx.reassemble(
        llm_rx.translate(cap.data, target, cap.provider), provider_of(target)).usage
    if reply.error is not None and target == "ollama":  # (only its done line has counts)
        assert not again.reported
        return
    partial = original.input_tokens is None or original.output_tokens is None
    if partial and target in ("openai-responses", "openai-chat"):  # (all or nothing)
        assert not again.reported
        return
    for name in ("input_tokens", "output_tokens"):
        assert getattr(again, name) == getattr(original, name), name
    if original.cache_read_tokens is not None and target != "ollama":
        assert again.cache_read_tokens == original.cache_read_tokens
    if original.cache_read_tokens is None and target not in ("openai-responses",):
        assert again.cache_read_tokens is None  # (never invented)


SDK_CASES = [(cap, target) for cap in STREAMS for target in TARGETS
             if first_reply(cap.data, cap.provider).complete]


def _sdk_reads_original(cap: Capture, target: str) -> bool:
    """Whether the target's SDK reads the capture itself (the same-provider case)."""
    try:
        ORACLES[target](cap.data)
    except Exception:  # noqa: BLE001 - a recorded stream the SDK rejects as it came
        return False
    return True


@pytest.mark.parametrize(("cap", "target"), SDK_CASES,
                         ids=[f"{c.name}->{t}" for c, t in SDK_CASES])
def test_translate_is_read_by_the_targets_sdk(cap: Capture, target: str) -> None:
    if provider_of(target) == cap.provider and not _sdk_reads_original(cap, target):
        pytest.skip("the SDK rejects this recorded stream itself (PITFALLS 28)")
    original = first_reply(cap.data, cap.provider)
    read = ORACLES[target](llm_rx.translate(cap.data, target, cap.provider))
    refusal = "".join(b.text for b in original.content if b.type == "refusal")
    as_text = provider_of(target) not in ("openai-chat", "openai-responses")
    assert read.text == original.text + (refusal if as_text else "")
    assert read.thinking == _summary(original, refusal_as_text=False)["thinking"]
    assert [name for _, name, _ in read.calls] == [call.name for call in original.tool_calls]
    # (a Gemini call that came without args goes back without: its SDK reads ``None``)
    assert [{} if args is None and provider_of(target) == "gemini" else args
            for _, _, args in read.calls] == [
        _object(call.arguments, call.raw_arguments, target, sdk=True)
        for call in original.tool_calls]
    for (call_id, _, _), call in zip(read.calls, original.tool_calls, strict=True):
        assert call.id is None or call_id in (call.id, None)  # (Ollama's SDK has no ids)


_FEW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_SAMPLE = [c for c in STREAMS if c.name in {
    "anthropic/thinking-signature.sse", "openai/chat-parallel-tool-calls.sse",
    "gemini/sse-thought-parts.sse", "openai/responses-reasoning-summary.sse",
    "bedrock/converse-stream-redacted-reasoning.eventstream", "ollama/chat-gemma3-text.ndjson",
    "anthropic/web-search-citations.sse", "openai/responses-logprobs.sse",
}]


@pytest.mark.parametrize("cap", _SAMPLE, ids=[c.name for c in _SAMPLE])
@pytest.mark.parametrize("target", EVERY)
@given(cuts=st.lists(st.integers(min_value=0, max_value=1 << 20), max_size=12))
@_FEW
def test_translate_bytes_do_not_depend_on_chunking(
    cap: Capture, target: str, cuts: list[int]
) -> None:
    whole = llm_rx.translate(cap.data, target, cap.provider)
    data = cap.data
    pieces = split_at(data, [cut % (len(data) + 1) for cut in cuts])
    assert llm_rx.translate(pieces, target, cap.provider) == whole


@pytest.mark.parametrize("target", EVERY)
def test_translate_templates_write_the_bytes_the_frames_would(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = [llm_rx.translate(cap.data, target, cap.provider) for cap in STREAMS]
    monkeypatch.setattr(llm_rx.encoders.Encoder, "learn", lambda *args, **kwargs: None)
    slow = [llm_rx.translate(cap.data, target, cap.provider) for cap in STREAMS]
    assert fast == slow
