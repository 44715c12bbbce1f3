"""Wrong arguments are a TypeError at the call, saying what was expected; a consumer's
exception stops the reading, closes the source and reaches on_error."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

import llm_rx
from llm_rx.events import Event

from ..captures import capture

DATA = capture("openai/chat-gpt41-nano-text.sse").data


async def _agen() -> AsyncIterator[bytes]:
    yield DATA


def test_from_async_bytes_given_a_function_is_a_type_error_not_a_hang() -> None:
    with pytest.raises(TypeError, match="a function: pass what it returns"):
        llm_rx.from_async_bytes(_agen)  # type: ignore[arg-type]


def test_from_async_bytes_given_a_sync_iterable_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="use from_bytes"):
        llm_rx.from_async_bytes([DATA])  # type: ignore[arg-type]


@pytest.mark.parametrize(("chunks", "words"), [
    (["data: {}\n\n"], "not str"),
    ([{"choices": []}], "from_sdk"),
    (httpx.Response(200, content=DATA), "from_httpx"),
    (42, "not int"),
])
def test_from_bytes_refuses_what_is_no_bytes_at_the_call(chunks: Any, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        llm_rx.from_bytes(chunks)


def test_reassemble_refuses_parsed_chunks_at_the_call() -> None:
    with pytest.raises(TypeError, match="not dict"):
        llm_rx.reassemble([{"choices": []}])  # type: ignore[list-item]


def test_from_bytes_a_lazy_str_piece_is_a_type_error_saying_what_was_expected() -> None:
    errors: list[Exception] = []
    llm_rx.from_bytes(iter([DATA[:100], "text"])).subscribe(  # type: ignore[arg-type]
        on_error=errors.append
    )
    assert isinstance(errors[0], TypeError)
    assert "must give bytes, not str" in str(errors[0])


def test_from_bytes_an_on_next_that_raises_stops_and_closes_the_source() -> None:
    closed: list[bool] = []
    pulled = 0

    def chunks() -> Iterator[bytes]:
        nonlocal pulled
        try:
            for start in range(0, len(DATA), 200):
                pulled += 1
                yield DATA[start : start + 200]
        finally:
            closed.append(True)

    def on_next(event: Event) -> None:
        raise ValueError("consumer failed")

    errors: list[Exception] = []
    llm_rx.from_bytes(chunks()).subscribe(on_next, errors.append)
    assert [str(error) for error in errors] == ["consumer failed"]
    assert closed == [True]
    assert pulled == 2  # (the first frame ends in the second read)


def test_from_async_bytes_an_on_next_that_raises_stops_and_closes_the_source() -> None:
    closed: list[bool] = []

    async def chunks() -> AsyncIterator[bytes]:
        try:
            for start in range(0, len(DATA), 200):
                yield DATA[start : start + 200]
        finally:
            closed.append(True)

    async def main() -> list[Exception]:
        errors: list[Exception] = []
        ended = asyncio.Event()

        def on_error(error: Exception) -> None:
            errors.append(error)
            ended.set()

        def on_next(event: Event) -> None:
            raise ValueError("consumer failed")

        llm_rx.from_async_bytes(chunks()).subscribe(on_next, on_error)
        await asyncio.wait_for(ended.wait(), 10)
        return errors

    errors = asyncio.run(main())
    assert [str(error) for error in errors] == ["consumer failed"]
    assert closed == [True]
