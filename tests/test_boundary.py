"""The error boundary: whatever a frame, an event or a consumer raises, a pipeline ends with a
typed error (or a ``Response`` that carries one) and never hangs.

The decoders check wire values where they enter (``tests/test_malformed.py`` pins each class
found); these tests hold the boundary behind those checks: a failure that no check foresaw
(simulated by making a decoder or the builder raise what a bug would) still arrives typed.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import LlmRxError, WireFormatError
from llm_rx.events import BlockStart, Event, MessageStart, TextDelta
from llm_rx.response import Response
from llm_rx.wire.anthropic import AnthropicDecoder
from llm_rx.wire.openai_chat import OpenAIChatDecoder

from .captures import capture
from .helpers import CountedReads, reads_of

ANTHROPIC = capture("anthropic/thinking-signature.sse").data
OPENAI = capture("openai/chat-gpt41-nano-text.sse").data


def bounded(run: Callable[[], Any], seconds: float = 20.0) -> Any:
    """``run()``'s result (or the exception it raised) — a failure if it does not end in
    ``seconds``: the hang the boundary prevents."""
    result: list[Any] = []

    def target() -> None:
        try:
            result.append(run())
        except BaseException as error:  # noqa: BLE001 - reported to the test
            result.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the pipeline hung"
    return result[0]


@pytest.fixture
def unforeseen(monkeypatch: pytest.MonkeyPatch) -> type[Exception]:
    """Make the Anthropic decoder fail on its first text delta the way a bug would (a
    ``RecursionError`` is not one of the shapes the decoders expect)."""
    original = AnthropicDecoder._frame

    def failing(self: AnthropicDecoder, frame: dict[str, Any], *args: Any) -> None:
        if frame.get("type") == "content_block_delta":
            raise RecursionError("maximum recursion depth exceeded")
        original(self, frame, *args)

    monkeypatch.setattr(AnthropicDecoder, "_frame", failing)
    return RecursionError


def test_an_unforeseen_failure_in_a_frame_is_a_wire_format_error_with_the_frame(
    unforeseen: type[Exception],
) -> None:
    # bug class: only the exception types a decoder expected were turned into typed errors
    response = llm_rx.reassemble(ANTHROPIC)
    assert response.error is not None
    assert response.error.kind == "wire_format"
    assert response.error.raw is not None
    assert '"content_block_delta"' in response.error.raw
    assert not response.complete
    assert response.id is not None  # what arrived before the frame is kept


@pytest.mark.parametrize("size", [1 << 20, 97, 7])
def test_an_unforeseen_failure_is_the_same_whatever_the_reads(
    unforeseen: type[Exception], size: int
) -> None:
    whole = llm_rx.reassemble(ANTHROPIC)
    assert llm_rx.reassemble(reads_of(ANTHROPIC, size)).model_dump() == whole.model_dump()


def test_a_decoder_that_raises_outside_any_frame_still_gives_a_typed_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bug class: a failure in a decoder's own decode() (no frame handler to catch it) escapes
    def broken(self: OpenAIChatDecoder, chunk: bytes) -> list[Event]:
        raise AttributeError("'NoneType' object has no attribute 'get'")

    monkeypatch.setattr(OpenAIChatDecoder, "decode", broken)
    with pytest.raises(WireFormatError) as caught:
        llm_rx.reassemble(OPENAI, "openai-chat")
    assert caught.value.raw is not None  # the chunk it failed on
    errors: list[Exception] = []
    llm_rx.from_bytes(OPENAI, "openai-chat").subscribe(on_error=errors.append)
    assert [type(error) for error in errors] == [WireFormatError]


def test_events_that_do_not_fold_are_a_wire_format_error_not_a_type_error() -> None:
    # bug class: a value of the wrong type reaching the builder escaped as TypeError from
    # reassemble(), and from to_response() it hung .run() (the source lost the exception)
    bad: list[Event] = [
        MessageStart("openai-chat", "m", "id"),
        BlockStart(0, "text"),
        TextDelta(0, 5),  # type: ignore[arg-type]
    ]
    errors: list[Exception] = []
    subject: Subject[Event] = Subject()
    subject.pipe(lxo.to_response()).subscribe(on_error=errors.append)
    for event in bad:
        subject.on_next(event)
    subject.on_completed()
    (error,) = errors
    assert isinstance(error, WireFormatError)
    assert "could not be folded" in error.message


BODIES = {
    "anthropic-text-int": b'event: content_block_delta\ndata: {"type":"content_block_delta",'
    b'"index":0,"delta":{"type":"text_delta","text":5}}\n\n',
    "openai-index-str-and-int": b'data: {"choices":[{"index":"a","delta":{"content":"x"}},'
    b'{"index":0,"delta":{"content":"y"}}]}\n\n',
}


def _ends_typed(result: object) -> None:
    assert isinstance(result, (Response, LlmRxError)), repr(result)
    if isinstance(result, Response):
        assert not result.complete


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_a_malformed_body_never_hangs_run(body: bytes) -> None:
    _ends_typed(bounded(lambda: llm_rx.from_bytes(body).pipe(lxo.to_response()).run()))
    _ends_typed(bounded(lambda: llm_rx.from_bytes(body).pipe(lxo.accumulate(),
                                                             ops.last()).run().response))
    _ends_typed(bounded(lambda: llm_rx.from_bytes(body).pipe(
        ops.map(lambda event: event), lxo.to_response()).run()))


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_a_malformed_body_never_hangs_await(body: bytes) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield body

    async def main() -> object:
        try:
            response: Response = await llm_rx.from_async_bytes(chunks()).pipe(
                lxo.to_response())
        except LlmRxError as error:
            return error
        return response

    _ends_typed(bounded(lambda: asyncio.run(asyncio.wait_for(main(), 15))))


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_a_malformed_body_never_hangs_the_cli(body: bytes, tmp_path: Path) -> None:
    path = tmp_path / "reply.sse"
    path.write_bytes(body)
    for command in (["reassemble"], ["replay", "--delay", "0"], ["events"]):
        done = subprocess.run(
            [sys.executable, "-m", "llm_rx", *command, str(path)],
            capture_output=True, text=True, timeout=60, check=False,
        )
        assert done.returncode in (1, 2), (command, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr


def test_an_async_consumer_bug_reaches_on_error_and_stops_the_reading() -> None:
    # bug class: an exception in on_next killed the async reader's task with neither
    # on_error nor on_completed (the task's exception was never retrieved)
    reads = CountedReads(OPENAI, 64)

    async def chunks() -> AsyncIterator[bytes]:
        for read in reads:
            yield read

    async def main() -> list[Exception]:
        errors: list[Exception] = []
        done = asyncio.Event()

        def broken(_: Event) -> None:
            raise ZeroDivisionError("the consumer's own bug")

        def failed(error: Exception) -> None:
            errors.append(error)
            done.set()

        llm_rx.from_async_bytes(chunks()).subscribe(broken, failed, done.set)
        await asyncio.wait_for(done.wait(), 10)
        return errors

    (error,) = asyncio.run(main())
    assert isinstance(error, ZeroDivisionError)
    assert reads.pulled < len(reads.reads) // 2
