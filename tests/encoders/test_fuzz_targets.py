"""``translate`` of a hostile source into every target, each frame judged by the target's own
validator (issue 31, item 10): the SDKs' stream event types, ``ag-ui-protocol``'s models
and ``ag-ui-validate``, the ``ai`` package's chunk schema and client (``vercel-ui``), and
the Open Responses specification's models (``openresponses-types``) for the Responses
stream. The source is an OpenAI chat stream a hostile host could send:
negative, fractional, huge and string token counts; calls whose arguments are cut short
(a limit) or no JSON at all; any finish reason. A frame that is no JSON (a source refused
before it started) ends the case: what is written must always be valid.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.types import RawMessageStreamEvent
from cohere.v2.types.v2chat_stream_response import V2ChatStreamResponse
from google.genai import types as genai
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ollama import ChatResponse
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

import llm_rx
from tests.open_responses import body_errors, event_errors, events_of, sequence_errors
from tests.ui_judges import ag_ui_events, ag_ui_report, read_ui_streams

from .oracles import sse_payloads

_ANTHROPIC: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
_RESPONSES: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
_COHERE: TypeAdapter[Any] = TypeAdapter(V2ChatStreamResponse)


def _sse(validate: Callable[[Any], Any]) -> Callable[[bytes], None]:
    def judge(body: bytes) -> None:
        for _, payload in sse_payloads(body):
            if payload != "[DONE]":
                validate(json.loads(payload))
    return judge


def _ollama(body: bytes) -> None:
    for line in body.splitlines():
        ChatResponse.model_validate(json.loads(line))


def _ag_ui(body: bytes) -> None:
    ag_ui_events(body)  # (each event by ag-ui-protocol's models)
    report = ag_ui_report(body)
    assert report.summary.errors == 0, report.diagnostics


def _vercel_ui(body: bytes) -> None:
    """Every chunk by the ``ai`` package's own ``uiMessageChunkSchema``, read by its
    ``readUIMessageStream`` and made the next turn's messages; and no call ready to run
    whose input is a JSON object cut short (that is a ``tool-input-error``)."""
    [read] = read_ui_streams([body])
    assert [e for e in read["errors"] if e.startswith(("schema", "thrown", "convert"))] == []
    parts = (read["message"] or {}).get("parts", [])
    assert not [p for p in parts if p["type"].startswith("tool-")
                and p.get("state") == "input-available" and isinstance(p.get("input"), str)
                and p["input"].lstrip().startswith("{")]


def _open_responses(body: bytes) -> None:
    """Every event and the final ``response`` by the Open Responses specification's own
    models (``openresponses-types``) and their JSON Schema, in the specification's order."""
    events = list(events_of(body))
    assert [error for event in events for error in event_errors(event)] == []
    assert sequence_errors(events) == []
    final = [e["response"] for e in events if e["type"] in (
        "response.completed", "response.incomplete", "response.failed")]
    assert [error for response in final for error in body_errors(response)] == []


#: target (and, after ``:``, the judge when a target has several) -> its judge
JUDGES: dict[str, Callable[[bytes], None]] = {
    "ag-ui": _ag_ui,
    "anthropic": _sse(_ANTHROPIC.validate_python),
    "cohere": _sse(_COHERE.validate_python),
    "gemini": _sse(genai.GenerateContentResponse.model_validate),
    "ollama": _ollama,
    "openai-chat": _sse(ChatCompletionChunk.model_validate),
    "openai-responses": _sse(_RESPONSES.validate_python),
    "openai-responses:open-responses": _open_responses,
    "vercel-ui": _vercel_ui,
}

COUNT = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False),
                  st.integers(2**63, 2**70), st.sampled_from(["7", True, None, [], {}]))
ARGUMENTS = st.sampled_from(['{"city": "Paris"}', '{"city": "Par', "", "not json", "[1, 2]",
                             '{"a": {"b": [1, 2', "{}"])


def _chunk(delta: Any = None, finish: Any = None, usage: Any = None) -> bytes:
    body: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
                            "choices": []}
    if delta is not None:
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


@st.composite
def hostile(draw: st.DrawFn) -> bytes:
    frames = [_chunk({"role": "assistant", "content": draw(st.text(max_size=8))})]
    for number in range(draw(st.integers(0, 2))):
        arguments = draw(ARGUMENTS)
        cut = draw(st.integers(0, len(arguments)))
        call = {"index": number, "id": f"call_{number}", "type": "function",
                "function": {"name": "get", "arguments": arguments[:cut]}}
        frames.append(_chunk({"tool_calls": [call]}))
        if arguments[cut:]:
            frames.append(_chunk({"tool_calls": [{"index": number, "function": {
                "arguments": arguments[cut:]}}]}))
    frames.append(_chunk({}, draw(st.sampled_from(["stop", "length", "tool_calls"]))))
    if draw(st.booleans()):
        usage = {"prompt_tokens": draw(COUNT), "completion_tokens": draw(COUNT),
                 "total_tokens": draw(COUNT),
                 "prompt_tokens_details": {"cached_tokens": draw(COUNT)}}
        frames.append(_chunk(usage=usage))
    if draw(st.booleans()):
        frames.append(b"data: [DONE]\n\n")
    return b"".join(frames)


@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(JUDGES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hostile())
def test_translate_of_a_hostile_source_is_valid_for_every_target(target: str,
                                                                 data: bytes) -> None:
    try:
        out = llm_rx.translate(data, target.split(":")[0], "openai-chat")
    except llm_rx.LlmRxError:
        return  # (refused before anything was written)
    JUDGES[target](out)


@pytest.mark.parametrize("target", sorted(JUDGES))
@pytest.mark.parametrize("case", ["negative", "fraction", "huge", "list", "object",
                                  "cut-arguments"])
def test_translate_of_each_hostile_shape_is_valid(target: str, case: str) -> None:
    fair = {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}
    usage = {"negative": {"prompt_tokens": -5, "completion_tokens": 3, "total_tokens": -2},
             "fraction": {"prompt_tokens": 2.5, "completion_tokens": 3, "total_tokens": 5.5},
             "huge": {"prompt_tokens": 2**70, "completion_tokens": 1, "total_tokens": 2**70},
             # (a list or an object where a count stands: once passed on as it came)
             "list": {**fair, "prompt_tokens_details": {"cached_tokens": []}},
             "object": {**fair, "prompt_tokens_details": {"cached_tokens": {}}},
             }.get(case, fair)
    arguments = '{"city": "Par' if case == "cut-arguments" else '{"city": "Paris"}'
    call = {"index": 0, "id": "call_0", "type": "function",
            "function": {"name": "get", "arguments": arguments}}
    data = (_chunk({"role": "assistant", "content": "Hi"}) + _chunk({"tool_calls": [call]})
            + _chunk({}, "length" if case == "cut-arguments" else "tool_calls")
            + _chunk(usage=usage) + b"data: [DONE]\n\n")
    JUDGES[target](llm_rx.translate(data, target.split(":")[0], "openai-chat"))
