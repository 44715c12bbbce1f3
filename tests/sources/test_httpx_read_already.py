"""from_httpx on a response that was read already (``client.post()`` without
``stream=True``, httpx's ``MockTransport``, an error body read to log it): the bytes it holds
give the events a streamed read gives, sync and async, httpx and httpx2, instead of httpx's
``StreamConsumed`` about redirects."""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

import httpx
import httpx2
import pytest
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import ProviderError

from ..captures import capture
from ..helpers import kinds
from ..loopback import server

TEXT = capture("openai/chat-gpt41-nano-text.sse").data
PATH = "/v1/chat/completions"
NATIVE = (b'{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,'
          b'"message":{"role":"assistant","content":"Hello there"},"finish_reason":"stop"}]}')


def _streamed(url: str, package: Any = httpx) -> list[Any]:
    with package.Client() as client:
        reply = client.send(client.build_request("POST", url), stream=True)
        return kinds(llm_rx.from_httpx(reply).pipe(ops.to_list()).run())


@pytest.mark.parametrize("package", [httpx, httpx2])
def test_from_httpx_a_response_read_by_post_gives_the_streamed_events(package: Any) -> None:
    # bug class: httpx.StreamConsumed ("... due to passing a generator as request content,
    # and then receiving a redirect response ...") for a plain client.post()
    with server(TEXT) as running, package.Client() as client:
        reply = client.post(running.url + PATH)
        assert reply.is_stream_consumed
        events = llm_rx.from_httpx(reply)
        first = kinds(events.pipe(ops.to_list()).run())
        again = kinds(events.pipe(ops.to_list()).run())  # (the bytes are held: read again)
        streamed = _streamed(running.url + PATH, package)
    assert first == streamed
    assert again == streamed


def test_from_httpx_an_async_response_read_by_post_gives_the_streamed_events() -> None:
    async def main(url: str) -> list[Any]:
        async with httpx.AsyncClient() as client:
            reply = await client.post(url)
            return kinds(await llm_rx.from_httpx(reply).pipe(ops.to_list()))

    with server(TEXT) as running:
        read = asyncio.run(main(running.url + PATH))
        streamed = _streamed(running.url + PATH)
    assert read == streamed


def _mock(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=TEXT)


@pytest.mark.parametrize("stream", [False, True])
def test_from_httpx_a_mock_transport_reply_reads(stream: bool) -> None:
    with httpx.Client(transport=httpx.MockTransport(_mock)) as client:
        reply = client.send(client.build_request("POST", "http://test" + PATH), stream=stream)
        response = llm_rx.from_httpx(reply).pipe(lxo.to_response()).run()
    assert response == llm_rx.reassemble(TEXT, "openai-chat")


def test_from_httpx_an_async_mock_transport_reply_reads() -> None:
    async def main() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(_mock)) as client:
            reply = await client.post("http://test" + PATH)
            return await llm_rx.from_httpx(reply).pipe(lxo.to_response())

    assert asyncio.run(main()) == llm_rx.reassemble(TEXT, "openai-chat")


def test_from_httpx_an_error_body_read_to_log_it_is_the_provider_error() -> None:
    body = b'{"error": {"type": "rate_limit_error", "message": "slow down"}}'
    with server(body, "application/json", status=429,
                headers={"Retry-After": "3"}) as running, httpx.Client() as client:
        reply = client.send(client.build_request("POST", running.url + "/v1/messages"),
                            stream=True)
        logged = reply.read()  # (someone logged the error body first)
        with pytest.raises(ProviderError) as raised:
            llm_rx.from_httpx(reply).run()
    assert logged == body
    assert (raised.value.status, raised.value.retryable, raised.value.retry_after) == (
        429, True, 3.0)
    assert raised.value.error_type == "rate_limit_error"


def test_from_httpx_a_compressed_body_read_already_is_not_inflated_twice() -> None:
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31)
    body = deflate.compress(TEXT) + deflate.flush()
    with server(body, headers={"content-encoding": "gzip"}) as running, \
            httpx.Client() as client:
        reply = client.post(running.url + PATH)
        response = llm_rx.from_httpx(reply).pipe(lxo.to_response()).run()
    assert response == llm_rx.reassemble(TEXT, "openai-chat")


def test_from_httpx_a_nonstream_body_read_already_is_its_reply() -> None:
    with server(NATIVE, "application/json") as running, httpx.Client() as client:
        reply = client.post(running.url + PATH)
        response = llm_rx.from_httpx(reply).pipe(lxo.to_response()).run()
    assert response.text == "Hello there"
    assert response.complete
