"""Telling the provider from the bytes: every capture, keep-alive comments, bounded work, and
non-stream bodies told apart from streams."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import NonStreamBodyError, ProviderError, WireFormatError
from llm_rx.response import WITHOUT_NATIVE
from llm_rx.sources._engine import new_decoder
from llm_rx.wire import registry, sniffing
from llm_rx.wire.base import Decoder
from llm_rx.wire.nonstream import error_body
from llm_rx.wire.registry import SniffingDecoder, looks_nonstream, sniff

from .captures import CAPTURES, HERE, Capture, capture
from .helpers import decode_events, outcome, reads_of
from .streams import chat_chunk, sse

OPENAI = "openai/chat-text-basic.sse"
PING = b": ping\n\n"


@pytest.mark.parametrize("cap", CAPTURES, ids=lambda c: c.name)
def test_sniff_every_capture_names_its_provider(cap: Capture) -> None:
    if cap.name == "ollama/pull-progress.ndjson":
        pytest.skip("no reply at all: sniffed as Ollama, refused by its decoder")
    assert sniff(cap.data) == cap.provider
    assert looks_nonstream(cap.data) is None


@pytest.mark.parametrize("cap", CAPTURES, ids=lambda c: c.name)
def test_sniff_small_reads_decode_as_the_provider_given(cap: Capture) -> None:
    data = cap.data[:30_000]
    assert outcome(reads_of(data, 13)) == outcome([data], cap.provider)


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_sniff_100_kib_of_comments_before_the_first_frame(size: int) -> None:
    # bug class: keep-alive comments counted toward the sniff limit failed a valid stream
    data = capture(OPENAI).data
    comments = PING * (100 * 1024 // len(PING) + 1)
    if size == 1:
        comments = comments[: 20 * 1024]  # (a read per byte: the head is enough)
    body = comments + data
    assert outcome(reads_of(body, size)) == outcome([data], "openai-chat")
    assert llm_rx.reassemble(body).text == llm_rx.reassemble(data).text


def test_sniff_comments_with_crlf_and_a_bom() -> None:
    data = capture(OPENAI).data
    body = b"\xef\xbb\xbf" + b": keep-alive\r\n\r\n" * 5000 + data
    assert outcome(reads_of(body, 3)) == outcome([data], "openai-chat")


class _Work:
    """How many bytes the sniffing code looks at, summed over the whole body: the head
    handed to ``sniff``, each read the scanner is fed, each line it reads, and the held
    part of a line it joins when the line ends."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bytes = 0
        scanner = sniffing.HeadScanner
        for name in ("_skip_leading", "_lines", "_line_read", "_object_form"):
            self._count(monkeypatch, scanner, name)
        original = sniffing.sniff

        def counted_sniff(head: bytes) -> str | None:
            self.bytes += len(head)
            return original(head)

        monkeypatch.setattr(registry, "sniff", counted_sniff)

    def _count(self, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> None:
        original = getattr(owner, name)

        def counted(scanner: Any, data: bytes) -> Any:
            self.bytes += len(data)
            if name == "_lines" and (b"\n" in data or b"\r" in data):
                self.bytes += sum(map(len, scanner._line))  # (joined with the line's end)
            return original(scanner, data)

        monkeypatch.setattr(owner, name, counted)


@pytest.mark.parametrize(
    "head",
    [PING * 2000, b"data: {}\n\n" * 2000, b": ping\n" * 1000 + b'data: {"x": "' + b"y" * 30_000],
    ids=["comments", "unknown-frames", "one-long-line"],
)
def test_sniff_work_is_linear_in_the_input(monkeypatch: pytest.MonkeyPatch, head: bytes) -> None:
    # bug class: the whole head was joined and rescanned on every read (2,000 keep-alive
    # lines in one-byte reads took half a minute)
    work = _Work(monkeypatch)
    body = head + capture(OPENAI).data
    decoder = SniffingDecoder()
    for piece in reads_of(body, 1):
        decoder.decode(piece)
        if decoder.inner is not None:
            break
    assert decoder.inner is not None
    assert 0 < work.bytes <= 4 * len(body)


def test_sniff_limit_still_ends_a_body_of_no_known_stream() -> None:
    body = b"data: {}\n\n" * 10_000
    events, error = decode_events(reads_of(body, 1000))
    assert isinstance(error, WireFormatError)
    assert "could not tell" in error.message
    assert events == []


def test_sniff_only_comments_is_not_a_stream() -> None:
    _events, error = decode_events([PING * 10])
    assert isinstance(error, WireFormatError)


def test_sniff_a_line_is_read_once_whole() -> None:
    line = sse(chat_chunk({"content": "hi"}))
    assert sniff(line[:-3]) is None
    assert sniff(line[:-1]) == "openai-chat"


# -- non-stream bodies ----------------------------------------------------------------------

_NONSTREAM_BODIES: dict[str, dict[str, Any]] = {
    "openai-chat": {"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
                    "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "hi"}}]},
    "openai-completions": {"id": "cmpl-1", "object": "text_completion", "created": 1,
                           "model": "m", "choices": [{"index": 0, "text": "hi",
                                                      "finish_reason": "stop"}]},
    "anthropic": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                  "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"},
    "gemini": {"candidates": [{"content": {"parts": [{"text": "hi"}], "role": "model"},
                               "finishReason": "STOP"}], "modelVersion": "m"},
    "openai-responses": {"id": "resp_1", "object": "response", "status": "completed",
                         "output": []},
    "ollama": {"model": "m", "created_at": "t", "message": {"role": "assistant",
                                                             "content": "hi"}, "done": True},
    "cohere": {"id": "c-1", "finish_reason": "COMPLETE",
               "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}},
    "bedrock-converse": {"output": {"message": {"role": "assistant",
                                                "content": [{"text": "hi"}]}},
                         "stopReason": "end_turn", "usage": {"inputTokens": 1}},
}


@pytest.mark.parametrize("provider", sorted(_NONSTREAM_BODIES))
@pytest.mark.parametrize("pretty", [False, True], ids=["compact", "pretty"])
def test_sniff_nonstream_body_is_told_and_read_as_the_reply(provider: str, pretty: bool) -> None:
    # bug class: one non-stream JSON object was read as an Ollama stream
    option = orjson.OPT_INDENT_2 if pretty else 0
    body = orjson.dumps(_NONSTREAM_BODIES[provider], option=option)
    assert looks_nonstream(body) == provider
    expected = llm_rx.from_native(body).model_dump(exclude=WITHOUT_NATIVE)
    for reads in ([body], reads_of(body, 5)):
        decoder = new_decoder(None)

        def decode(reads: list[bytes] = reads, decoder: Decoder = decoder) -> None:
            for read in reads:
                decoder.decode(read)
            decoder.flush()

        with pytest.raises(NonStreamBodyError, match=f"non-stream {provider} ") as raised:
            decode()
        assert raised.value.provider == provider
        assert raised.value.raw is not None
        # (reassemble, the byte sources and the CLI read it as the reply it is)
        assert llm_rx.reassemble(reads).model_dump(exclude=WITHOUT_NATIVE) == expected
        assert llm_rx.from_bytes(reads).pipe(lxo.to_response()).run().model_dump(
            exclude=WITHOUT_NATIVE) == expected


@pytest.mark.parametrize("path", sorted(HERE.glob("*/*.nonstream.json")),
                         ids=lambda path: f"{path.parent.name}/{path.name}")
def test_sniff_recorded_nonstream_bodies_are_told_apart(path: Any) -> None:
    body = path.read_bytes()
    if error_body(orjson.loads(body)):  # an HTTP error body: the provider's error
        with pytest.raises(ProviderError):
            llm_rx.reassemble(body)
        return
    provider = looks_nonstream(body)
    assert provider is not None
    response = llm_rx.reassemble(body)
    assert response.provider == provider
    assert response.model_dump(exclude=WITHOUT_NATIVE) == llm_rx.from_native(body).model_dump(
        exclude=WITHOUT_NATIVE)


def test_sniff_ollama_one_line_stream_end_is_still_a_stream() -> None:
    # a stream's last line carries no content: alone, it is an empty reply, not a body
    line = orjson.dumps({"model": "m", "message": {"role": "assistant", "content": ""},
                         "done": True, "done_reason": "stop"}) + b"\n"
    assert looks_nonstream(line) is None
    assert sniff(line) == "ollama"
    assert llm_rx.reassemble(line).complete


def test_sniff_ollama_first_line_not_done_is_a_stream() -> None:
    first = orjson.dumps({"model": "m", "message": {"role": "assistant", "content": "hi"},
                          "done": False}) + b"\n"
    assert looks_nonstream(first) is None
    assert sniff(first) == "ollama"


def test_sniff_nonstream_with_the_provider_given() -> None:
    body = orjson.dumps(_NONSTREAM_BODIES["openai-chat"]) + b"\n"
    with pytest.raises(WireFormatError, match="non-stream openai-chat"):
        llm_rx.reassemble(body, "ollama")
