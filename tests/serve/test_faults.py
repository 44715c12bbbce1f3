"""The emulator's faults, seen by real clients over a real socket: a dropped connection, an
HTTP error status, a stall, an in-band error frame, and a client that goes away mid-stream.
No sleeps: the server keeps its own clock, and every wait in a test is bounded.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.serve import EmulatorThread
from tests.captures import capture

from .replies import model_of

# One capture per endpoint form: (capture, path, query)
ENDPOINTS = {
    "openai/chat-text-basic.sse": "/v1/chat/completions",
    "openai/responses-basic-llm.sse": "/v1/responses",
    "anthropic/thinking-signature.sse": "/v1/messages",
    "gemini/sse-thought-parts.sse": "/v1beta/models/{model}:streamGenerateContent?alt=sse",
    "gemini/json-array-multi-chunk.json": "/v1beta/models/{model}:streamGenerateContent",
    "ollama/chat-gemma3-text.ndjson": "/api/chat",
    "bedrock/converse-stream-text.eventstream": "/model/{model}/converse-stream",
}


def request(server: EmulatorThread, name: str, **headers: str) -> tuple[str, dict[str, Any]]:
    """The URL and JSON body of a streamed request for capture ``name``."""
    cap = capture(name)
    path = ENDPOINTS[name].format(model=model_of(cap))
    return server.url + path, {"model": model_of(cap), "stream": True}


def full(name: str) -> llm_rx.Response:
    cap = capture(name)
    return llm_rx.reassemble(cap.path, cap.provider)


async def read(url: str, body: dict[str, Any], provider: str, headers: dict[str, str],
               timeout: httpx.Timeout | None = None) -> tuple[llm_rx.Response, bytes]:
    """The reply llm-rx folds from the body as it arrives, and the bytes that arrived."""
    got: list[bytes] = []

    async def chunks(response: httpx.Response) -> Any:
        async for chunk in response.aiter_bytes():
            got.append(chunk)
            yield chunk

    async with (
        httpx.AsyncClient(timeout=timeout or httpx.Timeout(10.0)) as client,
        client.stream("POST", url, json=body, headers=headers) as response,
    ):
        assert response.status_code == 200
        events = llm_rx.from_async_bytes(chunks(response), provider)
        reply: llm_rx.Response = await events.pipe(lxo.to_response())
    return reply, b"".join(got)


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_serve_drop_after_cuts_the_connection_mid_body(
    llm_rx_server: EmulatorThread, name: str
) -> None:
    cap = capture(name)
    size = len(cap.data) // 2
    url, body = request(llm_rx_server, name)
    headers = llm_rx_server.headers(fault=f"drop-after={size}")
    dropped = llm_rx_server.stats["dropped"]
    got = bytearray()

    def drain(response: httpx.Response) -> None:
        for chunk in response.iter_bytes():
            got.extend(chunk)

    with (
        httpx.stream("POST", url, json=body, headers=headers, timeout=10.0) as response,
        pytest.raises(httpx.RemoteProtocolError, match="incomplete"),
    ):
        drain(response)
    assert len(got) == size  # exactly N bytes, then no end of the chunked body
    assert llm_rx_server.stats.wait("dropped", dropped + 1, timeout=5.0)


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_serve_drop_after_gives_an_incomplete_reply_with_the_partial_content(
    llm_rx_server: EmulatorThread, name: str
) -> None:
    cap = capture(name)
    url, body = request(llm_rx_server, name)
    headers = llm_rx_server.headers(fault=f"drop-after={len(cap.data) * 2 // 3}")
    reply, got = asyncio.run(read(url, body, cap.provider, headers))
    whole = full(name)
    assert not reply.complete
    assert reply.stop_reason == "interrupted"
    assert reply.error is not None
    assert reply.error.kind == "incomplete"
    partial = reply.text + "".join(getattr(b, "text", "") for b in reply.content
                                   if b.type == "thinking")
    assert partial  # what arrived is kept ...
    everything = whole.text + "".join(getattr(b, "text", "") for b in whole.content
                                      if b.type == "thinking")
    assert len(partial) < len(everything) or len(got) < len(cap.data)
    assert whole.text.startswith(reply.text)  # ... and is a prefix of the whole reply


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_serve_status_fault_answers_with_the_provider_error_body(
    llm_rx_server: EmulatorThread, name: str
) -> None:
    url, body = request(llm_rx_server, name)
    reply = httpx.post(url, json=body, headers=llm_rx_server.headers(fault="status=429"))
    assert reply.status_code == 429
    error = reply.json()
    provider = capture(name).provider
    if provider in ("openai-chat", "openai-responses"):
        assert error["error"]["code"] == "rate_limit_exceeded"
        assert error["error"]["type"] == "requests"
    elif provider == "anthropic":
        assert error["type"] == "error"
        assert error["error"]["type"] == "rate_limit_error"
    elif provider == "gemini":
        assert error["error"]["status"] == "RESOURCE_EXHAUSTED"
        assert error["error"]["code"] == 429
    elif provider == "ollama":
        assert isinstance(error["error"], str)
    else:
        assert reply.headers["x-amzn-ErrorType"].startswith("ThrottlingException")
        assert "message" in error


def test_serve_stall_after_is_cut_by_the_client_read_timeout(
    llm_rx_server: EmulatorThread,
) -> None:
    name = "anthropic/thinking-signature.sse"
    cap = capture(name)
    url, body = request(llm_rx_server, name)
    headers = llm_rx_server.headers(fault="stall-after=3000,stall=60")
    gone = llm_rx_server.stats["disconnected"]
    timeout = httpx.Timeout(10.0, read=0.3)  # the bound: no byte for 0.3 s ends the read
    reply, got = asyncio.run(read(url, body, cap.provider, headers, timeout))
    assert len(got) == 3000
    assert not reply.complete
    assert reply.stop_reason == "interrupted"
    assert reply.error is not None
    assert "ReadTimeout" in reply.error.message
    assert reply.content  # what arrived before the stall is kept
    # The client closed the connection: the stalled server sees it at once.
    assert llm_rx_server.stats.wait("disconnected", gone + 1, timeout=5.0)


def test_serve_stall_ends_and_the_stream_goes_on(llm_rx_server: EmulatorThread) -> None:
    name = "openai/chat-text-basic.sse"
    url, body = request(llm_rx_server, name)
    headers = llm_rx_server.headers(fault="stall-after=100,stall=0.05")
    reply = httpx.post(url, json=body, headers=headers, timeout=10.0)
    assert reply.content == capture(name).data


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_serve_error_after_sends_the_provider_in_band_error(
    llm_rx_server: EmulatorThread, name: str
) -> None:
    cap = capture(name)
    url, body = request(llm_rx_server, name)
    headers = llm_rx_server.headers(fault=f"error-after={len(cap.data) // 2}")
    reply = httpx.post(url, json=body, headers=headers, timeout=10.0)
    assert reply.status_code == 200
    response = llm_rx.reassemble(reply.content, cap.provider)
    assert not response.complete
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert "error-after" in response.error.message
    assert response.content  # the frames before the error are kept
    assert full(name).text.startswith(response.text)


def test_serve_error_after_zero_is_an_error_before_any_content(
    llm_rx_server: EmulatorThread,
) -> None:
    name = "gemini/json-array-multi-chunk.json"
    url, body = request(llm_rx_server, name)
    reply = httpx.post(url, json=body, headers=llm_rx_server.headers(fault="error-after=0"))
    assert reply.json()[0]["error"]["status"] == "UNAVAILABLE"  # still one JSON array
    response = llm_rx.reassemble(reply.content, "gemini")
    assert response.content == []
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"


def test_serve_dispose_mid_stream_closes_the_server_connection(
    llm_rx_server: EmulatorThread,
) -> None:
    name = "anthropic/thinking-signature.sse"  # 118 frames: minutes at 1 frame per second
    url, body = request(llm_rx_server, name)
    headers = llm_rx_server.headers(pace=1)
    gone = llm_rx_server.stats["disconnected"]

    async def first_event_then_dispose() -> llm_rx.Event:
        async with (
            httpx.AsyncClient(timeout=10.0) as client,
            client.stream("POST", url, json=body, headers=headers) as response,
        ):
            events = llm_rx.from_async_bytes(response.aiter_bytes(), "anthropic")
            first: llm_rx.Event = await events.pipe(ops.first())  # disposes after it
        return first

    first = asyncio.run(first_event_then_dispose())
    assert isinstance(first, llm_rx.MessageStart)
    assert llm_rx_server.stats.wait("disconnected", gone + 1, timeout=1.0)


@pytest.mark.parametrize("header", ["drop-after=x", "stall=-1", "status=200", "bogus=1",
                                    "drop-after"])
def test_serve_bad_fault_header_is_a_400_in_the_endpoint_shape(
    llm_rx_server: EmulatorThread, header: str
) -> None:
    url, body = request(llm_rx_server, "anthropic/thinking-signature.sse")
    reply = httpx.post(url, json=body, headers={"x-llm-rx-fault": header})
    assert reply.status_code == 400
    assert reply.json()["error"]["type"] == "invalid_request_error"
