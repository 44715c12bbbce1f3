"""from_sdk(call): each subscription makes the SDK's streaming call, so an HTTP error the SDK
raises at the call (openai and anthropic ``RateLimitError``, boto3 ``ClientError``) is the
ProviderError of that reply and ``retry_backoff`` re-sends it; sync and async clients
against a real loopback server, waits on virtual time or a zero Retry-After."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import boto3
import openai
import pytest
from botocore.config import Config
from google import genai
from google.genai import types as genai_types
from reactivex.scheduler.eventloop import AsyncIOScheduler
from reactivex.testing import TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import ProviderError
from llm_rx.response import Response

from ..captures import capture
from ..loopback import server

CHAT = capture("openai/chat-gpt41-nano-text.sse").data
ANTHROPIC = capture("anthropic/thinking-signature.sse").data
BEDROCK = capture("bedrock/converse-stream-text.eventstream").data
GEMINI = capture("gemini/sse-thought-parts.sse").data
ASK: Any = [{"role": "user", "content": "hi"}]
OPENAI_429 = (b'{"error": {"message": "Rate limit reached", "type": "requests", "param": null, '
              b'"code": "rate_limit_exceeded"}}')


def test_from_sdk_a_call_raising_openais_rate_limit_error_is_retried() -> None:
    scheduler = TestScheduler()
    with server([OPENAI_429, CHAT], status=[429, 200], headers={"Retry-After": "7"}) as running:
        client = openai.OpenAI(api_key="k", base_url=running.url + "/v1", max_retries=0)
        out: list[Any] = []
        llm_rx.from_sdk(lambda: client.chat.completions.create(
            model="m", messages=ASK, stream=True)).pipe(
            lxo.to_response(), lxo.retry_backoff(base_delay=0.0)
        ).subscribe(out.append, out.append, scheduler=scheduler)
        assert len(running.paths) == 1
        scheduler.advance_to(6.9)
        assert (len(running.paths), out) == (1, [])
        scheduler.advance_to(7.1)
        client.close()
    assert len(running.paths) == 2
    assert out == [llm_rx.reassemble(CHAT, "openai-chat")]


def test_from_sdk_a_call_raising_boto3s_throttling_is_a_provider_error_and_retried() -> None:
    scheduler = TestScheduler()
    throttled = b'{"message": "Too many requests, please wait before trying again."}'
    with server([throttled, throttled, BEDROCK], "application/vnd.amazon.eventstream",
                status=[429, 429, 200],
                headers={"x-amzn-ErrorType": "ThrottlingException", "Retry-After": "5"}
                ) as running:
        bedrock = boto3.client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=running.url,
            aws_access_key_id="k", aws_secret_access_key="s",
            config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))

        def call() -> Any:
            return bedrock.converse_stream(
                modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])

        errors: list[Exception] = []
        llm_rx.from_sdk(call).subscribe(on_error=errors.append)
        out: list[Any] = []
        llm_rx.from_sdk(call).pipe(
            lxo.to_response(), lxo.retry_backoff(base_delay=0.0)
        ).subscribe(out.append, out.append, scheduler=scheduler)
        assert len(running.paths) == 2
        scheduler.advance_to(4.9)
        assert (len(running.paths), out) == (2, [])
        scheduler.advance_to(5.1)
    [error] = errors
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.retryable, error.retry_after) == (
        429, "ThrottlingException", True, 5.0)
    assert "Too many requests" in error.message
    assert out == [llm_rx.reassemble(BEDROCK)]


def test_from_sdk_an_async_call_is_awaited_and_retried_on_the_loop() -> None:
    body = b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'

    async def main(url: str) -> Response:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0)
        scheduler = AsyncIOScheduler(asyncio.get_running_loop())
        reply: Response = await llm_rx.from_sdk(lambda: client.messages.create(
            model="m", max_tokens=9, messages=ASK, stream=True)).pipe(
            lxo.to_response(), lxo.retry_backoff(base_delay=0.0, scheduler=scheduler))
        await client.close()
        return reply

    with server([body, ANTHROPIC], status=[529, 200], headers={"Retry-After": "0"}) as running:
        reply = asyncio.run(asyncio.wait_for(main(running.url), 10))
    assert len(running.paths) == 2
    assert reply == llm_rx.reassemble(ANTHROPIC)


def test_from_sdk_an_async_genai_call_raising_a_rate_limit_is_a_provider_error() -> None:
    body = b'{"error": {"code": 429, "message": "exhausted", "status": "RESOURCE_EXHAUSTED"}}'

    async def main(url: str) -> BaseException:
        client = genai.Client(api_key="k", http_options=genai_types.HttpOptions(
            base_url=url, api_version="v1beta"))
        with pytest.raises(Exception) as raised:
            await llm_rx.from_sdk(lambda: client.aio.models.generate_content_stream(
                model="m", contents="hi")).pipe(lxo.to_response())
        return raised.value

    with server(body, "application/json", status=429, headers={"Retry-After": "3"}) as running:
        error = asyncio.run(asyncio.wait_for(main(running.url), 10))
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.retry_after) == (429, "RESOURCE_EXHAUSTED", 3.0)


def test_from_sdk_a_call_reads_what_it_returns_each_subscription() -> None:
    with server(GEMINI) as running:
        client = genai.Client(api_key="k", http_options=genai_types.HttpOptions(
            base_url=running.url, api_version="v1beta"))
        events = llm_rx.from_sdk(lambda: client.models.generate_content_stream(
            model="m", contents="hi"))
        first = events.pipe(lxo.to_response()).run()
        second = events.pipe(lxo.to_response()).run()
    assert first == second == llm_rx.reassemble(GEMINI)
    assert len(running.paths) == 2


def test_from_sdk_an_async_call_with_no_loop_says_so_and_awaits_nothing() -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=0)
    events = llm_rx.from_sdk(lambda: client.chat.completions.create(
        model="m", messages=ASK, stream=True))
    with pytest.raises(RuntimeError, match="no"):  # (and no "never awaited" warning)
        events.run()
