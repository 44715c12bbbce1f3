"""A whole body where a stream was expected: a provider's non-stream reply, or its HTTP error
body. Naming the provider never does worse than sniffing, and an error body is the
provider's `ProviderError`, as `from_native` gives it, wherever it arrives and however it
was cut."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

import llm_rx
from llm_rx import ProviderError
from llm_rx import operators as lxo
from llm_rx.wire import PROVIDERS
from tests.captures import HERE
from tests.loopback import server

NONSTREAM = sorted(
    path for path in HERE.glob("*/*.nonstream.json") if not path.name.startswith("error-")
)
# Which provider names each host's non-stream body (the id its own decoder has).
_NAMED = {
    "anthropic": "anthropic", "bedrock": "bedrock-converse", "gemini": "gemini",
    "ollama": "ollama",
}


def _named(path: Any) -> str:
    body = path.read_bytes()
    provider = llm_rx.reassemble(body).provider
    if provider == "openai-responses":  # (a host's OpenAI-compatible endpoint: Bedrock mantle)
        return provider
    return _NAMED.get(path.parent.name, provider)


def _pieces(body: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, rng.randint(1, 12))))
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


@pytest.mark.parametrize("path", NONSTREAM, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_nonstream_body_named_by_its_provider_reads_as_sniffed(path: Any) -> None:
    body = path.read_bytes()
    sniffed = llm_rx.reassemble(body)
    provider = _named(path)
    assert sniffed.provider == provider
    for seed in range(3):
        reads = _pieces(body, seed)
        assert llm_rx.reassemble(reads, provider) == sniffed
        named = llm_rx.from_bytes(reads, provider).pipe(lxo.to_response()).run()
        assert named == sniffed


# -- error bodies ------------------------------------------------------------------------------

_GEMINI = {"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).",
                     "status": "RESOURCE_EXHAUSTED"}}
_GROQ = {"error": {"message": "Tool call validation failed: parameters did not match schema",
                   "type": "invalid_request_error", "code": "tool_use_failed"}}
_OPENROUTER = {"error": {"message": "No endpoints found that support tool use.", "code": 404},
               "user_id": "user_2x"}
_OPENAI = {"error": {"message": "Incorrect API key provided: sk-...", "type":
                     "invalid_request_error", "param": None, "code": "invalid_api_key"}}
_ANTHROPIC = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
SHAPES = {"gemini": _GEMINI, "groq": _GROQ, "openrouter": _OPENROUTER, "openai": _OPENAI,
          "anthropic": _ANTHROPIC}


def _bodies() -> list[tuple[str, bytes]]:
    out = []
    for host, value in SHAPES.items():
        out.append((f"{host}-compact", orjson.dumps(value)))
        out.append((f"{host}-compact-newline", orjson.dumps(value) + b"\n"))
        out.append((f"{host}-pretty", orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"))
    return out


BODIES = _bodies()
NAMES: list[str | None] = [None, *sorted(PROVIDERS)]


def _same_error(error: BaseException, body: bytes) -> None:
    with pytest.raises(ProviderError) as native:
        llm_rx.from_native(body)
    expected = native.value
    assert type(error) is ProviderError, repr(error)
    assert (error.message, error.error_type, error.code, error.retryable,
            error.retry_after) == (expected.message, expected.error_type, expected.code,
                                   expected.retryable, expected.retry_after)
    assert error.raw is not None
    assert error.raw.strip() == body.decode().strip()


def _raised(call: Any) -> BaseException:
    try:
        call()
    except llm_rx.LlmRxError as error:  # (what each entry point raised)
        return error
    raise AssertionError("no error")


@pytest.mark.parametrize("provider", NAMES)
@pytest.mark.parametrize(("shape", "body"), BODIES, ids=[name for name, _ in BODIES])
def test_an_error_body_is_the_providers_error(shape: str, body: bytes, provider: Any) -> None:
    for seed in range(3):
        reads = _pieces(body, seed) if seed else [body]
        _same_error(_raised(lambda r=reads: llm_rx.reassemble(r, provider)), body)
        _same_error(_raised(
            lambda r=reads: llm_rx.from_bytes(r, provider).pipe(lxo.to_response()).run()
        ), body)


@pytest.mark.parametrize("provider", [None, "openai-chat", "gemini", "ollama", "bedrock-converse"])
@pytest.mark.parametrize(("shape", "body"), BODIES[::3] + BODIES[2::3],
                         ids=[name for name, _ in BODIES[::3] + BODIES[2::3]])
def test_an_error_body_read_async_is_the_providers_error(
    shape: str, body: bytes, provider: Any
) -> None:
    async def reads() -> AsyncIterator[bytes]:
        for piece in _pieces(body, 7):
            yield piece

    async def main() -> None:
        await llm_rx.from_async_bytes(reads(), provider).pipe(lxo.to_response())

    _same_error(_raised(lambda: asyncio.run(main())), body)


@pytest.mark.parametrize("content_type", ["text/event-stream", "application/x-ndjson",
                                          "application/vnd.amazon.eventstream"])
@pytest.mark.parametrize(("shape", "body"), BODIES[2::3], ids=[name for name, _ in BODIES[2::3]])
def test_an_error_body_from_httpx_is_the_providers_error(
    shape: str, body: bytes, content_type: str
) -> None:
    # (status 200 and a stream's content type: a proxy that says it streams, then does not)
    with server(body, content_type, chunk=5) as running, httpx.Client() as client:
        request = client.build_request("POST", running.url + "/v1/chat/completions")
        response = client.send(request, stream=True)
        try:
            error = _raised(
                lambda: llm_rx.from_httpx(response).pipe(lxo.to_response()).run()
            )
        finally:
            response.close()
    _same_error(error, body)


def test_an_ollama_error_line_stays_an_in_band_error() -> None:
    # (Ollama's own error line, a string: a stream's in-band error, read as the reply)
    response = llm_rx.reassemble(b'{"error":"model \\"nope\\" not found"}\n', "ollama")
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"


# -- bodies that are no reply --------------------------------------------------------------


@pytest.mark.parametrize("body", [
    b'{"object":"chat.completion","choices":[]}',
    b'{"object":"chat.completion","id":"x","model":"m"}',
    b'data: {"object":"chat.completion.chunk","choices":[]}\n\ndata: [DONE]\n\n',
])
def test_a_reply_without_a_choice_is_not_complete(body: bytes) -> None:
    response = llm_rx.reassemble(body)
    assert not response.complete
    assert response.error is not None
    assert "before any choice" in response.error.message


def test_a_text_file_with_a_bracket_is_no_gemini_array() -> None:
    toml = b'[build-system]\nrequires = ["setuptools>=68"]\n'
    for reads in ([toml], _pieces(toml, 1), [toml[:1], toml[1:]]):
        with pytest.raises(llm_rx.WireFormatError, match="could not tell which provider"):
            llm_rx.reassemble(reads)
    assert llm_rx.wire.sniff(b"[build-system]\n") is None
    assert llm_rx.wire.sniff(b'[{"candidates": []}\n') == "gemini"


@pytest.mark.parametrize(
    "path", sorted(HERE.glob("*/error-*.nonstream.json")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
@pytest.mark.parametrize("provider", NAMES)
def test_a_recorded_error_body_is_the_providers_error(path: Any, provider: Any) -> None:
    body = path.read_bytes()
    for reads in ([body], _pieces(body, 3)):
        _same_error(_raised(lambda r=reads: llm_rx.reassemble(r, provider)), body)


def test_a_recorded_gemini_429_body_says_when_to_retry() -> None:
    body = (HERE / "gemini" / "error-429-retry-info.nonstream.json").read_bytes()
    error = _raised(lambda: llm_rx.reassemble(body))
    assert isinstance(error, ProviderError)
    assert error.retryable
    assert error.retry_after == 34.4
