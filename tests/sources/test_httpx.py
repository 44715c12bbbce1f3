"""from_httpx: a streamed httpx / httpx2 response, sync or async, over real sockets."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import httpx2
import pytest
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError, ProviderError, StreamTimeoutError
from llm_rx.events import Event, TextDelta
from llm_rx.response import Response

from ..captures import capture
from ..loopback import WAIT, server

TEXT = capture("openai/chat-gpt41-nano-text.sse")
ANTHROPIC = capture("anthropic/thinking-signature.sse")


def _sync_response(client: Any, url: str) -> Any:
    return client.send(client.build_request("POST", url, json={"stream": True}), stream=True)


def _outcome(events: Any) -> tuple[list[Event], list[Exception], list[bool]]:
    seen: list[Event] = []
    errors: list[Exception] = []
    done: list[bool] = []
    events.subscribe(seen.append, errors.append, lambda: done.append(True))
    return seen, errors, done


@pytest.mark.parametrize("package", [httpx, httpx2])
def test_from_httpx_sync_response_reassembles_and_closes(package: Any) -> None:
    with server(ANTHROPIC.data, "text/event-stream") as running, package.Client() as client:
        response = _sync_response(client, running.url + "/v1/messages")
        result = llm_rx.from_httpx(response).pipe(lxo.to_response()).run()
    assert result.model_dump() == llm_rx.reassemble(ANTHROPIC.data).model_dump()
    assert response.is_closed


@pytest.mark.parametrize("package", [httpx, httpx2])
def test_from_httpx_async_response_reassembles_and_closes(package: Any) -> None:
    async def main(url: str) -> tuple[Response, Any]:
        async with package.AsyncClient() as client:
            request = client.build_request("POST", url)
            response = await client.send(request, stream=True)
            result: Response = await llm_rx.from_httpx(response).pipe(lxo.to_response())
            return result, response

    with server(TEXT.data) as running:
        result, response = asyncio.run(main(running.url + "/v1/chat/completions"))
    assert result.model_dump() == llm_rx.reassemble(TEXT.data).model_dump()
    assert response.is_closed


def test_from_httpx_tells_the_provider_from_the_path_not_the_bytes() -> None:
    # (an Anthropic stream that opens with an error frame reads as OpenAI's by its bytes)
    body = (b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
            b'"message": "Overloaded"}}\n\n')
    with server(body, "text/event-stream") as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/v1/messages")
        result = llm_rx.from_httpx(response).pipe(lxo.to_response()).run()
    assert result.model_dump() == llm_rx.reassemble(body, "anthropic").model_dump()
    assert result.provider == "anthropic"
    assert result.stop_reason == "error"


def test_from_httpx_tells_ndjson_from_the_content_type() -> None:
    data = capture("ollama/chat-gemma3-text.ndjson").data
    with server(data, "application/x-ndjson") as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/somewhere")
        result = llm_rx.from_httpx(response).pipe(lxo.to_response()).run()
    assert result.model_dump() == llm_rx.reassemble(data, "ollama").model_dump()


def test_from_httpx_an_http_500_with_an_error_body_is_a_provider_error_not_ollamas() -> None:
    body = b'{"error": {"message": "The server had an error", "type": "server_error"}}'
    with server(body, "application/json", status=500,
                headers={"x-request-id": "req_123"}) as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/v1/chat/completions")
        seen, errors, done = _outcome(llm_rx.from_httpx(response).pipe(lxo.to_response()))
    assert (seen, done) == ([], [])
    error = errors[0]
    assert isinstance(error, ProviderError)
    assert error.status == 500
    assert error.error_type == "server_error"
    assert error.message.endswith("The server had an error")
    assert error.request_id == "req_123"
    assert error.retryable
    assert error.raw == body.decode()
    assert response.is_closed


def test_from_httpx_an_anthropic_429_is_retryable_with_its_type_and_request_id() -> None:
    body = (b'{"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"},'
            b' "request_id": "req_body"}')
    with server(body, "application/json", status=429,
                headers={"request-id": "req_011"}) as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/v1/messages")
        _, errors, _ = _outcome(llm_rx.from_httpx(response))
    error = errors[0]
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.request_id) == (429, "rate_limit_error",
                                                                  "req_011")
    assert error.retryable


def test_from_httpx_a_400_is_not_retryable() -> None:
    body = b'{"error": {"message": "bad model", "type": "invalid_request_error", "code": "x"}}'
    with server(body, "application/json", status=400) as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/v1/chat/completions")
        _, errors, _ = _outcome(llm_rx.from_httpx(response))
    error = errors[0]
    assert isinstance(error, ProviderError)
    assert (error.code, error.retryable) == ("x", False)


def test_from_httpx_take_closes_the_response_and_the_server_sees_it() -> None:
    with server(TEXT.data, hold_after=2000) as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/v1/chat/completions")
        seen, errors, done = _outcome(llm_rx.from_httpx(response).pipe(ops.take(3)))
        assert running.hung_up.wait(WAIT)
    assert (len(seen), errors, done) == (3, [], [True])
    assert response.is_closed


def test_from_httpx_async_dispose_closes_the_response_and_the_server_sees_it() -> None:
    async def main(url: str, hung_up: Any) -> tuple[list[Event], Any, int]:
        async with httpx.AsyncClient() as client:
            response = await client.send(client.build_request("POST", url), stream=True)
            seen: list[Event] = []
            arrived = asyncio.Event()

            def on_next(event: Event) -> None:
                seen.append(event)
                if isinstance(event, TextDelta):
                    arrived.set()

            subscription = llm_rx.from_httpx(response).subscribe(on_next)
            await asyncio.wait_for(arrived.wait(), WAIT)
            subscription.dispose()
            count = len(seen)
            await asyncio.wait_for(asyncio.to_thread(hung_up.wait, WAIT), WAIT)
            return seen, response, count

    with server(TEXT.data, hold_after=2000) as running:
        seen, response, count = asyncio.run(main(running.url + "/v1/chat/completions",
                                                 running.hung_up))
        assert running.hung_up.is_set()
    assert len(seen) == count  # nothing after dispose
    assert response.is_closed


def test_from_httpx_a_dropped_connection_keeps_what_arrived_and_closes() -> None:
    with server(TEXT.data, drop_after=800) as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/v1/chat/completions")
        result = llm_rx.from_httpx(response).pipe(lxo.to_response()).run()
    assert not result.complete
    assert result.stop_reason == "interrupted"
    assert result.text
    assert response.is_closed


def test_from_httpx_a_dropped_connection_is_an_incomplete_stream_error() -> None:
    with server(TEXT.data, drop_after=800) as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/v1/chat/completions")
        seen, errors, _ = _outcome(llm_rx.from_httpx(response))
    assert seen
    assert isinstance(errors[0], IncompleteStreamError)


def test_from_httpx_sync_idle_timeout_is_a_stream_timeout_keeping_what_arrived() -> None:
    with server(TEXT.data, hold_after=800) as running, httpx.Client(timeout=None) as client:
        response = _sync_response(client, running.url + "/v1/chat/completions")
        seen, errors, _ = _outcome(llm_rx.from_httpx(response, idle_timeout=0.2))
        result = llm_rx.from_httpx(
            _sync_response(client, running.url + "/v1/chat/completions"), idle_timeout=0.2
        ).pipe(lxo.to_response()).run()
    assert any(isinstance(event, TextDelta) for event in seen)
    assert isinstance(errors[0], StreamTimeoutError)
    assert (result.complete, result.stop_reason) == (False, "interrupted")
    assert result.text
    assert response.is_closed


def test_from_httpx_async_idle_timeout_is_a_stream_timeout_keeping_what_arrived() -> None:
    async def main(url: str) -> tuple[Response, Any]:
        async with httpx2.AsyncClient(timeout=None) as client:
            response = await client.send(client.build_request("POST", url), stream=True)
            result: Response = await llm_rx.from_httpx(response, idle_timeout=0.2).pipe(
                lxo.to_response()
            )
            return result, response

    with server(TEXT.data, hold_after=800) as running:
        result, response = asyncio.run(main(running.url + "/v1/chat/completions"))
    assert (result.complete, result.stop_reason) == (False, "interrupted")
    assert result.error is not None
    assert result.error.kind == "incomplete"
    assert result.text
    assert response.is_closed


def test_from_httpx_a_factory_opens_a_new_response_per_subscription_so_retry_works() -> None:
    opened: list[Any] = []
    with server(TEXT.data, status=[503, 200]) as running, httpx.Client() as client:

        def open_reply() -> Any:
            opened.append(_sync_response(client, running.url + "/v1/chat/completions"))
            return opened[-1]

        result = llm_rx.from_httpx(open_reply).pipe(lxo.to_response(), ops.retry(3)).run()
    assert result.model_dump() == llm_rx.reassemble(TEXT.data).model_dump()
    assert [reply.status_code for reply in opened] == [503, 200]
    assert all(reply.is_closed for reply in opened)


def test_from_httpx_an_async_factory_with_defer_and_retry() -> None:
    async def main(url: str) -> Response:
        async with httpx.AsyncClient() as client:

            async def open_reply() -> Any:
                return await client.send(client.build_request("POST", url), stream=True)

            result: Response = await llm_rx.from_httpx(open_reply).pipe(
                lxo.to_response(), ops.retry(3)
            )
            return result

    with server(TEXT.data, status=[429, 200]) as running:
        result = asyncio.run(main(running.url + "/v1/chat/completions"))
    assert result.complete


def test_from_httpx_refuses_what_is_no_response_at_the_call() -> None:
    with pytest.raises(TypeError, match="httpx or httpx2 Response"):
        llm_rx.from_httpx(b"data: {}\n\n")


@pytest.mark.parametrize(("name", "path"), [
    ("openai/chat-text-basic.nonstream.json", "/v1/chat/completions"),
    ("anthropic/thinking-signature.nonstream.json", "/v1/messages"),
    ("openai/responses-basic-llm.nonstream.json", "/v1/responses"),
    ("gemini/generate-enum-int-function-call.nonstream.json", "/v1beta/models/m:generateContent"),
    ("ollama/generate-gemma3.nonstream.json", "/api/generate"),
    ("bedrock/converse-stream-text.nonstream.json", "/model/m/converse"),
])
def test_from_httpx_a_nonstream_body_gives_from_natives_response(name: str, path: str) -> None:
    body = (capture("openai/chat-text-basic.sse").path.parent.parent / name).read_bytes()
    with server(body, "application/json") as running, httpx.Client() as client:
        response = _sync_response(client, running.url + path)
        result = llm_rx.from_httpx(response).pipe(lxo.to_response()).run()
    assert result.model_dump() == llm_rx.from_native(body).model_dump()
    assert result.complete
    assert response.is_closed


def test_from_httpx_an_error_body_with_status_200_is_a_provider_error() -> None:
    body = b'{"error": {"message": "quota", "type": "insufficient_quota"}}'
    with server(body, "application/json") as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/v1/chat/completions")
        _, errors, _ = _outcome(llm_rx.from_httpx(response))
    assert isinstance(errors[0], ProviderError)
    assert errors[0].error_type == "insufficient_quota"


def test_from_httpx_dispose_from_another_thread_closes_a_pending_sync_read() -> None:
    from reactivex.scheduler import NewThreadScheduler

    reading = threading.Event()

    class Signalling(httpx.SyncByteStream):
        """The response's byte stream, saying when the reader starts to wait on it."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __iter__(self) -> Any:  # type: ignore[override]
            reading.set()
            yield from self.inner

        def close(self) -> None:
            self.inner.close()

    with server(TEXT.data, hold_after=0) as running, httpx.Client(timeout=None) as client:
        response = _sync_response(client, running.url + "/v1/chat/completions")
        response.stream = Signalling(response.stream)
        seen: list[Event] = []
        subscription = llm_rx.from_httpx(response).subscribe(
            seen.append, scheduler=NewThreadScheduler()
        )
        assert reading.wait(WAIT)
        subscription.dispose()  # (the reader waits for bytes the server holds back)
        assert running.hung_up.wait(WAIT)
    assert response.is_closed
    assert seen == []


def test_from_httpx_async_dispose_before_the_reading_started_still_closes() -> None:
    async def main(url: str, hung_up: Any) -> Any:
        async with httpx.AsyncClient() as client:
            response = await client.send(client.build_request("POST", url), stream=True)
            llm_rx.from_httpx(response).subscribe(lambda _: None).dispose()
            await asyncio.wait_for(asyncio.to_thread(hung_up.wait, WAIT), WAIT)
            return response

    with server(TEXT.data, hold_after=0) as running:
        response = asyncio.run(main(running.url + "/v1/chat/completions", running.hung_up))
        assert running.hung_up.is_set()
    assert response.is_closed


def test_from_httpx_an_on_next_that_raises_closes_the_response_and_reaches_on_error() -> None:
    def on_next(event: Event) -> None:
        raise ValueError("consumer failed")

    with server(TEXT.data, hold_after=2000) as running, httpx.Client() as client:
        response = _sync_response(client, running.url + "/v1/chat/completions")
        errors: list[Exception] = []
        llm_rx.from_httpx(response).subscribe(on_next, errors.append)
        assert running.hung_up.wait(WAIT)
    assert [str(error) for error in errors] == ["consumer failed"]
    assert response.is_closed
