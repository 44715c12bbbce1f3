"""A non-stream body a byte source is given (one JSON object, told by its fields whatever its
content type) is kept whole to be read as its reply: ``max_frame`` bounds it while it arrives,
from every byte source and from ``reassemble``, a typed ``FrameTooLargeError`` carrying the
body's first bytes; a body that fits reads as ``from_native`` reads it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import orjson
import pytest
import reactivex

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import FrameTooLargeError
from llm_rx.wire.sse import DEFAULT_MAX_FRAME

from ..captures import capture
from ..loopback import server

NATIVE = capture("openai/chat-gpt41-nano-text.sse").nonstream
LIMIT = 64 * 1024
READ = 4096


def _body(size: int) -> bytes:
    """The capture's non-stream body, its text ``size`` bytes of ``a``."""
    assert NATIVE is not None
    body = orjson.loads(NATIVE.read_bytes())
    body["choices"][0]["message"]["content"] = "a" * size
    return orjson.dumps(body)


BIG = _body(4 * LIMIT)


class _Reads:
    """The body in reads of ``READ`` bytes, counting those taken."""

    def __init__(self, body: bytes) -> None:
        self.body, self.taken = body, 0

    def __iter__(self) -> Iterator[bytes]:
        for start in range(0, len(self.body), READ):
            self.taken += 1
            yield self.body[start : start + READ]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self:
            yield piece


def _from_bytes(reads: _Reads) -> object:
    return llm_rx.from_bytes(iter(reads), "openai-chat", max_frame=LIMIT).run()


def _reassemble(reads: _Reads) -> object:
    return llm_rx.reassemble(iter(reads), "openai-chat", max_frame=LIMIT)


def _sniffed(reads: _Reads) -> object:
    return llm_rx.reassemble(iter(reads), max_frame=LIMIT)


def _translate(reads: _Reads) -> object:
    return llm_rx.translate(iter(reads), "anthropic", "openai-chat", max_frame=LIMIT)


def _decode(reads: _Reads) -> object:
    return reactivex.from_iterable(reads).pipe(
        lxo.decode("openai-chat", max_frame=LIMIT)).run()


def _from_async_bytes(reads: _Reads) -> object:
    async def main() -> object:
        return await llm_rx.from_async_bytes(reads.__aiter__(), "openai-chat", max_frame=LIMIT)

    return asyncio.run(main())


READERS: dict[str, Callable[[_Reads], object]] = {
    "from_bytes": _from_bytes, "reassemble": _reassemble, "reassemble (sniffed)": _sniffed,
    "translate": _translate, "decode()": _decode, "from_async_bytes": _from_async_bytes,
}


@pytest.mark.parametrize("reader", READERS)
def test_a_nonstream_body_past_max_frame_is_refused_while_it_arrives(reader: str) -> None:
    reads = _Reads(BIG)
    with pytest.raises(FrameTooLargeError, match="max_frame") as raised:
        READERS[reader](reads)
    assert raised.value.raw is not None
    assert BIG.decode().startswith(raised.value.raw)
    assert reads.taken <= LIMIT // READ + 1  # (refused at the read that passed the limit)


def test_a_nonstream_body_in_one_read_past_max_frame_is_refused() -> None:
    with pytest.raises(FrameTooLargeError, match="max_frame"):
        llm_rx.from_bytes(BIG, "openai-chat", max_frame=LIMIT).run()
    with pytest.raises(FrameTooLargeError, match="max_frame"):
        llm_rx.reassemble(BIG, max_frame=LIMIT)


def test_a_nonstream_body_within_max_frame_reads_as_from_native() -> None:
    body = _body(LIMIT // 2)
    reads = _Reads(body)
    assert llm_rx.reassemble(iter(reads), max_frame=LIMIT) == llm_rx.from_native(body)


def test_a_nonstream_body_past_the_default_frame_reads_under_a_larger_max_frame() -> None:
    body = _body(DEFAULT_MAX_FRAME + 1024)  # (its reply, re-framed, is one frame this long)
    reply = llm_rx.reassemble(body, "openai-chat", max_frame=2 * DEFAULT_MAX_FRAME)
    assert reply.text == "a" * (DEFAULT_MAX_FRAME + 1024)


@pytest.mark.parametrize("content_type", ["text/plain", "application/octet-stream"])
def test_from_httpx_a_nonstream_body_under_a_non_json_type_stops_at_max_frame(
    content_type: str
) -> None:
    with server(BIG, content_type, chunk=READ) as running, httpx.Client() as client:
        request = client.build_request("POST", running.url + "/v1/chat/completions")
        events = llm_rx.from_httpx(client.send(request, stream=True), max_frame=LIMIT)
        with pytest.raises(FrameTooLargeError, match="max_frame") as raised:
            events.run()
    assert raised.value.raw is not None
    assert BIG.decode().startswith(raised.value.raw)
