"""from_sdk: an SDK's own HTTP error (google-genai ``ClientError``, ollama ``ResponseError``)
raised inside its iterator is the ProviderError the same reply read from the wire gives:
status, retryable and retry_after; the official clients against a real loopback server."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import boto3
import cohere
import httpx
import ollama
import openai
import pytest
import reactivex
from botocore.config import Config
from botocore.exceptions import ClientError
from google import genai
from google.genai import types as genai_types
from reactivex.testing import TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import ProviderError
from llm_rx.response import Response
from llm_rx.wire.sdk_errors import sdk_error

from ..captures import capture
from ..loopback import server

GEMINI = capture("gemini/sse-thought-parts.sse").data
OLLAMA = capture("ollama/chat-gemma3-text.ndjson").data
ASK = [{"role": "user", "content": "hi"}]
GEMINI_429 = (b'{"error": {"code": 429, "message": "Resource has been exhausted", '
              b'"status": "RESOURCE_EXHAUSTED"}}')
GEMINI_503 = (b'{"error": {"code": 503, "message": "The model is overloaded", '
              b'"status": "UNAVAILABLE"}}')


def _genai(url: str) -> genai.Client:
    return genai.Client(
        api_key="k", http_options=genai_types.HttpOptions(base_url=url, api_version="v1beta")
    )


def _failure(events: Any) -> BaseException:
    with pytest.raises(Exception) as raised:
        events.pipe(lxo.to_response()).run()
    return raised.value


@pytest.mark.parametrize(("status", "body", "error_type", "wait"), [
    (429, GEMINI_429, "RESOURCE_EXHAUSTED", "7"),
    (503, GEMINI_503, "UNAVAILABLE", "2"),
], ids=["429", "503"])
def test_from_sdk_genai_http_error_is_a_provider_error(
    status: int, body: bytes, error_type: str, wait: str
) -> None:
    # bug class: IncompleteStreamError("the byte source failed: ClientError: 429 ..."), no
    # status, not retryable: retry_backoff never retried a Gemini rate limit
    with server(body, "application/json", status=status,
                headers={"Retry-After": wait}) as running:
        client = _genai(running.url)
        chunks = client.models.generate_content_stream(model="m", contents="hi")
        error = _failure(llm_rx.from_sdk(chunks))
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.retryable) == (status, error_type, True)
    assert error.retry_after == float(wait)
    assert error_type in str(error.raw)
    assert "gemini answered HTTP" in str(error)
    assert type(error.__cause__).__module__ == "google.genai.errors"


def test_from_sdk_genai_async_http_error_is_a_provider_error() -> None:
    async def main(url: str) -> BaseException:
        client = _genai(url)
        chunks = await client.aio.models.generate_content_stream(model="m", contents="hi")
        with pytest.raises(Exception) as raised:
            await llm_rx.from_sdk(chunks).pipe(lxo.to_response())
        return raised.value

    with server(GEMINI_429, "application/json", status=429,
                headers={"Retry-After": "4"}) as running:
        error = asyncio.run(main(running.url))
    assert isinstance(error, ProviderError)
    assert (error.status, error.retryable, error.retry_after) == (429, True, 4.0)


def test_from_sdk_genai_retry_info_in_the_body_is_the_retry_after() -> None:
    body = (b'{"error": {"code": 429, "message": "Quota exceeded", "status": '
            b'"RESOURCE_EXHAUSTED", "details": [{"@type": '
            b'"type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s"}]}}')
    with server(body, "application/json", status=429) as running:
        client = _genai(running.url)
        error = _failure(llm_rx.from_sdk(
            client.models.generate_content_stream(model="m", contents="hi")))
    assert isinstance(error, ProviderError)
    assert error.retry_after == 31.0


def test_from_sdk_genai_client_error_is_not_retryable() -> None:
    body = b'{"error": {"code": 400, "message": "bad model", "status": "INVALID_ARGUMENT"}}'
    with server(body, "application/json", status=400) as running:
        client = _genai(running.url)
        error = _failure(llm_rx.from_sdk(
            client.models.generate_content_stream(model="m", contents="hi")))
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.retryable) == (400, "INVALID_ARGUMENT", False)


def test_from_sdk_genai_error_chunk_mid_stream_is_the_in_band_error() -> None:
    # google-genai raises its APIError on an {"error": ...} chunk of a 200 stream: that is
    # the in-band error (no status), after the text that came before it
    first = GEMINI.split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    error_chunk = b"data: " + GEMINI_503 + b"\r\n\r\n"
    with server(first + error_chunk) as running:
        client = _genai(running.url)
        reply: Response = llm_rx.from_sdk(
            client.models.generate_content_stream(model="m", contents="hi")
        ).pipe(lxo.to_response()).run()
    assert reply.error is not None
    assert (reply.error.kind, reply.error.retryable) == ("provider", True)
    assert reply.error.message == "The model is overloaded"
    assert not reply.complete
    assert reply.content  # (what came before the error is kept)


@pytest.mark.parametrize(("status", "retryable"), [(429, True), (503, True), (404, False)])
def test_from_sdk_ollama_http_error_is_a_provider_error(status: int, retryable: bool) -> None:
    with server(b'{"error": "slow down"}', "application/json", status=status,
                headers={"Retry-After": "3"}) as running:
        chunks = ollama.Client(host=running.url).chat(model="m", messages=ASK, stream=True)
        error = _failure(llm_rx.from_sdk(chunks))
    assert isinstance(error, ProviderError)
    assert (error.status, error.retryable, error.retry_after) == (status, retryable, 3.0)
    assert error.message == f"ollama answered HTTP {status}: slow down"


def test_from_sdk_ollama_async_http_error_is_a_provider_error() -> None:
    async def main(url: str) -> BaseException:
        chunks = await ollama.AsyncClient(host=url).chat(model="m", messages=ASK, stream=True)
        with pytest.raises(Exception) as raised:
            await llm_rx.from_sdk(chunks).pipe(lxo.to_response())
        return raised.value

    with server(b'{"error": "busy"}', "application/json", status=429,
                headers={"Retry-After": "5"}) as running:
        error = asyncio.run(main(running.url))
    assert isinstance(error, ProviderError)
    assert (error.status, error.retryable, error.retry_after) == (429, True, 5.0)


def test_from_sdk_ollama_error_line_mid_stream_is_the_in_band_error() -> None:
    first = OLLAMA.split(b"\n")[0] + b"\n"
    with server(first + b'{"error": "model runner crashed"}\n', "application/x-ndjson"
                ) as running:
        chunks = ollama.Client(host=running.url).chat(model="m", messages=ASK, stream=True)
        reply: Response = llm_rx.from_sdk(chunks).pipe(lxo.to_response()).run()
    assert reply.error is not None
    assert (reply.error.kind, reply.error.message) == ("provider", "model runner crashed")
    assert not reply.complete


def test_retry_backoff_retries_a_gemini_rate_limit_through_from_sdk() -> None:
    # the point of it all: a 429 through google-genai is retried after its Retry-After (on
    # virtual time: the second request goes out when the clock passes 7 s, not before)
    scheduler = TestScheduler()
    with server([GEMINI_429, GEMINI], status=[429, 200],
                headers={"Retry-After": "7"}) as running:
        client = _genai(running.url)
        events = reactivex.defer(lambda _: llm_rx.from_sdk(
            client.models.generate_content_stream(model="m", contents="hi")))
        out: list[Any] = []
        events.pipe(lxo.to_response(), lxo.retry_backoff(base_delay=0.0)).subscribe(
            out.append, out.append, scheduler=scheduler)
        scheduler.advance_to(6.9)
        assert (len(running.paths), out) == (1, [])
        scheduler.advance_to(7.1)
    assert len(running.paths) == 2
    assert isinstance(out[0], Response)
    assert out[0].model_dump() == llm_rx.reassemble(GEMINI).model_dump()


# -- an SDK's HTTP error raised by a from_httpx factory, and every SDK's exception ------------

OPENAI_429 = (b'{"error": {"message": "Rate limit reached", "type": "requests", "param": null, '
              b'"code": "rate_limit_exceeded"}}')
CHAT = capture("openai/chat-gpt41-nano-text.sse").data


def test_from_httpx_a_factory_raising_openais_rate_limit_error_is_a_provider_error() -> None:
    # bug class: openai.RateLimitError raised by the factory reached on_error as it was, so
    # retry_backoff never retried it
    scheduler = TestScheduler()
    with server([OPENAI_429, CHAT], status=[429, 200],
                headers={"Retry-After": "7", "x-request-id": "req_1"}) as running:
        client = openai.OpenAI(api_key="k", base_url=running.url + "/v1", max_retries=0)

        def open_reply() -> Any:
            return client.chat.completions.create(
                model="m", messages=ASK, stream=True).response  # type: ignore[arg-type, union-attr]

        out: list[Any] = []
        llm_rx.from_httpx(open_reply).pipe(
            lxo.to_response(), lxo.retry_backoff(base_delay=0.0)
        ).subscribe(out.append, out.append, scheduler=scheduler)
        scheduler.advance_to(6.9)
        assert len(running.paths) == 1
        scheduler.advance_to(7.1)
        client.close()
    assert len(running.paths) == 2
    assert out[0] == llm_rx.reassemble(CHAT, "openai-chat")


def test_from_httpx_a_factory_raising_openais_error_keeps_the_providers_words() -> None:
    with server(OPENAI_429, "application/json", status=429,
                headers={"Retry-After": "7", "x-request-id": "req_1"}) as running:
        client = openai.OpenAI(api_key="k", base_url=running.url + "/v1", max_retries=0)
        error = _failure(llm_rx.from_httpx(lambda: client.chat.completions.create(
            model="m", messages=ASK, stream=True).response))  # type: ignore[arg-type, union-attr]
        client.close()
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.code, error.request_id) == (
        429, "requests", "rate_limit_exceeded", "req_1")
    assert (error.retryable, error.retry_after) == (True, 7.0)
    assert type(error.__cause__) is openai.RateLimitError


def test_from_httpx_an_async_factory_raising_anthropics_overloaded_error() -> None:
    body = b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'

    async def main(url: str) -> BaseException:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0)

        async def open_reply() -> Any:
            stream = await client.messages.create(
                model="m", max_tokens=9, messages=ASK, stream=True)  # type: ignore[arg-type]
            return stream.response  # type: ignore[union-attr]

        with pytest.raises(Exception) as raised:
            await llm_rx.from_httpx(open_reply).pipe(lxo.to_response())
        await client.close()
        return raised.value

    with server(body, "application/json", status=529) as running:
        error = asyncio.run(main(running.url))
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.retryable) == (529, "overloaded_error", True)


def test_from_httpx_a_factory_calling_raise_for_status_is_a_provider_error() -> None:
    with server(b"busy", "text/plain", status=503, headers={"Retry-After": "2"}) as running, \
            httpx.Client() as client:
        def open_reply() -> httpx.Response:
            reply = client.post(running.url + "/v1/chat/completions")
            return reply.raise_for_status()

        error = _failure(llm_rx.from_httpx(open_reply))
    assert isinstance(error, ProviderError)
    assert (error.status, error.retryable, error.retry_after) == (503, True, 2.0)


def test_every_sdks_own_http_error_reads_as_its_provider_error() -> None:
    # the exceptions the official clients raise for a 429 with Retry-After, caught from the
    # real clients, as the byte sources read them (no SDK imported by llm-rx)
    caught: dict[str, BaseException] = {}
    with server(b'{"message": "Too many requests"}', "application/json", status=429,
                headers={"Retry-After": "9", "x-amzn-ErrorType": "ThrottlingException"}
                ) as running:
        bedrock = boto3.client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=running.url,
            aws_access_key_id="k", aws_secret_access_key="s",
            config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))
        with pytest.raises(ClientError) as raised:
            bedrock.converse_stream(modelId="m",
                                    messages=[{"role": "user", "content": [{"text": "hi"}]}])
        caught["bedrock"] = raised.value
        with cohere.ClientV2(api_key="k", base_url=running.url) as made, \
                pytest.raises(cohere.core.api_error.ApiError) as raised_cohere:
            list(made.chat_stream(model="m", messages=ASK))
        caught["cohere"] = raised_cohere.value
    for name, exception in caught.items():
        told = sdk_error(exception, now=0.0)
        assert told is not None, name
        assert (told.status, told.retryable, told.retry_after) == (429, True, 9.0), name
    bedrock_error = sdk_error(caught["bedrock"], now=0.0)
    assert bedrock_error is not None
    assert bedrock_error.error_type == "ThrottlingException"


def test_what_is_no_http_error_is_left_to_the_cut_stream() -> None:
    assert sdk_error(httpx.ReadTimeout("slow"), now=0.0) is None
    assert sdk_error(ConnectionResetError("reset"), now=0.0) is None
    assert sdk_error(ValueError("a bug"), now=0.0) is None
