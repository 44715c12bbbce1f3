"""from_httpx and from_sdk against llm-rx serve: every capture on its endpoint, non-stream
bodies, and the emulator's faults (drop, status, stall, in-band error, a client gone)."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import boto3
import httpx
import httpx2
import ollama
import openai
import pytest
from botocore.config import Config
from google import genai
from google.genai import types as genai_types
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import ProviderError, StreamTimeoutError
from llm_rx.serve import EmulatorThread
from tests.captures import SEVERAL_REPLIES, Capture, capture

from .replies import model_of
from .test_app import SERVED, params, url_for
from .test_faults import ENDPOINTS, full, request

ASK = [{"role": "user", "content": "hi"}]


def _read(url: str, body: dict[str, Any], headers: dict[str, str] | None = None,
          idle_timeout: float | None = None) -> tuple[llm_rx.Response, Any]:
    with httpx.Client(timeout=10.0) as client:
        reply = client.send(client.build_request("POST", url, json=body, headers=headers),
                            stream=True)
        response: llm_rx.Response = llm_rx.from_httpx(reply, idle_timeout=idle_timeout).pipe(
            lxo.to_response()
        ).run()
    return response, reply


@pytest.mark.parametrize("cap", params(SERVED))
def test_from_httpx_every_served_capture_is_its_reassembly_provider_told_by_the_reply(
    llm_rx_server: EmulatorThread, cap: Capture
) -> None:
    if cap.name in SEVERAL_REPLIES:  # (to_response() ends at the second reply's start, and
        # the reading closes the connection a moment after run() returned: read them all)
        with httpx.Client(timeout=10.0) as client:
            reply = client.send(client.build_request(
                "POST", url_for(llm_rx_server, cap), json={"model": model_of(cap),
                                                           "stream": True}), stream=True)
            replies = llm_rx.from_httpx(reply).pipe(lxo.to_responses()).run()
        assert replies == llm_rx.from_bytes(cap.data, cap.provider).pipe(
            lxo.to_responses()).run()
        assert len(replies) > 1
        assert reply.is_closed
        return
    response, reply = _read(url_for(llm_rx_server, cap), {"model": model_of(cap), "stream": True})
    assert response == llm_rx.reassemble(cap.path, cap.provider)
    assert reply.is_closed


def test_from_httpx_async_httpx2_on_every_endpoint(llm_rx_server: EmulatorThread) -> None:
    async def main() -> list[llm_rx.Response]:
        async with httpx2.AsyncClient(timeout=10.0) as client:
            out = []
            for name in ENDPOINTS:
                url, body = request(llm_rx_server, name)
                reply = await client.send(client.build_request("POST", url, json=body),
                                          stream=True)
                out.append(await llm_rx.from_httpx(reply).pipe(lxo.to_response()))
            return out

    for name, response in zip(ENDPOINTS, asyncio.run(main()), strict=True):
        assert response == full(name), name


@pytest.mark.parametrize(("name", "path"), [
    ("openai/chat-text-basic.sse", "/v1/chat/completions"),
    ("openai/responses-basic-llm.sse", "/v1/responses"),
    ("anthropic/thinking-signature.sse", "/v1/messages"),
    ("gemini/sse-thought-parts.sse", "/v1beta/models/{model}:generateContent"),
    ("ollama/chat-gemma3-text.ndjson", "/api/chat"),
    ("bedrock/converse-stream-text.eventstream", "/model/{model}/converse"),
])
def test_from_httpx_a_nonstream_reply_is_from_natives_response(
    llm_rx_server: EmulatorThread, name: str, path: str
) -> None:
    cap = capture(name)
    url = llm_rx_server.url + path.format(model=model_of(cap))
    body = {"model": model_of(cap), "stream": False}
    response, reply = _read(url, body)
    assert response == llm_rx.from_native(httpx.post(url, json=body).content)
    assert response.complete
    assert response.text == full(name).text
    assert reply.is_closed


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_from_httpx_a_dropped_connection_keeps_the_partial_reply(
    llm_rx_server: EmulatorThread, name: str
) -> None:
    url, body = request(llm_rx_server, name)
    fault = llm_rx_server.headers(fault=f"drop-after={len(capture(name).data) // 2}")
    response, reply = _read(url, body, fault)
    assert (response.complete, response.stop_reason) == (False, "interrupted")
    assert response.content
    assert full(name).text.startswith(response.text)
    assert reply.is_closed


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_from_httpx_an_http_429_is_a_retryable_provider_error_with_the_providers_words(
    llm_rx_server: EmulatorThread, name: str
) -> None:
    url, body = request(llm_rx_server, name)
    with httpx.Client(timeout=10.0) as client:
        reply = client.send(client.build_request(
            "POST", url, json=body, headers=llm_rx_server.headers(fault="status=429")
        ), stream=True)
        errors: list[Exception] = []
        llm_rx.from_httpx(reply).pipe(lxo.to_response()).subscribe(on_error=errors.append)
    error = errors[0]
    assert isinstance(error, ProviderError)
    assert (error.status, error.retryable) == (429, True)
    assert error.error_type or name.startswith("ollama")  # (Ollama's body is a bare string)
    assert error.raw
    assert reply.is_closed


def test_from_httpx_a_stall_with_idle_timeout_is_a_stream_timeout_keeping_what_arrived(
    llm_rx_server: EmulatorThread,
) -> None:
    name = "anthropic/thinking-signature.sse"
    url, body = request(llm_rx_server, name)
    gone = llm_rx_server.stats["disconnected"]
    headers = llm_rx_server.headers(fault="stall-after=3000,stall=60")
    with httpx.Client(timeout=60.0) as client:
        reply = client.send(client.build_request("POST", url, json=body, headers=headers),
                            stream=True)
        errors: list[Exception] = []
        llm_rx.from_httpx(reply, idle_timeout=0.3).subscribe(on_error=errors.append)
        assert isinstance(errors[0], StreamTimeoutError)
    response, _ = _read(url, body, headers, idle_timeout=0.3)
    assert (response.complete, response.stop_reason) == (False, "interrupted")
    assert response.content
    assert llm_rx_server.stats.wait("disconnected", gone + 2, timeout=5.0)


def test_from_httpx_an_in_band_error_frame_is_a_provider_error_in_the_reply(
    llm_rx_server: EmulatorThread,
) -> None:
    name = "openai/chat-text-basic.sse"
    url, body = request(llm_rx_server, name)
    fault = llm_rx_server.headers(fault=f"error-after={len(capture(name).data) // 2}")
    response, _ = _read(url, body, fault)
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"


def test_from_httpx_async_first_event_then_dispose_the_server_sees_the_client_go(
    llm_rx_server: EmulatorThread,
) -> None:
    url, body = request(llm_rx_server, "anthropic/thinking-signature.sse")
    gone = llm_rx_server.stats["disconnected"]

    async def main() -> Any:
        async with httpx.AsyncClient(timeout=10.0) as client:
            reply = await client.send(client.build_request(
                "POST", url, json=body, headers=llm_rx_server.headers(pace=1)), stream=True)
            await llm_rx.from_httpx(reply).pipe(ops.first())
            return reply

    reply = asyncio.run(main())
    assert reply.is_closed
    assert llm_rx_server.stats.wait("disconnected", gone + 1, timeout=5.0)


def _sdk_reply(events: Any) -> llm_rx.Response:
    response: llm_rx.Response = events.pipe(lxo.to_response()).run()
    return response


def test_from_sdk_openai_and_anthropic_streams_against_serve(
    llm_rx_server: EmulatorThread,
) -> None:
    chat, claude = capture("openai/chat-tool-call-strict.sse"), capture(
        "anthropic/thinking-signature.sse")
    client = openai.OpenAI(api_key="k", base_url=llm_rx_server.url + "/v1", max_retries=0)
    stream = client.chat.completions.create(model=model_of(chat), messages=ASK, stream=True)  # type: ignore[arg-type]
    assert _sdk_reply(llm_rx.from_sdk(stream)) == full(chat.name)
    client.close()
    other = anthropic.Anthropic(api_key="k", base_url=llm_rx_server.url, max_retries=0)
    with other.messages.stream(model=model_of(claude), max_tokens=9, messages=ASK) as messages:  # type: ignore[arg-type]
        assert _sdk_reply(llm_rx.from_sdk(messages)) == full(claude.name)
    other.close()


def test_from_sdk_genai_ollama_and_boto3_against_serve(llm_rx_server: EmulatorThread) -> None:
    gemini = capture("gemini/sse-thought-parts.sse")
    with genai.Client(api_key="k", http_options=genai_types.HttpOptions(
        base_url=llm_rx_server.url, api_version="v1beta")) as client:
        chunks = client.models.generate_content_stream(model=model_of(gemini), contents="hi")
        assert _sdk_reply(llm_rx.from_sdk(chunks)) == full(gemini.name)
    local = capture("ollama/chat-gemma3-text.ndjson")
    host = ollama.Client(host=llm_rx_server.url)
    lines = host.chat(model=model_of(local), messages=ASK, stream=True)
    assert _sdk_reply(llm_rx.from_sdk(lines)) == full(local.name)
    host._client.close()
    aws = capture("bedrock/converse-stream-text.eventstream")
    runtime = boto3.client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=llm_rx_server.url,
        aws_access_key_id="k", aws_secret_access_key="s",
        config=Config(retries={"max_attempts": 1}),
    )
    reply = runtime.converse_stream(modelId=model_of(aws),
                                    messages=[{"role": "user", "content": [{"text": "hi"}]}])
    assert _sdk_reply(llm_rx.from_sdk(reply)) == full(aws.name)
    runtime.close()
