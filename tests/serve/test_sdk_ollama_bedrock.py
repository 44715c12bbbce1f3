"""The official ``ollama`` client (``Client(host=...).chat`` / ``.generate`` with
``stream=True``) and ``boto3``'s ``bedrock-runtime`` (``converse_stream`` with an
``endpoint_url`` and dummy credentials) against the emulator, for every capture of their
formats, over a real socket. Each gets the reply ``llm_rx.reassemble(file)`` gives.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import boto3
import ollama
import pytest

from llm_rx.serve import EmulatorThread
from tests.captures import CAPTURES, Capture

from .replies import Reply, assert_same, model_of, params

pytestmark = pytest.mark.oracle

# (pull progress is an Ollama stream that is no reply: not a capture of this format)
OLLAMA = [cap for cap in CAPTURES if cap.provider == "ollama" and "pull" not in cap.name]
BEDROCK = [cap for cap in CAPTURES if cap.provider == "bedrock-converse"]
DONE = {"stop": "end_turn", "length": "max_tokens"}
STOP = {"content_filtered": "content_filter", "guardrail_intervened": "content_filter"}


@pytest.fixture(scope="module")
def ollama_client(llm_rx_server: EmulatorThread) -> Iterator[ollama.Client]:
    client = ollama.Client(host=llm_rx_server.url)
    yield client
    client._client.close()


@pytest.fixture(scope="module")
def bedrock(llm_rx_server: EmulatorThread) -> Iterator[Any]:
    client = boto3.client("bedrock-runtime", endpoint_url=llm_rx_server.url,
                          region_name="us-east-1", aws_access_key_id="test",
                          aws_secret_access_key="test")
    yield client
    client.close()


def ollama_reply(parts: Iterable[Any]) -> Reply:
    text: list[str] = []
    calls: list[tuple[str | None, str, Any]] = []
    last = None
    for part in parts:
        last = part
        message = getattr(part, "message", None)
        if message is not None:
            text.append(message.content or "")
            calls.extend((None, tc.function.name, dict(tc.function.arguments))
                         for tc in message.tool_calls or ())
        else:
            text.append(part.response or "")
    assert last is not None
    stop = DONE.get(last.done_reason or "", last.done_reason)
    if stop == "end_turn" and calls:
        stop = "tool_use"
    return Reply("".join(text), calls, stop, (last.prompt_eval_count, last.eval_count))


@pytest.mark.parametrize("cap", params(OLLAMA))
def test_ollama_client_stream_gets_the_reassembled_reply(
    ollama_client: ollama.Client, cap: Capture
) -> None:
    if "generate" in cap.name:
        parts: Iterable[Any] = ollama_client.generate(model=model_of(cap), prompt="hi",
                                                      stream=True)
    else:
        parts = ollama_client.chat(model=model_of(cap), stream=True,
                                   messages=[{"role": "user", "content": "hi"}])
    assert_same(ollama_reply(parts), cap, {})


def test_ollama_non_stream_body_validates_as_chat_response(ollama_client: ollama.Client) -> None:
    cap = next(cap for cap in OLLAMA if cap.name == "ollama/chat-gemma3-text.ndjson")
    reply = ollama_client.chat(model=model_of(cap), messages=[{"role": "user", "content": "hi"}],
                               stream=False)
    assert isinstance(reply, ollama.ChatResponse)
    assert_same(ollama_reply([reply]), cap, {})


def bedrock_reply(events: Iterable[dict[str, Any]]) -> Reply:
    text: list[str] = []
    calls: dict[int, list[Any]] = {}
    stop, usage = None, (None, None)
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            tool = start["start"].get("toolUse")
            # (a system tool the server runs is no call for the client)
            if tool is not None and tool.get("type") != "server_tool_use":
                calls[start["contentBlockIndex"]] = [tool["toolUseId"], tool["name"], ""]
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            if "text" in delta["delta"]:
                text.append(delta["delta"]["text"])
            if "toolUse" in delta["delta"] and delta["contentBlockIndex"] in calls:
                calls[delta["contentBlockIndex"]][2] += delta["delta"]["toolUse"]["input"]
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            tokens = event["metadata"]["usage"]
            prompt = [tokens.get(key) for key in
                      ("inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")]
            usage = (sum(n or 0 for n in prompt), tokens.get("outputTokens"))
    tool_calls = [(i, n, json.loads(raw) if raw else {}) for i, n, raw in calls.values()]
    return Reply("".join(text), tool_calls, STOP.get(stop or "", stop), usage)


def bedrock_cases() -> list[Any]:
    return params(BEDROCK)


@pytest.mark.parametrize("cap", bedrock_cases())
def test_boto3_converse_stream_gets_the_reassembled_reply(bedrock: Any, cap: Capture) -> None:
    reply = bedrock.converse_stream(modelId=model_of(cap),
                                    messages=[{"role": "user", "content": [{"text": "hi"}]}])
    assert_same(bedrock_reply(reply["stream"]), cap, {})


def test_boto3_converse_non_stream_body_is_read_by_the_client(bedrock: Any) -> None:
    cap = next(cap for cap in BEDROCK if cap.name.endswith("converse-stream-text.eventstream"))
    reply = bedrock.converse(modelId=model_of(cap),
                             messages=[{"role": "user", "content": [{"text": "hi"}]}])
    assert reply["ResponseMetadata"]["HTTPStatusCode"] == 200
    text = "".join(block.get("text", "") for block in reply["output"]["message"]["content"])
    usage = reply["usage"]
    got = Reply(text, [], reply["stopReason"], (usage["inputTokens"], usage["outputTokens"]))
    assert_same(got, cap, {})
