"""Everything llm-rx writes in the Responses wire validates against the Open Responses
specification (DESIGN section 7): every event ``translate(..., to="openai-responses")``
writes and every body ``to_native(..., "openai-responses")`` gives, for every capture; the
stream of another provider's reply follows the specification's order; and the streamed final
response equals the non-stream body of the same reply.

A recorded Responses capture is given back as it came (same-provider translation is
byte-faithful), so one that departs from the specification departs in both; those are
listed below with the reason, and a test checks that each listed one does depart (the list
cannot go stale) while every other capture passes.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import orjson
import pytest

import llm_rx
from llm_rx.encoders import make_encoder
from llm_rx.events import (
    BlockStart,
    BlockStop,
    Event,
    MessageStart,
    MessageStop,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    UsageUpdate,
)
from llm_rx.response import Usage
from tests.captures import CAPTURES, ONE_REPLY, Capture
from tests.open_responses import (
    OPENAI_NAMES,
    body_errors,
    event_errors,
    events_of,
    sequence_errors,
)

_OLDER = "recorded before the API returned completed_at, presence_penalty, frequency_penalty"
_HOSTED = "an OpenAI hosted tool and its item, which the specification does not define"

#: recorded Responses captures that depart from the specification, and why
DEPARTURES = {
    "openai/responses-annotations-raw.sse": f"{_HOSTED} (web_search_call)",
    "openai/responses-apply-patch.sse": f"{_OLDER}; {_HOSTED} (apply_patch_call)",
    "openai/responses-code-interpreter-reasoning.sse":
        f"{_OLDER}; {_HOSTED} (code_interpreter_call)",
    "openai/responses-custom-tool.sse":
        f"{_OLDER}; a custom tool and its custom_tool_call item (not in the specification)",
    "openai/responses-file-search.sse": f"{_OLDER}; {_HOSTED} (file_search_call)",
    "openai/responses-function-call.sse":
        f"{_OLDER}, top_logprobs and reasoning.summary, and before events had "
        "sequence_number (an older API version)",
    "openai/responses-image-generation-partial.sse":
        f"{_OLDER}; {_HOSTED} (image_generation_call)",
    "openai/responses-reasoning-summary.sse": _OLDER,
    "openai/responses-mcp-approval-request.sse":
        f"{_HOSTED} (mcp: mcp_list_tools, mcp_approval_request)",
    "openai/responses-web-search.sse": f"{_OLDER}; {_HOSTED} (web_search_call)",
    "openrouter/responses-raw-cot.sse":
        "OpenRouter's dialect: null temperature, top_p and truncation; no text, "
        "completed_at, presence_penalty, frequency_penalty, top_logprobs",
    "xai/responses-reasoning.sse":
        "xAI's dialect: no instructions, error, completed_at, truncation, service_tier (and "
        "more: llm_rx/wire/openai_responses.py lists them); null temperature and top_p",
    "xai/responses-incomplete-max-output-tokens.sse":
        "xAI's dialect (as xai/responses-reasoning.sse), ending with response.incomplete",
    "openai/responses-error-event-failed.sse": _OLDER,
}


@cache
def _written(cap: Capture) -> tuple[bytes, bytes]:
    """What llm-rx writes for a capture: its translated stream, its to_native body (JSON)."""
    stream = llm_rx.translate(cap.data, to="openai-responses", provider=cap.provider)
    body = llm_rx.to_native(llm_rx.reassemble(cap.data, cap.provider), "openai-responses")
    return stream, orjson.dumps(body)


def _translated(cap: Capture) -> list[dict[str, Any]]:
    return list(events_of(_written(cap)[0]))


def _body(cap: Capture) -> dict[str, Any]:
    body: dict[str, Any] = orjson.loads(_written(cap)[1])
    return body


@cache
def _complete(cap: Capture) -> bool:
    return llm_rx.reassemble(cap.data, cap.provider).complete


CHECKED = [cap for cap in CAPTURES if cap.name not in DEPARTURES]
FOREIGN = [cap for cap in ONE_REPLY if cap.provider != "openai-responses"]


@pytest.mark.parametrize("cap", CHECKED, ids=lambda cap: cap.name)
def test_every_translated_event_validates(cap: Capture) -> None:
    events = _translated(cap)
    assert events
    assert [error for event in events for error in event_errors(event)] == []


@pytest.mark.parametrize("cap", CHECKED, ids=lambda cap: cap.name)
def test_to_native_body_validates(cap: Capture) -> None:
    assert body_errors(_body(cap)) == []


@pytest.mark.parametrize("cap", FOREIGN, ids=lambda cap: cap.name)
def test_translated_stream_follows_the_specification_s_order(cap: Capture) -> None:
    events = _translated(cap)
    assert sequence_errors(events) == []
    kinds = [event["type"] for event in events]
    if _complete(cap):
        assert kinds[-1] in ("response.completed", "response.incomplete")


@pytest.mark.parametrize("cap", [c for c in CAPTURES if _complete(c)], ids=lambda c: c.name)
def test_streamed_final_response_equals_the_non_stream_body(cap: Capture) -> None:
    final = [event["response"] for event in _translated(cap)
             if event["type"] in ("response.completed", "response.incomplete")]
    assert final[-1] == _body(cap)


@pytest.mark.parametrize("name", sorted(DEPARTURES))
def test_listed_departures_do_depart(name: str) -> None:
    cap = next(cap for cap in CAPTURES if cap.name == name)
    assert cap.provider == "openai-responses", "only a recorded Responses stream may depart"
    errors = [e for event in events_of(cap.data) for e in event_errors(event)]
    assert errors, f"{name} is listed as a departure ({DEPARTURES[name]}) but validates"


def _thinking_reply() -> list[Event]:
    return [
        MessageStart("anthropic", "claude-x", "msg_1"),
        BlockStart(0, "thinking"), ThinkingDelta(0, "hm"), SignatureDelta(0, "sig=="),
        BlockStop(0),
        BlockStart(1, "text"), TextDelta(1, "Hi"), BlockStop(1),
        BlockStart(2, "text"), TextDelta(2, " there"), BlockStop(2),
        UsageUpdate(Usage(input_tokens=3, output_tokens=4)),
        MessageStop("end_turn"),
    ]


def _encoded(events: list[Event]) -> list[dict[str, Any]]:
    encoder = make_encoder("openai-responses")
    return list(events_of(encoder.encode(events) + encoder.finish()))


def test_reasoning_text_is_a_content_part_with_its_signature() -> None:
    events = _encoded(_thinking_reply())
    kinds = [event["type"] for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    at = kinds.index("response.reasoning_text.delta")
    assert kinds[at - 1] == "response.content_part.added"
    assert kinds[at + 1: at + 3] == ["response.reasoning_text.done",
                                     "response.content_part.done"]
    final = events[-1]["response"]
    reasoning, message = final["output"]
    assert reasoning == {"id": "rs_msg_1_0", "type": "reasoning", "summary": [],
                         "content": [{"type": "reasoning_text", "text": "hm"}],
                         "encrypted_content": "sig=="}
    assert message["id"] == "msg_msg_1_1"  # (both texts: one message)
    assert [part["text"] for part in message["content"]] == ["Hi", " there"]
    assert final["usage"]["input_tokens_details"]["cached_tokens"] == 0
    assert body_errors(final) == []


def _stream(events: list[dict[str, Any]]) -> bytes:
    return b"".join(b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n"
                    for e in events)


def test_the_decoder_reads_the_specification_s_reasoning_event_names() -> None:
    openai_named = _encoded(_thinking_reply())
    spec_named = [{**e, "type": OPENAI_NAMES.get(e["type"], e["type"])} for e in openai_named]
    assert "response.reasoning.delta" in [e["type"] for e in spec_named]
    assert [error for e in spec_named for error in event_errors(e)] == []
    got = llm_rx.reassemble(_stream(spec_named), "openai-responses")
    want = llm_rx.reassemble(_stream(openai_named), "openai-responses")
    assert got.thinking == want.thinking == "hm"
    assert got.content == want.content


def test_perplexity_s_reasoning_progress_events_are_kept_opaque() -> None:
    # Perplexity's Agent API (its documented stream events) reports its search steps as
    # response.reasoning.started / .search_queries / .search_results / .stopped.
    events = _encoded(_thinking_reply())
    extra = [{"type": "response.reasoning.started", "sequence_number": 0},
             {"type": "response.reasoning.search_queries", "queries": ["llm-rx"],
              "sequence_number": 0},
             {"type": "response.reasoning.stopped", "sequence_number": 0}]
    reply = llm_rx.reassemble(_stream([events[0], *extra, *events[1:]]), "openai-responses")
    assert reply.complete
    assert reply.text == "Hi there"
    kinds: list[str] = []
    llm_rx.from_bytes(_stream([events[0], *extra, *events[1:]]), "openai-responses").subscribe(
        lambda e: kinds.append(getattr(e, "kind", "")))
    assert [k for k in kinds if k.startswith("response.reasoning.")] == [
        e["type"] for e in extra]
