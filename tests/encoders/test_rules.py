"""The rules every target's encoding keeps: its opening and terminal frames, a cut source that
stays cut, usage only where reported, the stop table, ids before arguments, errors in the
target's own shape, and deltas written as they arrive."""

from __future__ import annotations

from typing import Any

import pytest

import llm_rx
from llm_rx.encoders import ENCODERS, UI_TARGETS, make_encoder
from llm_rx.encoders._tables import STOP
from llm_rx.events import Event, MessageStop, TextDelta, ToolArgsDelta
from llm_rx.wire.eventstream import EventStreamDecoder
from tests.captures import capture
from tests.streams import (
    DONE,
    MESSAGE_STOP,
    anthropic_events,
    block_delta,
    block_start,
    block_stop,
    chat_chunk,
    message_delta,
    message_start,
    sse,
)

from .oracles import sse_payloads
from .test_gateway_bugs import FIRST_IS_TOOL

TARGETS = sorted(set(ENCODERS) - UI_TARGETS)  # (the targets a decoder reads back)
EVERY = sorted(ENCODERS)
TEXT = capture("anthropic/text-basic.sse")


def provider_of(target: str) -> Any:
    return "gemini" if target == "gemini-json-array" else target


def frames(data: bytes, target: str) -> list[str]:
    """Each frame's name (SSE event or type, Bedrock event type), or the line's keys."""
    if target == "bedrock-converse":
        decoder = EventStreamDecoder()
        return [str(m.headers[":event-type"]) for m in decoder.decode(data)]
    if target == "ollama":
        return ["done" if b'"done":true' in line else "line" for line in data.splitlines()]
    if target == "gemini-json-array":
        return ["array"] if data.startswith(b"[") else []
    return [name or ("[DONE]" if payload == "[DONE]" else "data")
            for name, payload in sse_payloads(data)]


_OPENING = {"anthropic": "message_start", "openai-responses": "response.created",
            "bedrock-converse": "messageStart", "cohere": "message-start",
            "gemini-interactions": "interaction.created"}
_TERMINAL = {"anthropic": ["message_delta", "message_stop"], "openai-chat": ["[DONE]"],
             "openai-responses": ["response.completed"], "ollama": ["done"],
             "bedrock-converse": ["messageStop", "metadata"], "cohere": ["message-end"],
             "gemini-interactions": ["interaction.completed", "done"]}


@pytest.mark.parametrize("target", TARGETS)
def test_encode_opens_with_the_targets_first_frame_even_for_a_tool_call(target: str) -> None:
    out = llm_rx.translate(FIRST_IS_TOOL, target, "openai-chat")
    if target in _OPENING:
        assert frames(out, target)[0] == _OPENING[target]
    again = llm_rx.reassemble(out, provider_of(target))
    assert [(c.id, c.name, c.arguments) for c in again.tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"})]
    assert again.complete


@pytest.mark.parametrize("target", TARGETS)
def test_encode_ends_a_complete_reply_with_the_targets_terminal_frames(target: str) -> None:
    out = llm_rx.translate(TEXT.data, target, "anthropic")
    names = frames(out, target)
    if target in _TERMINAL:
        assert names[-len(_TERMINAL[target]):] == _TERMINAL[target]
    if target == "gemini-json-array":
        assert out.endswith(b"]")
    assert llm_rx.reassemble(out, provider_of(target)).complete


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("cut", [0.35, 0.7, None])
def test_encode_cut_source_stays_cut(target: str, cut: float | None) -> None:
    # (``None``: cut right before message_stop, after the stop reason and the usage)
    end = TEXT.data.index(b"event: message_stop") if cut is None else int(len(TEXT.data) * cut)
    data = TEXT.data[:end]
    out = llm_rx.translate(data, target, "anthropic")
    names = frames(out, target)
    for terminal in _TERMINAL.get(target, []):
        if terminal not in ("message_delta", "metadata"):
            assert terminal not in names
    assert b"finishReason" not in out
    assert b'"finish_reason":"' not in out
    assert not out.endswith(b"]")
    again = llm_rx.reassemble(out, provider_of(target))
    assert (again.complete, again.stop_reason) == (False, "interrupted")


# hand-written: an OpenAI reply that never reported usage (no include_usage)
NO_USAGE = sse(chat_chunk({"role": "assistant", "content": "Hi"}), chat_chunk({}, "stop")) + DONE


#: targets whose wire requires counts (anthropic's ``message_start`` and ``message_delta``
#: usage: the SDK's ``messages.stream`` reads both), written 0 when nobody reported them
REQUIRED_COUNTS = {"anthropic": b'"usage":{"input_tokens":0,"output_tokens":0}'}


@pytest.mark.parametrize("target", TARGETS)
def test_encode_usage_absent_stays_absent(target: str) -> None:
    out = llm_rx.translate(NO_USAGE, target, "openai-chat")
    usage = llm_rx.reassemble(out, provider_of(target)).usage
    if target in REQUIRED_COUNTS:
        assert REQUIRED_COUNTS[target] in out
        assert (usage.input_tokens, usage.output_tokens) == (0, 0)
        assert (usage.cache_read_tokens, usage.reasoning_tokens) == (None, None)
        return
    assert not usage.reported
    for zero in (b'"input_tokens":0', b'"prompt_tokens":0', b'"promptTokenCount":0',
                 b'"inputTokens":0', b'"prompt_eval_count":0'):
        assert zero not in out


# hand-written: Anthropic usage with cache reads and writes (input is the uncached part)
CACHED = anthropic_events(
    message_start(usage={"input_tokens": 5, "cache_read_input_tokens": 70,
                         "cache_creation_input_tokens": 25, "output_tokens": 1}),
    block_start(0, {"type": "text", "text": ""}),
    block_delta(0, {"type": "text_delta", "text": "Hi"}),
    block_stop(0),
    message_delta("end_turn", output_tokens=9),
    MESSAGE_STOP,
)


@pytest.mark.parametrize("target", TARGETS)
def test_encode_usage_totals_survive_each_targets_split(target: str) -> None:
    via = llm_rx.translate(CACHED, target, "anthropic")
    back = llm_rx.reassemble(llm_rx.translate(via, "anthropic", provider_of(target)),
                             "anthropic").usage
    assert (back.input_tokens, back.output_tokens) == (100, 9)
    no_write_slot = ("ollama", "gemini", "gemini-json-array", "gemini-interactions", "cohere")
    if target not in no_write_slot:
        assert (back.cache_read_tokens, back.cache_write_tokens) == (70, 25)


def _with_stop(native: str) -> bytes:
    return anthropic_events(
        message_start(), block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "x"}), block_stop(0),
        message_delta(native), MESSAGE_STOP)


@pytest.mark.parametrize("target", sorted(set(TARGETS) - {"gemini-json-array"}))
@pytest.mark.parametrize("reason", ["end_turn", "max_tokens", "stop_sequence", "refusal",
                                    "pause_turn"])
def test_encode_stop_reason_follows_the_table(target: str, reason: str) -> None:
    out = llm_rx.translate(_with_stop(reason), target, "anthropic")
    events: list[Event] = []
    llm_rx.from_bytes(out, target).subscribe(events.append)
    stop = events[-1]
    assert isinstance(stop, MessageStop)
    native = STOP[target].get(reason)  # type: ignore[call-overload]
    if target == "openai-responses":  # (the status; a limit's reason in its details)
        assert (stop.native, stop.details) == (
            ("incomplete", native) if native else ("completed", None))
    elif target == "anthropic":
        assert stop.native["stop_reason"] == native
    else:
        assert stop.native == native


@pytest.mark.parametrize("target", EVERY)
def test_encode_tool_id_and_name_go_before_the_arguments(target: str) -> None:
    out = llm_rx.translate(FIRST_IS_TOOL, target, "openai-chat")
    assert out.index(b"call_1") < out.index(b"Paris")
    assert out.index(b"get_weather") < out.index(b"Paris")


@pytest.mark.parametrize("target", TARGETS)
def test_encode_provider_error_ends_as_the_targets_error(target: str) -> None:
    data = capture("anthropic/error-overloaded-midstream.synthetic.sse").data
    out = llm_rx.translate(data, target, "anthropic")
    again = llm_rx.reassemble(out, provider_of(target))
    assert again.error is not None
    assert (again.stop_reason, again.error.kind) == ("error", "provider")
    assert "overloaded" in again.error.message.lower() or "Overloaded" in again.error.message
    assert again.text == llm_rx.reassemble(data, "anthropic").text  # (what arrived is kept)


_HELD = {"gemini", "gemini-json-array", "ollama"}  # (whole calls: written at their end)


@pytest.mark.parametrize("target", EVERY)
def test_encode_writes_each_delta_with_its_own_event(target: str) -> None:
    encoder = make_encoder(target)
    events: list[Event] = []
    llm_rx.from_bytes(capture("openai/chat-tool-call-strict.sse").data, "openai-chat").subscribe(
        events.append, lambda error: None)
    for event in events:
        data = encoder.encode([event])
        if isinstance(event, TextDelta) or (
            isinstance(event, ToolArgsDelta) and target not in _HELD
        ):
            assert data, event
