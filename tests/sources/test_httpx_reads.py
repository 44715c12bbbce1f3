"""from_httpx reads a body with no content encoding as it came (``iter_raw``): the shortcut
gives what the decoded reads (``iter_bytes``, ``fast_paths(False)``) give, on re-chunked,
cut and mutated bodies, sync and async, and a compressed body is still decoded."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx import operators as lxo
from llm_rx.speed import fast_paths

from ..captures import capture
from ..loopback import server

BODIES = [capture(name).data for name in (
    "openai/chat-gpt41-nano-text.sse", "anthropic/thinking-signature.sse",
    "ollama/chat-gemma3-text.ndjson",
)]


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as shared:  # (one client: making one costs ~0.1 s)
        yield shared


def _outcome(client: httpx.Client, url: str) -> tuple[Any, str | None]:
    """The reply's JSON (or the error's type) through from_httpx -> to_response()."""
    reply = client.send(client.build_request("POST", url), stream=True)
    try:
        response = llm_rx.from_httpx(reply).pipe(lxo.to_response()).run()
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return None, type(error).__name__
    finally:
        assert reply.is_closed
    return response.model_dump(), None


async def _async_outcomes(url: str) -> list[tuple[Any, str | None]]:
    """The same, async: with the shortcut, then without."""
    outcomes: list[tuple[Any, str | None]] = []
    async with httpx.AsyncClient(timeout=10) as client:
        for on in (True, False):
            with fast_paths(on):
                reply = await client.send(client.build_request("POST", url), stream=True)
                try:
                    response = await llm_rx.from_httpx(reply).pipe(lxo.to_response())
                    outcomes.append((response.model_dump(), None))
                except Exception as error:  # noqa: BLE001 - the outcome compared
                    outcomes.append((None, type(error).__name__))
                assert reply.is_closed
    return outcomes


def _both_ways(client: httpx.Client, url: str) -> tuple[Any, str | None]:
    fast = _outcome(client, url)
    with fast_paths(False):
        general = _outcome(client, url)
    assert fast == general
    assert asyncio.run(_async_outcomes(url)) == [fast, fast]
    return fast


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    body=st.sampled_from(BODIES),
    chunk=st.integers(13, 400),
    cut=st.none() | st.floats(0.0, 1.0),
    flip=st.none() | st.tuples(st.floats(0.0, 1.0), st.integers(1, 255)),
)
def test_raw_reads_give_what_decoded_reads_give(
    client: httpx.Client, body: bytes, chunk: int, cut: float | None,
    flip: tuple[float, int] | None,
) -> None:
    if flip is not None:  # a mutated byte
        at = int(flip[0] * (len(body) - 1))
        body = body[:at] + bytes([body[at] ^ flip[1]]) + body[at + 1 :]
    drop_after = None if cut is None else int(cut * len(body))
    with server(body, chunk=chunk, drop_after=drop_after) as running:
        _both_ways(client, running.url)


@pytest.mark.parametrize("encoding", ["gzip", "identity"])
def test_a_body_with_a_content_encoding_is_read_decoded(
    client: httpx.Client, encoding: str
) -> None:
    body = BODIES[1]
    sent = gzip.compress(body) if encoding == "gzip" else body
    with server(sent, chunk=50, headers={"Content-Encoding": encoding}) as running:
        outcome = _both_ways(client, running.url)
    assert outcome == (llm_rx.reassemble(body).model_dump(), None)
