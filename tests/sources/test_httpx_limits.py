"""from_httpx's limits on a non-stream body, over real sockets: ``max_frame`` on the decoded
size while the body arrives (a gzip bomb, an endless body: peak memory of a child process
measured), ``idle_timeout`` on the sync path too, a ``MemoryError`` never read as a cut
connection, and a response read twice refused with httpx's own ``StreamConsumed``."""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest

import llm_rx
from llm_rx.errors import IncompleteStreamError, StreamTimeoutError

from ..captures import capture
from ..loopback import WAIT, server
from ..memory import PEAK, MiB, endless, run_child

TEXT = capture("openai/chat-gpt41-nano-text.sse")
NATIVE = (b'{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,'
          b'"message":{"role":"assistant","content":"Hello there"},"finish_reason":"stop"}]}')

JSON_HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
             b"connection: close\r\n")
#: What a body may add to a reader's peak memory past ``max_frame`` (16 MiB): one decoded
#: read (httpx inflates a read of compressed bytes at once: up to ~64 MiB for a bomb).
SLACK = 100 * MiB

CLIENT = PEAK + """
import asyncio, json, httpx, llm_rx
URL = {url!r}

def outcome(run):
    try:
        run()
    except BaseException as error:
        return type(error).__name__
    return None

def sync():
    with httpx.Client(timeout=30) as client:
        with client.stream("POST", URL + "/v1/chat/completions", json={{}}) as response:
            llm_rx.from_httpx(response, "openai-chat").run()

async def main():
    async with httpx.AsyncClient(timeout=30) as client:
        request = client.build_request("POST", URL + "/v1/chat/completions", json={{}})
        response = await client.send(request, stream=True)
        try:
            await llm_rx.from_httpx(response, "openai-chat")
        finally:
            await response.aclose()

before = HWM()
error = outcome(sync if {sync!r} else (lambda: asyncio.run(main())))
print(json.dumps({{"error": error, "growth": HWM() - before}}))
"""


def _gzip_bomb(mib: int) -> tuple[bytes, bytes]:
    """The start of a gzip stream and a piece to repeat after it, each piece inflating to
    1 MiB of zeros (every piece ends in a full flush, so they are byte-identical)."""
    zeros = b"0" * MiB
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    piece = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    return first, piece * (mib // 16)


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_from_httpx_a_gzip_bomb_stops_at_max_frame_with_a_wire_format_error(sync: bool) -> None:
    first, piece = _gzip_bomb(256)
    head = JSON_HEAD + b"content-encoding: gzip\r\n\r\n"
    with endless(head, first, piece, budget=len(piece) * 16) as upstream:
        result = run_child(CLIENT.format(url=upstream.url, sync=sync))
    assert result["error"] == "FrameTooLargeError"  # (a WireFormatError)
    assert isinstance(result["growth"], int)
    assert result["growth"] < 16 * MiB + SLACK, result


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_from_httpx_an_endless_json_body_stops_at_max_frame(sync: bool) -> None:
    first = b'{"id":"x","object":"chat.completion","choices":[{"message":{"content":"'
    with endless(JSON_HEAD + b"\r\n", first, b"a" * 65536, budget=512 * MiB) as upstream:
        result = run_child(CLIENT.format(url=upstream.url, sync=sync))
        assert upstream.done.wait(WAIT)
        assert upstream.sent < 64 * MiB  # (the reader stopped, the connection closed)
    assert result["error"] == "FrameTooLargeError"
    assert isinstance(result["growth"], int)
    assert result["growth"] < 16 * MiB + SLACK, result


def test_from_httpx_max_frame_bounds_a_nonstream_body_and_lets_a_small_one_through() -> None:
    with server(NATIVE, "application/json") as running, httpx.Client() as client:
        request = client.build_request("POST", running.url + "/v1/chat/completions")
        small = llm_rx.from_httpx(client.send(request, stream=True), max_frame=len(NATIVE))
        assert llm_rx.operators.to_response()(small).run().text == "Hello there"
        refused = llm_rx.from_httpx(client.send(request, stream=True),
                                    max_frame=len(NATIVE) - 1)
        with pytest.raises(llm_rx.FrameTooLargeError, match="max_frame"):
            refused.run()


def test_from_httpx_sync_idle_timeout_bounds_a_nonstream_body() -> None:
    with server(NATIVE, "application/json", chunk=16, hold_after=32) as running, \
            httpx.Client(timeout=30) as client:
        request = client.build_request("POST", running.url + "/v1/chat/completions")
        events = llm_rx.from_httpx(client.send(request, stream=True), idle_timeout=0.3)
        started = time.monotonic()
        with pytest.raises(StreamTimeoutError):
            events.run()
        assert time.monotonic() - started < WAIT / 2


def test_from_httpx_sync_idle_timeout_bounds_an_error_body() -> None:
    body = b'{"error": {"message": "' + b"x" * 64 + b'", "type": "server_error"}}'
    with server(body, "application/json", chunk=16, hold_after=32, status=500) as running, \
            httpx.Client(timeout=30) as client:
        request = client.build_request("POST", running.url + "/v1/chat/completions")
        events = llm_rx.from_httpx(client.send(request, stream=True), idle_timeout=0.3)
        started = time.monotonic()
        with pytest.raises(llm_rx.ProviderError):  # (with what arrived of its body)
            events.run()
        assert time.monotonic() - started < WAIT / 2


class _Exhausting(httpx.SyncByteStream):
    """A byte stream whose second read runs out of memory."""

    def __iter__(self) -> Iterator[bytes]:
        yield NATIVE[:20]
        raise MemoryError

    def close(self) -> None:
        pass


@pytest.mark.parametrize("content_type", ["application/json", "text/event-stream"])
def test_from_httpx_a_memory_error_is_no_cut_connection(content_type: str) -> None:
    response = httpx.Response(200, headers={"content-type": content_type},
                              stream=_Exhausting())
    with pytest.raises(MemoryError):
        llm_rx.from_httpx(response, "openai-chat").run()


def test_from_bytes_a_memory_error_of_the_byte_source_is_no_cut_stream() -> None:
    def reads() -> Iterator[bytes]:
        yield TEXT.data[:100]
        raise MemoryError

    with pytest.raises(MemoryError):
        llm_rx.from_bytes(reads(), "openai-chat").run()


@pytest.mark.parametrize("package", [httpx, httpx2])
def test_from_httpx_subscribing_twice_is_streamconsumed_not_a_cut_stream(package: Any) -> None:
    with server(TEXT.data) as running, package.Client() as client:
        request = client.build_request("POST", running.url + "/v1/chat/completions")
        events = llm_rx.from_httpx(client.send(request, stream=True))
        events.run()
        with pytest.raises(package.StreamConsumed) as raised:
            events.run()
    assert not isinstance(raised.value, IncompleteStreamError)
    assert any("callable" in note for note in getattr(raised.value, "__notes__", []))


def test_from_httpx_async_subscribing_twice_is_streamconsumed() -> None:
    async def main(url: str) -> None:
        async with httpx.AsyncClient() as client:
            response = await client.send(client.build_request("POST", url), stream=True)
            events = llm_rx.from_httpx(response)
            await events
            with pytest.raises(httpx.StreamConsumed):
                await events

    with server(TEXT.data) as running:
        asyncio.run(main(running.url + "/v1/chat/completions"))


def _compressed(data: bytes, encoding: str) -> bytes:
    wbits = {"gzip": 31, "deflate": 15, "raw-deflate": -15}[encoding]
    deflate = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return deflate.compress(data) + deflate.flush()


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
@pytest.mark.parametrize("package", [httpx, httpx2])
def test_from_httpx_a_compressed_stream_reads_as_it_does_uncompressed(
    encoding: str, package: Any
) -> None:
    body = _compressed(TEXT.data, encoding)
    header = {"content-encoding": encoding.removeprefix("raw-")}
    with server(body, "text/event-stream", chunk=61, headers=header) as running, \
            package.Client() as client:
        request = client.build_request("POST", running.url + "/v1/chat/completions")
        reply = llm_rx.operators.to_response()(
            llm_rx.from_httpx(client.send(request, stream=True))).run()
    assert reply == llm_rx.reassemble(TEXT.data, "openai-chat")


def test_from_httpx_a_cut_gzip_body_is_a_cut_stream() -> None:
    body = _compressed(TEXT.data, "gzip")
    with server(body, "text/event-stream", headers={"content-encoding": "gzip"},
                drop_after=len(body) // 2) as running, httpx.Client() as client:
        request = client.build_request("POST", running.url + "/v1/chat/completions")
        reply = llm_rx.operators.to_response()(
            llm_rx.from_httpx(client.send(request, stream=True))).run()
    assert not reply.complete
