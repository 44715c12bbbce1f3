"""Compressed bodies read by llm-rx itself, over a real loopback server: ``br`` and ``zstd``
(with the real ``brotli`` and ``zstandard``), several codings in one header, several zstd
frames, read as they read uncompressed by httpx and httpx2, sync and async; a bomb inflated in
bounded pieces; a coding whose library is missing is a typed error, never garbage."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import httpx2
import pytest

import llm_rx
from llm_rx import operators as lxo
from llm_rx._extras import install_hint
from llm_rx.errors import IncompleteStreamError
from llm_rx.sources._inflate import PIECE, inflated, inflater

from ..captures import capture
from ..compressed import MiB, bomb, compress, library
from ..loopback import server
from ..memory import run_child

TEXT = capture("openai/chat-gpt41-nano-text.sse")
NATIVE = capture("openai/chat-gpt41-nano-text.sse").nonstream


def _libraries(encoding: str) -> None:
    for name in encoding.split(","):
        library(name.strip())


def _read(package: Any, url: str) -> llm_rx.Response:
    with package.Client() as client:
        request = client.build_request("POST", url + "/v1/chat/completions")
        return lxo.to_response()(llm_rx.from_httpx(client.send(request, stream=True))).run()


async def _aread(url: str) -> llm_rx.Response:
    async with httpx.AsyncClient() as client:
        request = client.build_request("POST", url + "/v1/chat/completions")
        response = await client.send(request, stream=True)
        reply: llm_rx.Response = await llm_rx.from_httpx(response).pipe(lxo.to_response())
        return reply


@pytest.mark.parametrize(("encoding", "package"), [
    ("br", httpx), ("zstd", httpx),
    pytest.param("gzip, br", httpx2, marks=pytest.mark.slow),
    pytest.param("deflate, zstd", httpx2, marks=pytest.mark.slow),
])
def test_from_httpx_br_zstd_and_stacked_codings_read_as_uncompressed(
    encoding: str, package: Any
) -> None:
    _libraries(encoding)
    body = compress(TEXT.data, encoding)
    with server(body, "text/event-stream", chunk=61,
                headers={"content-encoding": encoding}) as running:
        reply = _read(package, running.url)
        again = asyncio.run(_aread(running.url))
    expected = llm_rx.reassemble(TEXT.data, "openai-chat")
    assert reply == expected
    assert again == expected


@pytest.mark.parametrize(("encoding", "content_type"), [
    ("br", "application/json"), ("zstd", "text/plain"),
])
def test_from_httpx_a_compressed_nonstream_body_reads_as_from_native(
    encoding: str, content_type: str
) -> None:
    library(encoding)
    assert NATIVE is not None
    body = NATIVE.read_bytes()
    with server(compress(body, encoding), content_type, chunk=50,
                headers={"content-encoding": encoding}) as running:
        assert _read(httpx, running.url) == llm_rx.from_native(body, "openai-chat")


@pytest.mark.slow
def test_from_httpx_several_zstd_frames_read_as_one_body() -> None:
    library("zstd")
    half = len(TEXT.data) // 2
    body = compress(TEXT.data[:half], "zstd") + compress(TEXT.data[half:], "zstd")
    with server(body, "text/event-stream", headers={"content-encoding": "zstd"}) as running:
        assert _read(httpx, running.url) == llm_rx.reassemble(TEXT.data, "openai-chat")


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["br", "zstd"])
def test_from_httpx_a_cut_br_or_zstd_body_is_a_cut_stream(encoding: str) -> None:
    library(encoding)
    body = compress(TEXT.data, encoding)
    with server(body, "text/event-stream", chunk=40, headers={"content-encoding": encoding},
                drop_after=len(body) // 2) as running:
        try:
            reply = _read(httpx, running.url)
        except IncompleteStreamError:  # (no event got out before the cut: a zstd block is
            return  # decoded whole)
    assert not reply.complete


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd", "gzip, br"])
def test_inflater_gives_a_bomb_in_pieces_of_at_most_piece(encoding: str) -> None:
    _libraries(encoding)
    size = 32 * MiB
    body = bomb(encoding, b"", size) if "," not in encoding else compress(b"a" * size, encoding)
    inflate = inflater(encoding)
    assert inflate is not None
    total = 0
    reads = (body[start : start + 65536] for start in range(0, len(body), 65536))
    for piece in inflated(reads, inflate):
        assert 0 < len(piece) <= PIECE
        total += len(piece)
    assert total == size


def test_inflater_passes_identity_and_unknown_codings_through() -> None:
    assert inflater("identity") is None
    assert inflater("compress") is None
    inflate = inflater("identity, gzip")
    assert inflate is not None
    assert inflate.codings == ["gzip"]


MISSING = """
import sys, json
sys.modules["brotli"] = sys.modules["brotlicffi"] = sys.modules["zstandard"] = None
import httpx, llm_rx
out = []
for url in {urls!r}:
    with httpx.Client() as client:
        request = client.build_request("POST", url + "/v1/chat/completions")
        try:
            llm_rx.from_httpx(client.send(request, stream=True), "openai-chat").run()
        except Exception as error:
            out.append([type(error).__name__, str(error)])
print(json.dumps({{"errors": out}}))
"""


@pytest.mark.slow
def test_from_httpx_a_coding_without_its_library_is_a_typed_error() -> None:
    body = TEXT.data  # (sent as it is: no library to decode it is loaded in the reader)
    with server(body, headers={"content-encoding": "br"}) as br, \
            server(body, headers={"content-encoding": "zstd"}) as zstd, \
            server(body, status=503, headers={"content-encoding": "br"}) as failing:
        result = run_child(MISSING.format(urls=[br.url, zstd.url, failing.url]))
    (br_error, br_words), (zstd_error, zstd_words), (failed, _) = result["errors"]
    assert br_error == zstd_error == "WireFormatError"
    assert "br-encoded" in br_words
    assert "brotli or brotlicffi" in br_words
    assert "zstd-encoded" in zstd_words
    assert "zstandard" in zstd_words
    assert install_hint("compression") in br_words
    assert failed == "ProviderError"  # (an error body's status is what the error says)
