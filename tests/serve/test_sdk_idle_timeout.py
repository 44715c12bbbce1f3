"""``from_sdk(..., idle_timeout=)`` against llm-rx serve stalling mid-reply (``stall-after``):
the official SDKs' streams, sync and async, end with a ``StreamTimeoutError`` after what
arrived, in about the timeout; a sync stream the SDK reads itself refuses the option."""

from __future__ import annotations

import asyncio
import time

import anthropic
import ollama
import openai
import pytest
from google import genai
from google.genai import types as genai_types

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import StreamTimeoutError
from llm_rx.serve import EmulatorThread
from tests.captures import capture

from ..loopback import WAIT
from .replies import model_of

pytestmark = pytest.mark.oracle

ASK = [{"role": "user", "content": "hi"}]
STALL = "stall-after=300"


def test_from_sdk_openai_sync_stream_idle_timeout(llm_rx_server: EmulatorThread) -> None:
    chat = capture("openai/chat-text-basic.sse")
    with openai.OpenAI(api_key="k", base_url=llm_rx_server.url + "/v1", max_retries=0) as client:
        stream = client.chat.completions.create(
            model=model_of(chat), messages=ASK, stream=True,  # type: ignore[arg-type]
            extra_headers=llm_rx_server.headers(fault=STALL))
        started = time.monotonic()
        reply = llm_rx.from_sdk(stream, idle_timeout=0.3).pipe(lxo.to_response()).run()
    assert time.monotonic() - started < WAIT / 2
    assert not reply.complete
    assert reply.error is not None
    assert "no bytes arrived in time" in reply.error.message


def test_from_sdk_anthropic_async_stream_idle_timeout(llm_rx_server: EmulatorThread) -> None:
    claude = capture("anthropic/thinking-signature.sse")

    async def main() -> None:
        async with anthropic.AsyncAnthropic(api_key="k", base_url=llm_rx_server.url,
                                            max_retries=0) as client:
            stream = await client.messages.create(
                model=model_of(claude), max_tokens=9, messages=ASK,  # type: ignore[arg-type]
                stream=True, extra_headers=llm_rx_server.headers(fault=STALL))
            with pytest.raises(StreamTimeoutError):
                await llm_rx.from_sdk(stream, idle_timeout=0.3)

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < WAIT / 2


def test_from_sdk_ollama_async_chunks_idle_timeout(llm_rx_server: EmulatorThread) -> None:
    local = capture("ollama/chat-gemma3-text.ndjson")

    async def main() -> None:
        client = ollama.AsyncClient(host=llm_rx_server.url,
                                    headers=llm_rx_server.headers(fault=STALL))
        lines = await client.chat(model=model_of(local), messages=ASK, stream=True)
        with pytest.raises(StreamTimeoutError):
            await llm_rx.from_sdk(lines, idle_timeout=0.3)
        await client._client.aclose()

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < WAIT / 2


def test_from_sdk_idle_timeout_without_a_stall_changes_nothing(
    llm_rx_server: EmulatorThread,
) -> None:
    chat = capture("openai/chat-text-basic.sse")
    with openai.OpenAI(api_key="k", base_url=llm_rx_server.url + "/v1", max_retries=0) as client:
        stream = client.chat.completions.create(model=model_of(chat), messages=ASK,  # type: ignore[arg-type]
                                                stream=True)
        events = llm_rx.from_sdk(stream, idle_timeout=5.0).pipe(lxo.to_response()).run()
    assert events.complete
    assert events == llm_rx.reassemble(chat.data, "openai-chat")


def test_from_sdk_idle_timeout_on_a_sync_stream_the_sdk_reads_is_refused(
    llm_rx_server: EmulatorThread,
) -> None:
    gemini = capture("gemini/sse-thought-parts.sse")
    with genai.Client(api_key="k", http_options=genai_types.HttpOptions(
            base_url=llm_rx_server.url, api_version="v1beta")) as client:
        chunks = client.models.generate_content_stream(model=model_of(gemini), contents="hi")
        with pytest.raises(ValueError, match="HttpOptions"):
            llm_rx.from_sdk(chunks, idle_timeout=1.0)
        assert llm_rx.from_sdk(chunks).pipe(lxo.to_response()).run().complete
