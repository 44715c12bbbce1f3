"""Every encoder's first and last frame, read by the target's official SDK through its own
stream helper, over a real socket (the emulator on loopback serving a queued reply).

The captures all carry what the helpers need (``tests/serve/test_sdk_translated.py`` reads
them translated); these replies are the ones a capture never is: no usage reported at all
(a scripted reply, a host without ``include_usage``), the reply's own provider writing it
again without the fields its wire always had, a reply that opens with a tool call, usage
known at the start only. PITFALLS 52: a stream that omits a field every real stream
carries is valid JSON and still crashes the helper (Anthropic's ``message_start.usage``,
Gemini's ``candidates[].content`` on the last chunk).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import boto3
import cohere
import ollama
import openai
import pytest
from google import genai

from llm_rx import Response, TextBlock, ToolCallBlock, Usage
from llm_rx.encoders import make_encoder
from llm_rx.events import (
    BlockStart,
    BlockStop,
    MessageStart,
    MessageStop,
    TextDelta,
    UsageUpdate,
)
from llm_rx.serve import EmulatorThread
from llm_rx.testing import reply
from tests.loopback import serving
from tests.serve.replies import Reply
from tests.serve.test_sdk_anthropic import message_reply
from tests.serve.test_sdk_cohere import cohere_reply
from tests.serve.test_sdk_genai import chunks_reply
from tests.serve.test_sdk_ollama_bedrock import bedrock_reply, ollama_reply
from tests.serve.test_sdk_openai import MESSAGES, chat_reply, responses_reply

pytestmark = pytest.mark.oracle

CALL = ToolCallBlock(id="call_1", name="get_weather", arguments={"city": "Paris"},
                     raw_arguments='{"city": "Paris"}')


def _text(provider: str, usage: Usage | None = None) -> Response:
    return Response(provider=provider, model="m-1", id="reply-1",
                    content=[TextBlock(text="Hi there")], stop_reason="end_turn",
                    complete=True, usage=usage or Usage())


#: name -> (the reply, the usage (input, output) the helper must give, None: not checked)
REPLIES: dict[str, tuple[Response, tuple[int | None, int | None] | None]] = {
    "scripted-no-usage": (reply("Hi there"), None),
    "anthropic-no-usage": (_text("anthropic"), None),
    "gemini-no-usage": (_text("gemini"), None),
    "openai-chat-no-usage": (_text("openai-chat"), None),
    # (a reply built by hand as the Responses API's own: its blocks carry no part to copy)
    "openai-responses-by-hand": (_text("openai-responses", Usage(input_tokens=2,
                                                                  output_tokens=3)), (2, 3)),
    "tool-call-first": (Response(
        provider="openai-chat", model="m-1", id="reply-2", content=[CALL],
        stop_reason="tool_use", complete=True, usage=Usage(input_tokens=9, output_tokens=4),
    ), (9, 4)),
    "input-known-only": (_text("bedrock-converse", Usage(input_tokens=11)), None),
}


@pytest.fixture(scope="module")
def clients(llm_rx_server: EmulatorThread) -> Iterator[dict[str, Any]]:
    url = llm_rx_server.url
    made = {
        "openai": openai.OpenAI(base_url=f"{url}/v1", api_key="test", max_retries=0),
        "anthropic": anthropic.Anthropic(base_url=url, api_key="test", max_retries=0),
        "genai": genai.Client(api_key="test", http_options={"base_url": url}),
        "ollama": ollama.Client(host=url),
        "bedrock": boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1",
                                aws_access_key_id="test", aws_secret_access_key="test"),
        "cohere": cohere.ClientV2(api_key="test", base_url=url, max_retries=0),
    }
    yield made
    made["openai"].close()
    made["anthropic"].close()
    made["genai"].close()
    made["ollama"]._client.close()
    made["bedrock"].close()
    made["cohere"]._client_wrapper.httpx_client.httpx_client.close()


def _anthropic(clients: dict[str, Any]) -> Reply:
    with clients["anthropic"].messages.stream(model="m-1", max_tokens=100,
                                              messages=MESSAGES) as stream:
        first = next(iter(stream))
        assert first.type == "message_start"
        usage = first.message.usage  # (what the SDK's snapshot is built from)
        assert isinstance(usage.input_tokens, int)
        assert isinstance(usage.output_tokens, int)
        message = stream.get_final_message()
    assert isinstance(message.usage.input_tokens, int)
    assert isinstance(message.usage.output_tokens, int)
    return message_reply(message)


def _gemini(clients: dict[str, Any]) -> Reply:
    chunks = list(clients["genai"].models.generate_content_stream(model="m-1", contents="hi"))
    for chunk in chunks:  # (as application code reads them: every candidate has content)
        for candidate in chunk.candidates:
            assert isinstance(candidate.content.parts, list), chunk
    assert chunks[-1].candidates[0].finish_reason is not None
    return chunks_reply(chunks)


def _openai_chat(clients: dict[str, Any]) -> Reply:
    with clients["openai"].chat.completions.stream(model="m-1", messages=MESSAGES) as stream:
        return chat_reply(stream.get_final_completion(), "")


def _openai_responses(clients: dict[str, Any]) -> Reply:
    with clients["openai"].responses.stream(model="m-1", input="hi") as stream:
        return responses_reply(stream.get_final_response())


def _ollama(clients: dict[str, Any]) -> Reply:
    parts = list(clients["ollama"].chat(model="m-1", stream=True, messages=MESSAGES))
    assert parts[-1].done
    return ollama_reply(parts)


def _bedrock(clients: dict[str, Any]) -> Reply:
    answer = clients["bedrock"].converse_stream(
        modelId="m-1", messages=[{"role": "user", "content": [{"text": "hi"}]}])
    return bedrock_reply(answer["stream"])


def _cohere(clients: dict[str, Any]) -> Reply:
    return cohere_reply(clients["cohere"].chat_stream(model="m-1", messages=MESSAGES))


READERS: dict[str, Callable[[dict[str, Any]], Reply]] = {
    "anthropic": _anthropic,
    "bedrock-converse": _bedrock,
    "cohere": _cohere,
    "gemini": _gemini,
    "ollama": _ollama,
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
}


@pytest.mark.parametrize("name", sorted(REPLIES))
@pytest.mark.parametrize("target", sorted(READERS))
def test_each_sdk_stream_helper_reads_the_first_and_last_frame(
    llm_rx_server: EmulatorThread, clients: dict[str, Any], target: str, name: str
) -> None:
    response, usage = REPLIES[name]
    llm_rx_server.queue(response)
    got = READERS[target](clients)
    assert got.text == response.text
    assert [(n, a) for _, n, a in got.tool_calls] == [
        (call.name, call.arguments) for call in response.tool_calls]
    assert got.stop_reason == response.stop_reason
    if usage is not None:
        assert got.usage == usage


@pytest.mark.parametrize("source", ["openai-chat", "anthropic"])
def test_anthropic_message_start_carries_the_input_known_at_the_start(source: str) -> None:
    usage = Usage(input_tokens=11, cache_read_tokens=4)  # (known before the first block)
    events = [MessageStart(source, "m-1", "reply-1"), UsageUpdate(usage), BlockStart(0, "text"),
              TextDelta(0, "Hi"), BlockStop(0), UsageUpdate(Usage(output_tokens=3)),
              MessageStop("end_turn")]
    encoder = make_encoder("anthropic")
    body = encoder.encode(events) + encoder.finish()
    with serving(body) as url, anthropic.Anthropic(
        base_url=url, api_key="test", max_retries=0
    ) as client, client.messages.stream(model="m-1", max_tokens=100,
                                        messages=MESSAGES) as stream:
        first = next(iter(stream))
        message = stream.get_final_message()
    assert first.type == "message_start"
    start = first.message.usage
    assert (start.input_tokens, start.cache_read_input_tokens) == (7, 4)
    assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 3)
    assert message.content[0].text == "Hi"
