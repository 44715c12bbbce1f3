"""from_sdk: what the official SDKs return from a streaming call, pointed at loopback."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import boto3
import ollama
import openai
import pytest
from botocore.config import Config
from google import genai
from google.genai import types as genai_types
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.response import Response

from ..captures import capture
from ..loopback import server

CHAT = capture("openai/chat-tool-call-strict.sse")
RESPONSES = capture("openai/responses-basic-llm.sse")
ANTHROPIC = capture("anthropic/thinking-signature.sse")
GEMINI = capture("gemini/sse-thought-parts.sse")
OLLAMA = capture("ollama/chat-gemma3-text.ndjson")
BEDROCK = capture("bedrock/converse-stream-text.eventstream")
ASK = [{"role": "user", "content": "hi"}]


def _dump(response: Response) -> dict[str, Any]:
    return response.model_dump()


def _reply(events: Any) -> Response:
    result: Response = events.pipe(lxo.to_response()).run()
    return result


def test_from_sdk_openai_chat_stream_reads_the_exact_bytes() -> None:
    with server(CHAT.data) as running:
        client = openai.OpenAI(api_key="k", base_url=running.url + "/v1", max_retries=0)
        stream = client.chat.completions.create(model="m", messages=ASK, stream=True)  # type: ignore[arg-type]
        result = _reply(llm_rx.from_sdk(stream))
        client.close()
    assert _dump(result) == _dump(llm_rx.reassemble(CHAT.data))
    assert stream.response.is_closed


def test_from_sdk_openai_with_streaming_response() -> None:
    with server(CHAT.data) as running:
        client = openai.OpenAI(api_key="k", base_url=running.url + "/v1", max_retries=0)
        with client.chat.completions.with_streaming_response.create(
            model="m", messages=ASK, stream=True  # type: ignore[arg-type]
        ) as raw:
            result = _reply(llm_rx.from_sdk(raw))
        client.close()
    assert _dump(result) == _dump(llm_rx.reassemble(CHAT.data))


def test_from_sdk_openai_responses_stream_is_told_by_its_path() -> None:
    with server(RESPONSES.data) as running:
        client = openai.OpenAI(api_key="k", base_url=running.url + "/v1", max_retries=0)
        stream = client.responses.create(model="m", input="hi", stream=True)
        result = _reply(llm_rx.from_sdk(stream))
        client.close()
    assert result.provider == "openai-responses"
    assert _dump(result) == _dump(llm_rx.reassemble(RESPONSES.data))


def test_from_sdk_openai_async_stream() -> None:
    async def main(url: str) -> Response:
        client = openai.AsyncOpenAI(api_key="k", base_url=url + "/v1", max_retries=0)
        stream = await client.chat.completions.create(model="m", messages=ASK, stream=True)  # type: ignore[arg-type]
        result: Response = await llm_rx.from_sdk(stream).pipe(lxo.to_response())
        await client.close()
        return result

    with server(CHAT.data) as running:
        result = asyncio.run(main(running.url))
    assert _dump(result) == _dump(llm_rx.reassemble(CHAT.data))


def test_from_sdk_anthropic_stream_and_message_stream() -> None:
    with server(ANTHROPIC.data) as running:
        client = anthropic.Anthropic(api_key="k", base_url=running.url, max_retries=0)
        raw = client.messages.create(model="m", max_tokens=9, messages=ASK, stream=True)  # type: ignore[arg-type]
        first = _reply(llm_rx.from_sdk(raw))
        with client.messages.stream(model="m", max_tokens=9, messages=ASK) as stream:  # type: ignore[arg-type]
            second = _reply(llm_rx.from_sdk(stream))
        client.close()
    expected = _dump(llm_rx.reassemble(ANTHROPIC.data))
    assert _dump(first) == expected
    assert _dump(second) == expected


def test_from_sdk_refuses_a_stream_manager_not_entered() -> None:
    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9", max_retries=0)
    manager = client.messages.stream(model="m", max_tokens=9, messages=ASK)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="as stream"):
        llm_rx.from_sdk(manager)
    client.close()


def test_from_sdk_refuses_a_stream_already_partly_read() -> None:
    with server(CHAT.data) as running:
        client = openai.OpenAI(api_key="k", base_url=running.url + "/v1", max_retries=0)
        stream = client.chat.completions.create(model="m", messages=ASK, stream=True)  # type: ignore[arg-type]
        next(iter(stream))
        with pytest.raises(ValueError, match="read from already"):
            llm_rx.from_sdk(stream)
        stream.close()
        client.close()


def test_from_sdk_take_closes_the_sdk_stream() -> None:
    with server(CHAT.data) as running:
        client = openai.OpenAI(api_key="k", base_url=running.url + "/v1", max_retries=0)
        stream = client.chat.completions.create(model="m", messages=ASK, stream=True)  # type: ignore[arg-type]
        count = llm_rx.from_sdk(stream).pipe(ops.take(2), ops.count()).run()
        client.close()
    assert count == 2
    assert stream.response.is_closed


def _genai(url: str) -> genai.Client:
    return genai.Client(
        api_key="k", http_options=genai_types.HttpOptions(base_url=url, api_version="v1beta")
    )


@pytest.mark.parametrize("name", [
    "gemini/sse-thought-parts.sse",
    "gemini/sse-function-call-thought-signature.sse",  # (a signature on a functionCall part)
    "gemini/sse-gemini3-text-signature-empty-part.sse",
])
def test_from_sdk_google_genai_stream_is_put_back_in_its_wire_form(name: str) -> None:
    data = capture(name).data
    with server(data) as running:
        client = _genai(running.url)  # (kept: a collected client closes its connections)
        chunks = client.models.generate_content_stream(model="m", contents="hi")
        result = _reply(llm_rx.from_sdk(chunks))
    assert _dump(result) == _dump(llm_rx.reassemble(data))


def test_from_sdk_google_genai_async_stream() -> None:
    async def main(url: str) -> Response:
        client = _genai(url)
        chunks = await client.aio.models.generate_content_stream(model="m", contents="hi")
        result: Response = await llm_rx.from_sdk(chunks).pipe(lxo.to_response())
        return result

    with server(GEMINI.data) as running:
        result = asyncio.run(main(running.url))
    assert result.content == llm_rx.reassemble(GEMINI.data).content


def test_from_sdk_refuses_a_genai_stream_already_partly_read() -> None:
    with server(GEMINI.data) as running:
        client = _genai(running.url)  # (kept: a collected client closes its connections)
        chunks = client.models.generate_content_stream(model="m", contents="hi")
        next(chunks)
        with pytest.raises(ValueError, match="read from already"):
            llm_rx.from_sdk(chunks)
        chunks.close()


def test_from_sdk_ollama_chat_stream() -> None:
    with server(OLLAMA.data, "application/x-ndjson") as running:
        chunks = ollama.Client(host=running.url).chat(model="m", messages=ASK, stream=True)
        result = _reply(llm_rx.from_sdk(chunks))
    assert _dump(result) == _dump(llm_rx.reassemble(OLLAMA.data))


def test_from_sdk_boto3_converse_stream_reads_the_raw_event_stream() -> None:
    with server(BEDROCK.data, "application/vnd.amazon.eventstream") as running:
        client = boto3.client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=running.url,
            aws_access_key_id="k", aws_secret_access_key="s",
            config=Config(retries={"max_attempts": 1}),
        )
        reply = client.converse_stream(
            modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}]
        )
        result = _reply(llm_rx.from_sdk(reply))
    assert _dump(result) == _dump(llm_rx.reassemble(BEDROCK.data))


def test_from_sdk_refuses_bytes_and_unknown_objects() -> None:
    with pytest.raises(TypeError, match="from_bytes"):
        llm_rx.from_sdk(b"data: {}\n\n")
    with pytest.raises(TypeError, match="openai, anthropic"):
        llm_rx.from_sdk(42)


def _non_stream_replies() -> list[Any]:
    chat = llm_rx.to_native(llm_rx.reassemble(capture("openai/chat-text-basic.sse").data),
                            "openai-chat")
    message = llm_rx.to_native(
        llm_rx.reassemble(capture("anthropic/thinking-signature.sse").data), "anthropic")
    return [
        openai.types.chat.ChatCompletion.model_validate(chat),
        anthropic.types.Message.model_validate(message),
        genai_types.GenerateContentResponse.model_validate(
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}}]}),
        ollama.ChatResponse.model_validate(
            {"model": "m", "message": {"role": "assistant", "content": "hi"}, "done": True}),
    ]


@pytest.mark.parametrize("reply", _non_stream_replies(), ids=lambda r: type(r).__name__)
def test_from_sdk_refuses_a_non_stream_reply_at_the_call(reply: Any) -> None:
    # bug class: the refusal only at .run(), saying "got a tuple chunk"
    with pytest.raises(TypeError, match="from_native") as raised:
        llm_rx.from_sdk(reply)
    assert type(reply).__name__ in str(raised.value)
