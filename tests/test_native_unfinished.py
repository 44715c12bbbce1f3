"""A non-stream body that is not a finished reply never reads as one (PITFALLS 50), and the
state of a reply that did not finish goes back into its body (issue 31, item 2).

The real bodies: the ``response`` objects a recorded Responses stream carried in its
``response.queued`` / ``response.in_progress`` frames (the resource a retrieve returns while
the reply runs), and the recorded ``.nonstream.json`` bodies with their status or stop field
changed (the states no capture has: cancelled, failed, a missing stop field). The
Responses bodies ``to_native`` writes are judged by the SDK's own ``Response`` model.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from openai.types.responses import Response as SDKResponse

import llm_rx
from llm_rx import ErrorInfo, Response, TextBlock, from_native, to_native
from tests.captures import HERE
from tests.test_contract_sdk import frames


def _body(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((HERE / name).read_text())
    return body


def _snapshot(name: str, kind: str) -> dict[str, Any]:
    """The ``response`` object of the capture's first ``kind`` frame."""
    found: dict[str, Any] = next(frame.data["response"] for frame in frames(name)
                                 if frame.data.get("type") == kind)
    return found


BASIC = "openai/responses-basic-llm.nonstream.json"


def _with(**fields: Any) -> dict[str, Any]:
    return {**_body(BASIC), **fields}


#: name -> (body, the error kind its reply carries)
UNFINISHED: dict[str, tuple[dict[str, Any], str]] = {
    "recorded-queued": (_snapshot("openai/responses-background-queued.sse", "response.queued"),
                        "incomplete"),
    "recorded-in-progress": (_snapshot("openai/responses-basic-llm.sse", "response.in_progress"),
                             "incomplete"),
    "queued": (_with(status="queued", background=True, usage=None), "incomplete"),
    "in-progress": (_with(status="in_progress", background=True), "incomplete"),
    "cancelled": (_with(status="cancelled", background=True), "cancelled"),
    "unknown-status": (_with(status="paused"), "incomplete"),
    "no-status": ({k: v for k, v in _body(BASIC).items() if k != "status"}, "incomplete"),
    "failed": (_with(status="failed", error={"code": "server_error", "message": "boom"}),
               "provider"),
}


@pytest.mark.parametrize("name", sorted(UNFINISHED))
def test_responses_body_not_finished_is_no_complete_reply(name: str) -> None:
    body, kind = UNFINISHED[name]
    reply = from_native(copy.deepcopy(body), "openai-responses")
    assert not reply.complete
    assert reply.stop_reason != "end_turn"
    assert reply.error is not None
    assert reply.error.kind == kind
    assert reply.id == body["id"]
    # what it holds so far is kept
    assert reply.text == "".join(part["text"] for item in body["output"]
                                 for part in item.get("content") or ()
                                 if part.get("type") == "output_text")


@pytest.mark.parametrize("name", sorted(UNFINISHED))
def test_responses_body_state_round_trips_both_ways(name: str) -> None:
    body, _ = UNFINISHED[name]
    reply = from_native(copy.deepcopy(body), "openai-responses")
    again = to_native(reply, "openai-responses")
    if "status" not in body:  # (it comes back saying what it is: not finished)
        assert again.pop("status") == "in_progress"
    assert again.get("status") == body.get("status")
    assert again.get("error") == body.get("error")
    assert again == body  # the body itself, every field
    back = from_native(to_native(reply, "openai-responses"), "openai-responses")
    if "status" not in body:  # (the same kind, in words naming the status it now has)
        assert back.error is not None
        assert reply.error is not None
        assert back.error.kind == reply.error.kind
        back = back.model_copy(update={"error": reply.error})
    assert back == reply


def _failed_stream(error_frame: dict[str, Any]) -> bytes:
    """A recorded Responses stream whose tail is replaced by an in-band ``error`` event."""
    kept = [frame for frame in frames("openai/responses-basic-llm.sse")
            if frame.data.get("type") != "response.completed"]
    out = b"".join(b"event: %s\ndata: %s\n\n" % (frame.data["type"].encode(),
                                                 json.dumps(frame.data).encode())
                   for frame in kept)
    return out + b"event: error\ndata: " + json.dumps(error_frame).encode() + b"\n\n"


@pytest.mark.parametrize("error_frame", [
    {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": None,
     "sequence_number": 9},
    {"type": "error", "error": {"type": "server_error", "code": "server_error",
                                "message": "The server had an error"}, "sequence_number": 9},
], ids=["flat", "nested"])
def test_responses_failed_mid_stream_writes_status_failed_and_the_error(
    error_frame: dict[str, Any],
) -> None:
    reply = llm_rx.reassemble(_failed_stream(error_frame), "openai-responses")
    assert reply.error is not None
    assert reply.error.kind == "provider"
    body = to_native(reply, "openai-responses")
    assert body["status"] == "failed"
    own = error_frame.get("error") or error_frame
    assert body["error"]["code"] == own["code"]
    assert body["error"]["message"] == own["message"]
    SDKResponse.model_validate(body)
    back = from_native(body, "openai-responses")
    assert not back.complete
    assert back.error is not None
    assert (back.error.kind, back.error.message, back.error.retryable) == (
        reply.error.kind, reply.error.message, reply.error.retryable)


@pytest.mark.parametrize(("kind", "status"), [
    ("provider", "failed"), ("wire_format", "failed"), ("protocol", "failed"),
    ("cancelled", "cancelled"), ("incomplete", "in_progress"),
])
@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_responses_to_native_of_a_reply_that_did_not_finish(
    kind: str, status: str, provider: str,
) -> None:
    reply = Response(provider=provider, id="resp_1", model="m",
                     content=[TextBlock(text="so far")], complete=False,
                     stop_reason="error" if kind != "incomplete" else "interrupted",
                     error=ErrorInfo(kind=kind, message="it went wrong"))  # type: ignore[arg-type]
    body = to_native(reply, "openai-responses")
    assert body["status"] == status
    if status == "failed":
        assert body["error"] == {"code": "server_error", "message": "it went wrong"}
    else:
        assert body.get("error") is None
    SDKResponse.model_validate(body)
    back = from_native(body, "openai-responses")
    assert not back.complete
    assert back.text == "so far"


# -- the same class in every from_native: a body whose stop field is missing or null ------

STOPS = {  # provider: (recorded body, the stop field a finished body always has)
    "anthropic": ("anthropic/text-vercel.nonstream.json", ("stop_reason",)),
    "bedrock-converse": ("bedrock/converse-stream-text.nonstream.json", ("stopReason",)),
    "gemini": ("gemini/sse-thought-parts.nonstream.json", ("candidates", 0, "finishReason")),
    "ollama": ("ollama/generate-gemma3.nonstream.json", ("done",)),
}


def _drop(body: dict[str, Any], path: tuple[Any, ...], null: bool) -> dict[str, Any]:
    body = copy.deepcopy(body)
    holder: Any = body
    for step in path[:-1]:
        holder = holder[step]
    if path[-1] == "done":
        holder["done"] = False
    elif null:
        holder[path[-1]] = None
    else:
        holder.pop(path[-1])
    return body


@pytest.mark.parametrize("null", [True, False], ids=["null", "missing"])
@pytest.mark.parametrize("provider", sorted(STOPS))
def test_a_body_without_its_stop_field_is_no_finished_reply(provider: str, null: bool) -> None:
    name, path = STOPS[provider]
    finished = from_native(_body(name), provider)  # type: ignore[arg-type]
    assert finished.complete
    reply = from_native(_drop(_body(name), path, null), provider)  # type: ignore[arg-type]
    assert not reply.complete
    assert reply.error is not None
    assert reply.error.kind == "incomplete"
    assert reply.text == finished.text
    if provider != "ollama":  # (Ollama counts only on its done line)
        assert reply.usage == finished.usage


def test_cohere_body_without_finish_reason_is_no_finished_reply() -> None:
    body = {"id": "c1", "message": {"role": "assistant",
                                    "content": [{"type": "text", "text": "Hi"}]},
            "finish_reason": "COMPLETE",
            "usage": {"tokens": {"input_tokens": 3, "output_tokens": 1}}}
    assert from_native(body, "cohere").complete
    for cut in ({**body, "finish_reason": None},
                {k: v for k, v in body.items() if k != "finish_reason"}):
        reply = from_native(cut, "cohere")
        assert not reply.complete
        assert reply.text == "Hi"


def test_an_unknown_stop_value_is_still_a_stop() -> None:
    body = {**_body("anthropic/text-vercel.nonstream.json"), "stop_reason": "a_new_reason"}
    reply = from_native(body, "anthropic")
    assert reply.complete
    assert to_native(reply, "anthropic")["stop_reason"] == "a_new_reason"


def test_a_streaming_source_reading_a_queued_body_is_no_complete_reply() -> None:
    body, _ = UNFINISHED["recorded-queued"]
    events = llm_rx.from_bytes(json.dumps(body).encode(), provider="openai-responses")
    assert not events.pipe(llm_rx.operators.to_response()).run().complete
