"""``llm-rx record`` then ``llm-rx serve``, with the official SDKs as clients on both sides
(no network: the upstream is the emulator itself, or a small server on loopback that
compresses whatever it is asked):

- a non-stream reply the recorder wrote (``*.nonstream.json``) is served back, as it was to
  its own provider's endpoint, translated to another's, and streamed;
- a model name too long for a file name never breaks the client's reply, and its recording
  is still served;
- a compressed reply (an upstream that ignores ``Accept-Encoding: identity``) reaches the
  client with its ``Content-Encoding``, and is recorded decoded, read by read.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anthropic
import boto3
import httpx
import ollama
import openai
import pytest
from google import genai
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

import llm_rx
from llm_rx.serve import EmulatorThread
from llm_rx.serve._record_main import RecorderThread
from llm_rx.serve._server import _Server, bind, url_of
from llm_rx.serve._timing import timing_of
from llm_rx.testing import reply
from tests.captures import HERE, capture

OPENAI = "openai/chat-text-basic.sse"
MESSAGES: Any = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def upstream() -> Iterator[EmulatorThread]:
    with EmulatorThread([capture(OPENAI).path]) as server:
        yield server


@pytest.fixture
def proxy(upstream: EmulatorThread, tmp_path: Path) -> Iterator[RecorderThread]:
    upstream.reset()
    with RecorderThread(upstream.url, tmp_path / "recorded") as recorder:
        yield recorder


def capture_id(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix().split(".", 1)[0].replace("/", "__")


def test_a_recorded_non_stream_reply_is_served_back(upstream: EmulatorThread,
                                                    proxy: RecorderThread) -> None:
    upstream.queue(reply("Recorded, not streamed.", usage={"input_tokens": 4,
                                                           "output_tokens": 3}))
    with openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-SECRET",
                       max_retries=0) as client:
        recorded = client.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert proxy.wait(1)
    (saved,) = proxy.saved
    root = saved.parent.parent
    assert saved.name == "gpt-4o-001.nonstream.json"
    model = capture_id(saved, root)
    assert model == "openai-chat__gpt-4o-001"
    with EmulatorThread([root]) as replay:
        assert model in replay.captures
        with openai.OpenAI(base_url=f"{replay.url}/v1", api_key="test",
                           max_retries=0) as client:
            again = client.chat.completions.create(model=model, messages=MESSAGES)
            streamed = client.chat.completions.create(
                model=model, messages=MESSAGES, stream=True,
                stream_options={"include_usage": True})
            text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed
                           if chunk.choices)
        with anthropic.Anthropic(base_url=replay.url, api_key="test",
                                 max_retries=0) as other:
            message = other.messages.create(model=model, max_tokens=9, messages=MESSAGES)
            with other.messages.stream(model=model, max_tokens=9,
                                       messages=MESSAGES) as events:
                final = events.get_final_message()
    # its own endpoint: the recorded body, byte for byte
    assert again.model_dump() == recorded.model_dump()
    assert text == "Recorded, not streamed."
    assert message.content[0].text == final.content[0].text == "Recorded, not streamed."  # type: ignore[union-attr]
    assert (message.usage.input_tokens, message.usage.output_tokens) == (4, 3)


@pytest.mark.parametrize("stream", [True, False])
def test_a_recorded_gemini_and_bedrock_body_is_served_back(
    upstream: EmulatorThread, proxy: RecorderThread, stream: bool,
) -> None:
    upstream.queue(reply("From Gemini."), reply("From Bedrock."))
    with genai.Client(api_key="SECRET", http_options={"base_url": proxy.url}) as client:
        client.models.generate_content(model="gemini-3-pro", contents="hi")
    bedrock = boto3.client("bedrock-runtime", endpoint_url=proxy.url, region_name="us-east-1",
                           aws_access_key_id="test", aws_secret_access_key="test")
    try:
        bedrock.converse(modelId="claude-x", messages=[{"role": "user",
                                                        "content": [{"text": "hi"}]}])
    finally:
        bedrock.close()
    assert proxy.wait(2)
    root = proxy.saved[0].parent.parent
    ids = [capture_id(path, root) for path in proxy.saved]
    assert ids == ["gemini__gemini-3-pro-001", "bedrock-converse__claude-x-001"]
    with EmulatorThread([root]) as replay, genai.Client(
            api_key="test", http_options={"base_url": replay.url}) as client:
        for model, text in zip(ids, ["From Gemini.", "From Bedrock."], strict=True):
            if stream:
                chunks = list(client.models.generate_content_stream(model=model,
                                                                    contents="hi"))
                got = "".join(chunk.text or "" for chunk in chunks)
            else:
                got = client.models.generate_content(model=model, contents="hi").text or ""
            assert got == text


def test_a_very_long_model_name_never_breaks_the_reply(upstream: EmulatorThread,
                                                       proxy: RecorderThread) -> None:
    model = "org/" + "a-very-long-fine-tune-name-" * 40  # (over 1,000 characters)
    upstream.queue(reply("Streamed."), reply("Not streamed."))
    with openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="test", max_retries=0) as client:
        streamed = client.chat.completions.create(model=model, messages=MESSAGES, stream=True)
        text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed
                       if chunk.choices)
        plain = client.chat.completions.create(model=model, messages=MESSAGES)
    assert text == "Streamed."
    assert plain.choices[0].message.content == "Not streamed."
    assert proxy.wait(2)
    root = proxy.saved[0].parent.parent
    names = [path.name for path in root.rglob("*") if path.is_file()]
    assert len(names) == 3  # (a stream, its timing, a body)
    assert all(len(name.encode()) <= 255 for name in names)
    ids = [capture_id(path, root) for path in proxy.saved]
    assert len(set(ids)) == 2
    with EmulatorThread([root]) as replay, openai.OpenAI(
            base_url=f"{replay.url}/v1", api_key="test", max_retries=0) as client:
        again = [client.chat.completions.create(model=name, messages=MESSAGES)
                 for name in ids]
    assert [answer.choices[0].message.content for answer in again] == ["Streamed.",
                                                                      "Not streamed."]


# -- an upstream that compresses whatever it is asked ----------------------------------------


class Gzipping:
    """A server on loopback that answers every POST with ``body``, gzip-compressed (one
    flush per SSE event: each goes out as it is made), whatever ``Accept-Encoding`` says;
    it keeps what it was sent."""

    def __init__(self, body: bytes, coding: str = "gzip") -> None:
        self.body = body
        self.coding = coding
        self.seen: list[tuple[dict[str, str], bytes]] = []
        app = Starlette(routes=[Route("/{path:path}", self._answer, methods=["POST"])])
        self._sock = bind("127.0.0.1", 0)
        self.url = url_of(self._sock)
        self._server = _Server(app)
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._sock]}, daemon=True)
        self._thread.start()

    def compressed(self) -> list[bytes]:
        packer = zlib.compressobj(wbits=31 if self.coding == "gzip" else 15)
        events = [event + b"\n\n" for event in self.body.split(b"\n\n") if event]
        pieces = [packer.compress(event) + packer.flush(zlib.Z_SYNC_FLUSH) for event in events]
        return [*pieces, packer.flush()]

    async def _answer(self, request: Request) -> Response:
        self.seen.append((dict(request.headers), await request.body()))

        async def pieces() -> AsyncIterator[bytes]:
            for piece in self.compressed():
                yield piece

        return StreamingResponse(pieces(), media_type="text/event-stream",
                                 headers={"content-encoding": self.coding})

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()


@pytest.fixture(params=["gzip", "deflate"])
def gzipping(request: pytest.FixtureRequest) -> Iterator[Gzipping]:
    server = Gzipping(capture(OPENAI).path.read_bytes(), request.param)
    try:
        yield server
    finally:
        server.stop()


def test_a_compressed_reply_keeps_its_content_encoding_and_is_recorded_decoded(
    gzipping: Gzipping, tmp_path: Path,
) -> None:
    original = capture(OPENAI).path.read_bytes()
    with RecorderThread(gzipping.url, tmp_path) as proxy:
        with openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="test",
                           max_retries=0) as client:
            stream = client.chat.completions.create(model="gpt-4o", messages=MESSAGES,
                                                    stream=True)
            text = "".join(chunk.choices[0].delta.content or "" for chunk in stream
                           if chunk.choices)
        with httpx.Client(timeout=10) as http, http.stream(
                "POST", f"{proxy.url}/v1/chat/completions",
                json={"model": "gpt-4o", "stream": True}) as answer:
            coding = answer.headers.get("content-encoding")
            raw = b"".join(answer.iter_raw())
        assert proxy.wait(2)
        saved = proxy.saved
    assert coding == gzipping.coding  # (the bytes passed on are the compressed ones)
    assert raw == b"".join(gzipping.compressed())
    assert text == llm_rx.reassemble(original).text
    assert gzipping.seen[0][0]["accept-encoding"] == "identity"
    for path in saved:
        assert path.read_bytes() == original  # (recorded as the provider's stream)
        timing = timing_of(path)
        assert timing is not None
        assert timing.split(original) is not None  # (read sizes of the decoded bytes)


def test_a_compressed_request_keeps_its_content_encoding(gzipping: Gzipping,
                                                         tmp_path: Path) -> None:
    body = b'{"model": "gpt-4o", "stream": true, "messages": []}'
    with RecorderThread(gzipping.url, tmp_path) as proxy:
        answer = httpx.post(f"{proxy.url}/v1/chat/completions", timeout=10,
                            content=gzip.compress(body),
                            headers={"content-encoding": "gzip",
                                     "content-type": "application/json"})
        assert answer.status_code == 200
        assert proxy.wait(1)
        (saved,) = proxy.saved
    headers, sent = gzipping.seen[0]
    assert headers.get("content-encoding") == "gzip"  # (the body went on compressed)
    assert gzip.decompress(sent) == body
    assert saved.name == "gpt-4o-001.sse"  # (the model read from the decoded body)


def test_a_recorded_ollama_body_answers_its_own_path_only(
    llm_rx_server: EmulatorThread,
) -> None:
    # (a real /api/generate body: verbatim to /api/generate, refused on /api/chat as a
    # recorded generate stream is; another provider's endpoint translates it)
    path = HERE / "ollama/generate-gemma3.nonstream.json"
    model = "ollama__generate-gemma3"
    assert model in llm_rx_server.captures
    with httpx.Client(base_url=llm_rx_server.url, timeout=10) as http:
        same = http.post("/api/generate", json={"model": model, "stream": False})
    assert same.content == path.read_bytes()
    client = ollama.Client(host=llm_rx_server.url)
    try:
        generated = client.generate(model=model, prompt="hi")
        for stream in (False, True):
            with pytest.raises(ollama.ResponseError) as refused:
                list(client.chat(model=model, messages=MESSAGES, stream=stream))
            assert refused.value.status_code == 400
    finally:
        client._client.close()
    assert generated.response.startswith("Hello there!")
    with openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test",
                       max_retries=0) as other:
        chunks = other.chat.completions.create(model=model, messages=MESSAGES, stream=True)
        text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks
                       if chunk.choices)
    assert text == generated.response
