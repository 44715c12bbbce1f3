"""The sync and the async reading loops give the same events (kinds compared), the same error
and the same ``Response``, for every capture and every recorded non-stream body, whole and in
random pieces: both drive one state machine (``sources/_body.py``), and this holds them to
it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import reactivex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import LlmRxError
from llm_rx.sources._engine import decode_all, decode_all_async, new_decoder

from ..captures import CAPTURES, HERE
from ..helpers import kinds, reads_of, split_at


def _bodies() -> list[tuple[str, bytes, str | None]]:
    """(name, body, provider) for every capture, and every non-stream body both named by the
    provider of the stream beside it and told from its bytes."""
    out: list[tuple[str, bytes, str | None]] = [(c.name, c.data, c.provider) for c in CAPTURES]
    providers = {str(c.nonstream): c.provider for c in CAPTURES if c.nonstream is not None}
    for path in sorted(HERE.rglob("*.nonstream.json")):
        name = str(path.relative_to(HERE))
        out.append((name, path.read_bytes(), None))
        if str(path) in providers:
            out.append((f"{name} as {providers[str(path)]}", path.read_bytes(),
                        providers[str(path)]))
    return out


BODIES = _bodies()


def _error(error: Exception) -> tuple[Any, ...]:
    return (type(error).__name__, getattr(error, "message", str(error)),
            getattr(error, "raw", None))


def _sync(chunks: list[bytes], provider: str | None) -> tuple[Any, ...]:
    events: list[Any] = []
    try:
        decode_all(new_decoder(provider), chunks, events.extend)
    except LlmRxError as error:
        decoded: tuple[Any, ...] = (kinds(events), *_error(error))
    else:
        decoded = (kinds(events),)
    values: list[Any] = []
    errors: list[Exception] = []
    llm_rx.from_bytes(chunks, provider).pipe(lxo.to_response()).subscribe(
        values.append, errors.append)
    reply = _error(errors[0]) if errors else values[0].model_dump(mode="json")
    return decoded, reply


async def _pieces(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def _async_both(chunks: list[bytes], provider: str | None) -> tuple[Any, ...]:
    events: list[Any] = []
    try:
        await decode_all_async(new_decoder(provider), _pieces(chunks), events.extend,
                               lambda: False)
    except LlmRxError as error:
        decoded: tuple[Any, ...] = (kinds(events), *_error(error))
    else:
        decoded = (kinds(events),)
    source = llm_rx.from_async_bytes(_pieces(chunks), provider)
    try:
        response = await source.pipe(lxo.to_response())
    except Exception as error:  # noqa: BLE001 - compared
        return decoded, _error(error)
    return decoded, response.model_dump(mode="json")


def _async(chunks: list[bytes], provider: str | None) -> tuple[Any, ...]:
    return asyncio.run(_async_both(chunks, provider))


@pytest.mark.parametrize(("name", "body", "provider"), BODIES, ids=[b[0] for b in BODIES])
@pytest.mark.parametrize("size", [0, 97], ids=["whole", "97-byte-reads"])
def test_sync_and_async_engines_read_every_body_alike(
    name: str, body: bytes, provider: str | None, size: int
) -> None:
    # bug class: the sync and async loops written twice and drifted apart (a non-stream body
    # read as the reply by one and refused by the other; settling, 64 KiB reads, the head
    # kept only in one)
    chunks = reads_of(body, size) if size else [body]
    assert _async(chunks, provider) == _sync(chunks, provider)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_sync_and_async_engines_agree_in_random_pieces(data: st.DataObject) -> None:
    name, body, provider = data.draw(st.sampled_from(BODIES), label="body")
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=12), label="cuts")
    chunks = split_at(body, cuts)
    assert _async(chunks, provider) == _sync(chunks, provider), name


def test_nonstream_body_reads_as_the_reply_through_every_source() -> None:
    # bug class: a non-stream JSON body read as the reply by reassemble/from_bytes but ending
    # in NonStreamBodyError through from_async_bytes (the async loop kept no head)
    path: Path = HERE / "openai" / "chat-text-basic.nonstream.json"
    body = path.read_bytes()
    expected = llm_rx.reassemble(body).model_dump(mode="json")

    async def read() -> Any:
        return await llm_rx.from_async_bytes(_pieces(reads_of(body, 50))).pipe(
            lxo.to_response())

    assert asyncio.run(read()).model_dump(mode="json") == expected
    assert llm_rx.from_bytes(reads_of(body, 50)).pipe(lxo.to_response()).run().model_dump(
        mode="json") == expected


def test_a_huge_read_is_decoded_in_pieces_by_both_loops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bug class: a whole body in one read decoded as 64 KiB reads by the sync loop only
    from llm_rx.wire.sse import SSEDecoder

    sizes: list[int] = []
    original: Callable[..., Any] = SSEDecoder.decode_payloads

    def counted(self: SSEDecoder, chunk: bytes) -> Any:
        sizes.append(len(chunk))
        return original(self, chunk)

    monkeypatch.setattr(SSEDecoder, "decode_payloads", counted)
    body = next(c for c in CAPTURES if c.name == "openai/chat-text-basic.sse").data
    body = body.replace(b"data: [DONE]", b": " + b"x" * (200 * 1024) + b"\n\ndata: [DONE]")
    _, reply = _async([body], "openai-chat")
    assert max(sizes) == 64 * 1024
    assert reply == llm_rx.reassemble(body, "openai-chat").model_dump(mode="json")


def _pushed(chunks: list[bytes], provider: str | None) -> tuple[Any, ...]:
    """The events ``decode()`` gives for the chunks pushed through an observable."""
    events: list[Any] = []
    errors: list[Exception] = []
    reactivex.from_iterable(chunks).pipe(lxo.decode(provider)).subscribe(
        events.append, errors.append)
    return (kinds(events), *_error(errors[0])) if errors else (kinds(events),)


@pytest.mark.parametrize(("name", "body", "provider"), BODIES, ids=[b[0] for b in BODIES])
def test_decode_operator_reads_every_body_as_the_sources_do(
    name: str, body: bytes, provider: str | None
) -> None:
    # bug class: a third reading loop (the push-driven decode()) with its own idea of a
    # body: a non-stream reply refused there, read as the reply by the sources
    chunks = reads_of(body, 97)
    read = _sync(chunks, provider)[0]
    stops = [n for n, kind in enumerate(read[0]) if kind[0] == "MessageStop"]
    if len(stops) > 1:  # (a body of several replies: one decode() subscription, the first)
        read = (read[0][: stops[0] + 1],)
    assert _pushed(chunks, provider) == read
