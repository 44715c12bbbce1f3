"""Recorded Responses replies that did not end with ``response.completed``, read against
what the provider itself said last (the SDK's stream helper, the oracle of
``test_native_responses.py``, raises without ``response.completed``).

Streams: xAI's cut by its token limit (``response.incomplete``, its part never done), and
OpenAI's that failed (an ``error`` event, then ``response.failed``). Non-stream bodies: a
background reply queued and then polled while running, a Bedrock mantle reply that timed out
(``status: failed`` in an HTTP 200), and an OpenAI reply cut by ``max_output_tokens``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import llm_rx
from tests.captures import CAPTURES, HERE, Capture, capture, responses_terminal
from tests.test_contract_sdk import frames

UNFINISHED = [cap for cap in CAPTURES if cap.provider == "openai-responses"
              and responses_terminal(cap.name) != "response.completed"]


def _terminal(cap: Capture) -> dict[str, Any]:
    """The ``response`` object of the capture's terminal frame."""
    kind = responses_terminal(cap.name)
    found: dict[str, Any] = [frame.data for frame in frames(cap.name)
                             if frame.data.get("type") == kind][-1]["response"]
    return found


def _said_text(snapshot: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for item in snapshot["output"]
                   if item["type"] == "message" for part in item["content"])


def test_the_unfinished_streams_are_there() -> None:
    # (every case below is parametrised over them: an empty list would pass vacuously)
    assert sorted(responses_terminal(cap.name) or "" for cap in UNFINISHED) == [
        "response.failed", "response.incomplete"]


@pytest.mark.parametrize("cap", UNFINISHED, ids=lambda c: c.name)
def test_an_unfinished_stream_is_the_reply_its_terminal_frame_says(cap: Capture) -> None:
    snapshot = _terminal(cap)
    resp = llm_rx.reassemble(cap.data)
    assert resp.text == _said_text(snapshot)
    assert resp.id == snapshot["id"]
    if snapshot["status"] == "failed":
        assert not resp.complete
        assert resp.stop_reason == "error"
        assert resp.error is not None
        assert resp.error.kind == "provider"
        assert snapshot["error"]["message"] in resp.error.message
        assert not resp.usage.reported  # (the failed response counted nothing: usage null)
    else:
        # (cut by its limit, the reply ended: complete, with the reason it stopped)
        assert snapshot["incomplete_details"] == {"reason": "REASON_MAX_LEN"}
        assert (resp.complete, resp.stop_reason, resp.error) == (True, "max_tokens", None)
        usage = snapshot["usage"]
        assert (resp.usage.input_tokens, resp.usage.output_tokens) == (
            usage["input_tokens"], usage["output_tokens"])
        assert resp.usage.reasoning_tokens == usage["output_tokens_details"]["reasoning_tokens"]


@pytest.mark.parametrize("cap", UNFINISHED, ids=lambda c: c.name)
def test_to_native_of_an_unfinished_stream_keeps_how_it_ended(cap: Capture) -> None:
    snapshot = _terminal(cap)
    resp = llm_rx.reassemble(cap.data)
    native = llm_rx.to_native(resp, "openai-responses")
    assert native["status"] == snapshot["status"]
    assert native["incomplete_details"] == snapshot["incomplete_details"]
    assert native["output"] == snapshot["output"]  # (the message the stream never closed too)
    assert native["usage"] == snapshot["usage"]
    again = llm_rx.from_native(native, "openai-responses")
    assert (again.complete, again.stop_reason, again.text) == (
        resp.complete, resp.stop_reason, resp.text)
    assert (again.error and again.error.kind) == (resp.error and resp.error.kind)


def test_to_native_of_a_failed_stream_gives_its_terminal_error_back() -> None:
    cap = capture("openai/responses-error-event-failed.sse")
    native = llm_rx.to_native(llm_rx.reassemble(cap.data), "openai-responses")
    assert native["error"] == _terminal(cap)["error"]


# -- non-stream bodies -------------------------------------------------------------------------

#: recorded body -> (complete, stop_reason, the reply's error kind)
BODIES: dict[str, tuple[bool, str, str | None]] = {
    "bedrock/mantle-responses-failed.nonstream.json": (False, "error", "provider"),
    "openai/responses-incomplete-max-output-tokens.nonstream.json": (True, "max_tokens", None),
    "openai/responses-background-poll-queued.nonstream.json": (False, "interrupted", "incomplete"),
    "openai/responses-background-poll-in-progress.nonstream.json": (
        False, "interrupted", "incomplete"),
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_from_native_of_a_recorded_unfinished_body(name: str) -> None:
    data = (HERE / name).read_bytes()
    body = json.loads(data)
    resp = llm_rx.from_native(data)
    complete, stop, kind = BODIES[name]
    assert (resp.provider, resp.complete, resp.stop_reason) == ("openai-responses", complete, stop)
    assert (resp.error and resp.error.kind) == kind
    assert resp.text == _said_text(body)
    if body["status"] == "failed":  # (a timeout: the same request may succeed)
        assert resp.error is not None
        assert resp.error.retryable
        assert body["error"]["message"] in resp.error.message
    # Its state goes back into the body as the provider wrote it (with ``usage: null`` where
    # the mantle host left the key out: OpenAI writes it so, and the SDK's type has it).
    native = llm_rx.to_native(resp, "openai-responses")
    if "usage" not in body:
        assert native.pop("usage") is None
    assert native == body


@pytest.mark.parametrize("name", [name for name, (_, _, kind) in sorted(BODIES.items())
                                  if kind == "incomplete"])
def test_reassemble_of_a_recorded_running_body_is_no_finished_reply(name: str) -> None:
    resp = llm_rx.reassemble((HERE / name).read_bytes())
    assert not resp.complete
    assert resp.error is not None
    assert resp.error.kind == "incomplete"
