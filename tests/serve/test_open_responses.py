"""The emulator's ``/v1/responses`` against the Open Responses specification, over real HTTP.

Every capture, streamed and not: each event and each body validates (a recorded capture
listed in ``DEPARTURES`` is served as it came, and departs as it came); another provider's
stream follows the specification's order; the stream's final response equals the non-stream
body. Then what the specification's compliance suite (``scripts/compliance-test.ts`` of
openresponses/openresponses) checks of a server, reproduced here for one capture of every
provider family: its request bodies, its schema checks (``ResponseResource`` for a body and
for a stream's final response, every streamed event) and its semantic checks (output
present, ``completed``, a ``function_call`` item and its streamed events). The suite names one
model for all its tests, so each family's capture is a tool-calling one where one was
recorded. docs/how-to/serve.md gives the command that runs the suite itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

import llm_rx
from llm_rx.serve import EmulatorThread
from tests.captures import ONE_REPLY, Capture
from tests.encoders.test_open_responses import DEPARTURES
from tests.open_responses import body_errors, event_errors, events_of, sequence_errors

TIMEOUT = 10.0


def _id(cap: Capture) -> str:
    return cap.name.rsplit(".", 1)[0].replace("/", "__")


def _post(server: EmulatorThread, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{server.url}/v1/responses", json=body, timeout=TIMEOUT,
                      headers={"authorization": "Bearer test"})


def _complete(cap: Capture) -> bool:
    return llm_rx.reassemble(cap.data, cap.provider).complete


SERVED = [cap for cap in ONE_REPLY if not cap.name.endswith(".partial.sse")]  # (one reply each)


@pytest.mark.parametrize("cap", SERVED, ids=lambda cap: cap.name)
def test_every_capture_on_v1_responses_validates(cap: Capture,
                                                 llm_rx_server: EmulatorThread) -> None:
    streamed = _post(llm_rx_server, {"model": _id(cap), "input": "hi", "stream": True})
    body = _post(llm_rx_server, {"model": _id(cap), "input": "hi"})
    assert streamed.status_code == body.status_code == 200
    events = list(events_of(streamed.content))
    if cap.name not in DEPARTURES:
        assert [error for event in events for error in event_errors(event)] == []
        assert body_errors(body.json()) == []
    if cap.provider != "openai-responses":  # (a recording is served as it came: its own
        assert sequence_errors(events) == []  # completed re-encrypts reasoning, PITFALLS 17)
        if _complete(cap):
            assert events[-1]["response"] == body.json()


# -- the compliance suite's tests -------------------------------------------------------------

_WEATHER_TOOL = {
    "type": "function", "name": "get_weather",
    "description": "Get the current weather for a location",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}},
                   "required": ["location"]},
}
_IMAGE = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
          "nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==")

#: test id -> (request body without the model, streamed, needs a capture with a tool call)
REQUESTS: dict[str, tuple[dict[str, Any], bool, bool]] = {
    "basic-response": ({"input": [{"type": "message", "role": "user",
                                   "content": "Say hello in exactly 3 words."}]}, False, False),
    "streaming-response": ({"input": [{"type": "message", "role": "user",
                                       "content": "Count from 1 to 5."}]}, True, False),
    "system-prompt": ({"input": [
        {"type": "message", "role": "system", "content": "You are a pirate."},
        {"type": "message", "role": "user", "content": "Say hello."}]}, False, False),
    "tool-calling": ({"input": [{"type": "message", "role": "user",
                                 "content": "What's the weather like in San Francisco?"}],
                      "tools": [_WEATHER_TOOL]}, False, True),
    "tool-calling-streaming": ({"input": [{"type": "message", "role": "user",
                                           "content": "What's the weather in San Francisco?"}],
                                "tools": [_WEATHER_TOOL]}, True, True),
    "image-input": ({"input": [{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "What do you see in this image?"},
        {"type": "input_image", "image_url": _IMAGE}]}]}, False, False),
    "multi-turn": ({"input": [
        {"type": "message", "role": "user", "content": "My name is Alice."},
        {"type": "message", "role": "assistant", "content": "Hello Alice!"},
        {"type": "message", "role": "user", "content": "What is my name?"}]}, False, False),
}

#: provider family -> the capture the suite's model names (a tool-calling one where recorded)
FAMILIES = {
    "anthropic": "anthropic/tool-use-input-json-delta.sse",
    "openai-chat": "openai/chat-tool-call-strict.sse",
    "openai-responses": "openai/responses-tool-use-llm.sse",
    "gemini": "gemini/sse-function-call-gemini2.sse",
    "cohere": "cohere/v2-tool-call.sse",
    "bedrock-converse": "bedrock/converse-stream-server-tool-result.eventstream",
    "ollama": "ollama/chat-gemma3-text.ndjson",
}
#: families with no recorded tool call: the suite's two tool tests need one (a text capture
#: passes the other tests). openai-completions is not here: its one capture is a reply a
#: length limit ended, rightly ``incomplete``, where the suite asks for ``completed``.
NO_TOOL_CAPTURE = {"ollama"}


def _function_call_events(events: list[dict[str, Any]]) -> list[str]:
    kinds = [event["type"] for event in events]
    missing = []
    if not any(e["type"] == "response.output_item.added" and e["item"]["type"] ==
               "function_call" for e in events):
        missing.append("output_item.added with a function_call")
    for kind in ("response.function_call_arguments.delta",
                 "response.function_call_arguments.done"):
        if kind not in kinds:
            missing.append(kind)
    if not any(e["type"] == "response.output_item.done" and e["item"]["type"] ==
               "function_call" for e in events):
        missing.append("output_item.done with a function_call")
    return missing


_CASES = [(family, test) for family in FAMILIES for test, (_, _, tools) in REQUESTS.items()
          if not (tools and family in NO_TOOL_CAPTURE)]


@pytest.mark.parametrize(("family", "test"), _CASES)
def test_compliance_suite_checks_pass_for_every_family(family: str, test: str,
                                                       llm_rx_server: EmulatorThread) -> None:
    request, streamed, tools = REQUESTS[test]
    model = FAMILIES[family].rsplit(".", 1)[0].replace("/", "__")
    reply = _post(llm_rx_server, {"model": model, **request, "stream": streamed})
    assert reply.status_code == 200
    checks: list[Callable[[], list[str]]] = []
    if streamed:
        events = list(events_of(reply.content))
        assert events
        final = next(e["response"] for e in reversed(events)
                     if e["type"] in ("response.completed", "response.failed",
                                      "response.incomplete"))
        checks.append(lambda: [e for event in events for e in event_errors(event)])
        if tools:
            checks.append(lambda: _function_call_events(events))
    else:
        final = reply.json()
    assert body_errors(final) == []
    assert [error for check in checks for error in check()] == []
    assert final["output"]
    if tools:
        assert any(item["type"] == "function_call" for item in final["output"])
    if test != "tool-calling":
        assert final["status"] == "completed"
