"""Scripted replies (``llm_rx.testing.reply`` + ``llm_rx_server.queue``) read by each official
SDK as it reads the provider: the text, a tool call and the usage the script says, on every
endpoint, streamed and not. Each request takes the next reply; then the captures answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import boto3
import cohere
import httpx
import ollama
import openai
import pytest
from google import genai
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.responses import Response as OpenAIResponse
from websockets.sync.client import connect

import llm_rx
from llm_rx.response import ToolCallBlock
from llm_rx.serve import EmulatorThread
from llm_rx.serve._scripted import SIGNATURE_PREFIX
from llm_rx.testing import reply

from .replies import Reply
from .test_sdk_anthropic import message_reply
from .test_sdk_cohere import _stop, _tokens, cohere_reply
from .test_sdk_genai import chunks_reply
from .test_sdk_ollama_bedrock import bedrock_reply, ollama_reply
from .test_sdk_openai import chat_reply, responses_reply

TEXT = "Sunny in Paris."
CALL = ("get_weather", {"city": "Paris", "unit": "C"})
USAGE = (12, 7)
MESSAGES: Any = [{"role": "user", "content": "weather?"}]


# The ways a test writes the call: a (name, arguments) pair; a ToolCallBlock, or the canonical
# JSON a client in another language queues, with ``arguments`` but no ``raw_arguments``, or
# with ``raw_arguments`` but no ``arguments``: each keeps its arguments on every endpoint.
CALLS: dict[str, Any] = {
    "pair": CALL,
    "block": ToolCallBlock(name=CALL[0], arguments=CALL[1]),
    "json": {"type": "tool_call", "name": CALL[0], "arguments": CALL[1]},
    "json-raw": {"type": "tool_call", "name": CALL[0], "raw_arguments": json.dumps(CALL[1])},
}


@pytest.fixture(params=sorted(CALLS))
def call(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def script(server: EmulatorThread, call: str = "pair", **extra: Any) -> None:
    usage = {"input_tokens": 12, "output_tokens": 7}
    if call.startswith("json"):  # (as POST /_llm_rx/queue reads it)
        text = [{"type": "text", "text": TEXT}]
        thinking = extra.pop("thinking", None)
        signed = reply(thinking=thinking).content if thinking else []
        server.queue(llm_rx.Response.model_validate({
            "provider": "scripted", "model": "scripted", "complete": True,
            "stop_reason": "tool_use", "usage": usage,
            "content": [*(b.model_dump(mode="json") for b in signed), *text, CALLS[call]],
            **extra}))
        return
    server.queue(reply(TEXT, tool_calls=[CALLS[call]], usage=usage, stop="tool_use", **extra))


def assert_scripted(got: Reply) -> None:
    assert got.text == TEXT
    assert [(name, arguments) for _, name, arguments in got.tool_calls] == [CALL]
    assert all(call_id in (None, "call_scripted_1") for call_id, _, _ in got.tool_calls)
    assert got.stop_reason == "tool_use"
    assert got.usage == USAGE


@pytest.fixture
def oa(llm_rx_server: EmulatorThread) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test",
                       max_retries=0) as client:
        yield client


@pytest.mark.parametrize("stream", [True, False])
def test_openai_chat_reads_a_scripted_reply(llm_rx_server: EmulatorThread, oa: openai.OpenAI,
                                            stream: bool, call: str) -> None:
    script(llm_rx_server, call)
    if stream:
        state = ChatCompletionStreamState()
        for chunk in oa.chat.completions.create(model="gpt-4o", messages=MESSAGES,
                                                stream=True,
                                                stream_options={"include_usage": True}):
            state.handle_chunk(chunk)
        completion = state.get_final_completion()
    else:
        completion = oa.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert_scripted(chat_reply(completion, "scripted"))
    assert completion.model == "scripted"


@pytest.mark.parametrize("stream", [True, False])
def test_openai_responses_reads_a_scripted_reply(llm_rx_server: EmulatorThread,
                                                 oa: openai.OpenAI, stream: bool,
                                                 call: str) -> None:
    script(llm_rx_server, call, thinking="The user wants the weather.")
    if stream:
        with oa.responses.stream(model="gpt-5", input="weather?") as events:
            response = events.get_final_response()
    else:
        response = oa.responses.create(model="gpt-5", input="weather?")
    assert_scripted(responses_reply(response))


def test_anthropic_messages_stream_reads_a_scripted_reply_with_signed_thinking(
    llm_rx_server: EmulatorThread, call: str,
) -> None:
    script(llm_rx_server, call, thinking="The user wants the weather.")
    with anthropic.Anthropic(base_url=llm_rx_server.url, api_key="test",
                             max_retries=0) as client, client.messages.stream(
            model="claude-sonnet-5", max_tokens=100, messages=MESSAGES) as events:
        message = events.get_final_message()
    assert_scripted(message_reply(message))
    thinking = message.content[0]
    assert thinking.type == "thinking"
    assert thinking.thinking == "The user wants the weather."
    assert thinking.signature.startswith(SIGNATURE_PREFIX)


@pytest.mark.parametrize("stream", [True, False])
def test_genai_reads_a_scripted_reply(llm_rx_server: EmulatorThread, stream: bool,
                                      call: str) -> None:
    script(llm_rx_server, call)
    with genai.Client(api_key="test", http_options={"base_url": llm_rx_server.url}) as client:
        if stream:
            chunks = list(client.models.generate_content_stream(model="gemini-3-pro",
                                                                contents="weather?"))
        else:
            chunks = [client.models.generate_content(model="gemini-3-pro", contents="weather?")]
    assert_scripted(chunks_reply(chunks))


@pytest.mark.parametrize("stream", [True, False])
def test_ollama_reads_a_scripted_reply(llm_rx_server: EmulatorThread, stream: bool,
                                       call: str) -> None:
    script(llm_rx_server, call)
    client = ollama.Client(host=llm_rx_server.url)
    try:
        parts: Any = client.chat(model="llama4", messages=MESSAGES, stream=stream)
        assert_scripted(ollama_reply(parts if stream else [parts]))
    finally:
        client._client.close()


@pytest.mark.parametrize("stream", [True, False])
def test_boto3_bedrock_reads_a_scripted_reply(llm_rx_server: EmulatorThread,
                                              stream: bool, call: str) -> None:
    script(llm_rx_server, call)
    client = boto3.client("bedrock-runtime", endpoint_url=llm_rx_server.url,
                          region_name="us-east-1", aws_access_key_id="test",
                          aws_secret_access_key="test")
    messages = [{"role": "user", "content": [{"text": "weather?"}]}]
    try:
        if stream:
            events = client.converse_stream(modelId="claude", messages=messages)["stream"]
            assert_scripted(bedrock_reply(events))
        else:
            body = client.converse(modelId="claude", messages=messages)
            content = body["output"]["message"]["content"]
            usage = body["usage"]
            got = Reply("".join(part.get("text", "") for part in content),
                        [(part["toolUse"]["toolUseId"], part["toolUse"]["name"],
                          part["toolUse"]["input"]) for part in content if "toolUse" in part],
                        body["stopReason"], (usage["inputTokens"], usage["outputTokens"]))
            assert_scripted(got)
    finally:
        client.close()


@pytest.mark.parametrize("stream", [True, False])
def test_cohere_reads_a_scripted_reply(llm_rx_server: EmulatorThread, stream: bool,
                                       call: str) -> None:
    script(llm_rx_server, call)
    with cohere.ClientV2(api_key="test", base_url=llm_rx_server.url, max_retries=0) as client:
        if stream:
            got = cohere_reply(client.chat_stream(model="command-a", messages=MESSAGES))
        else:
            answer = client.chat(model="command-a", messages=MESSAGES)
            calls = [(call.id, call.function.name, json.loads(call.function.arguments or "{}"))
                     for call in answer.message.tool_calls or ()]
            text = "".join(item.text for item in answer.message.content or ()
                           if item.type == "text")
            got = Reply(text, calls, _stop(answer.finish_reason, calls), _tokens(answer.usage))
    assert_scripted(got)


def test_replies_answer_in_order_then_the_captures(llm_rx_server: EmulatorThread,
                                                   oa: openai.OpenAI) -> None:
    llm_rx_server.queue(reply("one"), reply("two"))
    first = oa.chat.completions.create(model="openai__chat-text-basic", messages=MESSAGES)
    second = oa.chat.completions.create(model="openai__chat-text-basic", messages=MESSAGES)
    third = oa.chat.completions.create(model="openai__chat-text-basic", messages=MESSAGES)
    assert [first.choices[0].message.content, second.choices[0].message.content] == ["one",
                                                                                      "two"]
    assert third.model != "scripted"  # (the capture the model names)


def test_an_empty_queue_and_an_unknown_model_is_a_404_in_the_endpoint_shape(
    llm_rx_server: EmulatorThread, oa: openai.OpenAI,
) -> None:
    with pytest.raises(openai.NotFoundError, match="no scripted reply is queued"):
        oa.chat.completions.create(model="gpt-4o", messages=MESSAGES)


def test_the_journal_holds_what_the_client_sent(llm_rx_server: EmulatorThread,
                                                oa: openai.OpenAI) -> None:
    script(llm_rx_server)
    tools: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    oa.chat.completions.create(model="gpt-4o", messages=MESSAGES, tools=tools)
    (entry,) = llm_rx_server.requests
    assert (entry.method, entry.path) == ("POST", "/v1/chat/completions")
    assert entry.json["messages"] == MESSAGES
    assert entry.json["tools"] == tools
    assert entry.headers["authorization"] == "Bearer …"  # (a credential is redacted)
    with llm_rx_server.keep_credentials():
        oa.chat.completions.create(model="openai__chat-text-basic", messages=MESSAGES)
    assert llm_rx_server.requests[-1].headers["authorization"] == "Bearer test"


def test_a_queued_reply_waits_out_a_429_with_retry_after(llm_rx_server: EmulatorThread,
                                                         oa: openai.OpenAI) -> None:
    script(llm_rx_server)
    with llm_rx_server.fault("status=429,retry-after=7"), pytest.raises(
            openai.RateLimitError) as raised:
        oa.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert raised.value.response.headers["retry-after"] == "7"
    completion = oa.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert_scripted(chat_reply(completion, "scripted"))


def test_the_queue_and_journal_over_http(llm_rx_server: EmulatorThread) -> None:
    scripted = reply("over http", usage={"input_tokens": 1, "output_tokens": 2})
    with httpx.Client(base_url=llm_rx_server.url, timeout=10) as client:
        queued = client.post("/_llm_rx/queue",
                             json={"replies": [scripted.model_dump(mode="json")]})
        assert queued.status_code == 200
        assert queued.json()["queued"] == 1
        body = client.post("/v1/messages", json={"model": "x", "max_tokens": 5,
                                                 "messages": MESSAGES, "stream": True})
        assert llm_rx.reassemble(body.content, "anthropic").text == "over http"
        journal = client.get("/_llm_rx/requests").json()["requests"]
        assert [entry["path"] for entry in journal] == ["/v1/messages"]  # (no control call)
        assert journal[0]["json"]["messages"] == MESSAGES
        refused = client.post("/_llm_rx/queue", json={"replies": [{"content": 3}]})
        assert refused.status_code == 400
        assert client.post("/_llm_rx/fault", json={"fault": "status=503"}).status_code == 200
        refused = client.post("/v1/messages", json={"model": "x"})
        assert (refused.status_code, refused.headers["retry-after"]) == (503, "1")
        assert client.post("/_llm_rx/fault", json={"fault": "nope=1"}).status_code == 400
        assert client.post("/_llm_rx/fault", json={"fault": 3}).status_code == 400
        assert client.post("/_llm_rx/fault", json={"fault": None}).json() == {"fault": None}
        assert llm_rx_server.emulator.fault is None
        assert client.delete("/_llm_rx/requests").json() == {"cleared": True}
        assert client.get("/_llm_rx/requests").json() == {"requests": []}


def test_a_queued_reply_with_unknown_usage_keys_is_refused(
    llm_rx_server: EmulatorThread,
) -> None:
    scripted = reply("counted").model_dump(mode="json")
    scripted["usage"] = {"prompt_tokens": 3, "completion_tokens": 1}
    with httpx.Client(base_url=llm_rx_server.url, timeout=10) as client:
        refused = client.post("/_llm_rx/queue", json={"replies": [scripted]})
    assert refused.status_code == 400
    assert "prompt_tokens" in refused.json()["error"]["message"]
    assert len(llm_rx_server.emulator.script) == 0
    with pytest.raises(ValueError, match="prompt_tokens"):
        reply("counted", usage={"prompt_tokens": 3})


def test_a_test_left_replies_queued(llm_rx_server: EmulatorThread) -> None:
    llm_rx_server.queue(reply("left over"))
    llm_rx_server.fault("malformed")


def test_the_plugin_cleared_them_after_that_test(llm_rx_server: EmulatorThread) -> None:
    assert len(llm_rx_server.emulator.script) == 0
    assert llm_rx_server.emulator.fault is None
    assert llm_rx_server.requests == []


def test_a_scripted_stream_keeps_the_requested_pace(llm_rx_server: EmulatorThread) -> None:
    # (a lower bound: no frame goes out before its time; half of it, since the first read can
    # be late and take several frames at once on a busy machine)
    script(llm_rx_server)
    pace = 40.0
    with httpx.Client(timeout=10) as client, client.stream(
            "POST", f"{llm_rx_server.url}/v1/chat/completions",
            json={"model": "x", "messages": [], "stream": True},
            headers={"x-llm-rx-pace": f"{pace:g}"}) as answer:
        reads = [(time.monotonic(), chunk) for chunk in answer.iter_raw()]
    body = b"".join(chunk for _, chunk in reads)
    frames = body.count(b"\n\n")
    assert frames > 5
    assert reads[-1][0] - reads[0][0] >= (frames - 1) / pace / 2
    assert llm_rx.reassemble(body, "openai-chat").text == TEXT


def test_a_scripted_reply_over_the_responses_websocket(llm_rx_server: EmulatorThread,
                                                       call: str) -> None:
    script(llm_rx_server, call, thinking="The user wants the weather.")
    url = llm_rx_server.url.replace("http://", "ws://") + "/v1/responses"
    with connect(url, open_timeout=10, close_timeout=10) as ws:
        ws.send(json.dumps({"type": "response.create", "model": "gpt-5", "input": "hi"}))
        events: list[dict[str, Any]] = []
        while not events or events[-1]["type"] not in ("response.completed", "error"):
            events.append(json.loads(ws.recv(timeout=10)))
    assert_scripted(responses_reply(OpenAIResponse.model_validate(events[-1]["response"])))
    (entry,) = llm_rx_server.requests
    assert (entry.method, entry.path, entry.json["model"]) == ("WEBSOCKET", "/v1/responses",
                                                               "gpt-5")
