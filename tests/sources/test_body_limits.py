"""Every reader's bound on one body, over a real loopback server: ``max_frame`` holds while the
body arrives, for every encoding (``identity``, ``gzip``, ``deflate``, ``br``, ``zstd``), a
stream and a non-stream body (under a non-JSON content type, and under ``application/json``),
sync and async, through ``from_httpx`` and through the byte sources a user feeds a response's
raw reads to (``from_bytes``, ``from_async_bytes``, ``reassemble``). Each case runs in a child
process whose peak memory is read: a 256 MiB body (a compression bomb for every coding) ends
in a typed ``FrameTooLargeError`` carrying the body's first bytes, and the reader's peak grows
by a small multiple of ``max_frame``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..compressed import ENCODINGS, bomb, library
from ..memory import PEAK, ROOT, MiB, endless, run_child

MAX_FRAME = 16 * MiB  # (the default)
#: What a reader may add to its peak memory for one refused body: a few times ``max_frame``
#: (the body or frame held, what was joined of it), the decoders' windows and what a client
#: costs to make (about 20 MiB).
GROWTH = 4 * MAX_FRAME
SIZE = 256 * MiB

#: The start of each kind of body; the rest is ``a`` without end.
PREFIX = {
    "stream": b'data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,'
              b'"delta":{"content":"',
    "nonstream": b'{"id":"x","object":"chat.completion","choices":[{"index":0,"message":'
                 b'{"role":"assistant","content":"',
}
CONTENT_TYPE = {"stream": "text/event-stream", "nonstream": "text/plain",
                "json": "application/json"}

CHILD = PEAK + """
import asyncio, json, httpx, llm_rx
URL, READER = {url!r}, {reader!r}

def sync():
    with httpx.Client(timeout=60) as client:
        with client.stream("POST", URL + "/v1/chat/completions", json={{}}) as response:
            if READER == "from_httpx":
                llm_rx.from_httpx(response, "openai-chat").run()
            elif READER == "from_bytes":
                llm_rx.from_bytes(response.iter_raw(), "openai-chat").run()
            else:
                llm_rx.reassemble(response.iter_raw(), "openai-chat")

async def main():
    async with httpx.AsyncClient(timeout=60) as client:
        async with client.stream("POST", URL + "/v1/chat/completions", json={{}}) as response:
            if READER == "from_httpx":
                await llm_rx.from_httpx(response, "openai-chat")
            else:
                await llm_rx.from_async_bytes(response.aiter_raw(), "openai-chat")

before = HWM()
error, raw = None, None
try:
    sync() if {sync!r} else asyncio.run(main())
except BaseException as failure:
    error, raw = type(failure).__name__, getattr(failure, "raw", None)
print(json.dumps({{"error": error, "raw": raw and raw[:40], "growth": HWM() - before}}))
"""


def measured(
    encoding: str, kind: str, reader: str, sync: bool, root: Path = ROOT
) -> dict[str, object]:
    """Serve a 256 MiB body of ``kind`` in ``encoding``; read it in a child process (with the
    ``llm_rx`` of the checkout at ``root``)."""
    prefix = PREFIX["stream" if kind == "stream" else "nonstream"]
    head = (b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\nconnection: close\r\n"
            % CONTENT_TYPE[kind].encode())
    if encoding == "identity":  # (sent as it is read: the server stops when the reader does)
        first, piece, budget = prefix, b"a" * 65536, SIZE
    else:
        head += b"content-encoding: %s\r\n" % encoding.encode()
        first, piece, budget = bomb(encoding, prefix, SIZE), b"", 0
    with endless(head + b"\r\n", first, piece, budget) as upstream:
        return run_child(CHILD.format(url=upstream.url, reader=reader, sync=sync), 600, root)


def _checked(result: dict[str, object], kind: str) -> None:
    assert result["error"] == "FrameTooLargeError", result
    prefix = PREFIX["stream" if kind == "stream" else "nonstream"]
    assert isinstance(result["raw"], str)
    assert prefix.decode().startswith(result["raw"][:20])
    assert isinstance(result["growth"], int)
    assert result["growth"] < GROWTH, f"{result['growth'] / MiB:.0f} MiB"


@pytest.mark.slow
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("kind", ["stream", "nonstream", "json"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_from_httpx_every_encoding_stops_at_max_frame_in_bounded_memory(
    encoding: str, kind: str, sync: bool
) -> None:
    library(encoding)
    _checked(measured(encoding, kind, "from_httpx", sync), kind)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["stream", "nonstream"])
@pytest.mark.parametrize(("reader", "sync"), [("from_bytes", True), ("reassemble", True),
                                              ("from_async_bytes", False)])
def test_byte_sources_stop_at_max_frame_in_bounded_memory(
    reader: str, sync: bool, kind: str
) -> None:
    _checked(measured("identity", kind, reader, sync), kind)
