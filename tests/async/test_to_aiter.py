"""to_aiter: any observable as an async iterator; .run() inside a running loop; a loop's
scheduler from outside it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import openai
import pytest
from reactivex import operators as ops
from reactivex.scheduler import ThreadPoolScheduler
from reactivex.scheduler.eventloop import AsyncIOScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError
from llm_rx.events import Event, TextDelta
from llm_rx.serve import EmulatorThread

from ..captures import capture
from ..loopback import WAIT, serving

TEXT = capture("openai/chat-gpt41-nano-text.sse").data
FIRST = b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
MORE = b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
DONE = b"data: [DONE]\n\n"


def _kinds(events: list[Any]) -> list[tuple[Any, ...]]:
    return [(type(e), *e) for e in events]


class Counted:
    """An async byte source that counts its reads."""

    def __init__(self, frames: int, end: bytes = DONE) -> None:
        self.reads = 0
        self._frames = frames
        self._end = end

    async def chunks(self) -> AsyncIterator[bytes]:
        self.reads += 1
        yield FIRST
        for _ in range(self._frames):
            self.reads += 1
            yield MORE
        yield self._end


def test_to_aiter_gives_the_events_from_bytes_gives() -> None:
    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(TEXT), 101):
            yield TEXT[start:start + 101]

    async def main() -> list[Event]:
        return [e async for e in llm_rx.to_aiter(llm_rx.from_async_bytes(pieces()))]

    expected: list[Event] = []
    llm_rx.from_bytes(TEXT).subscribe(expected.append, lambda e: None)
    assert _kinds(asyncio.run(main())) == _kinds(expected)


def test_to_aiter_break_disposes_the_reading() -> None:
    source = Counted(1000)

    async def main() -> tuple[int, int]:
        seen = 0
        async for _ in llm_rx.to_aiter(llm_rx.from_async_bytes(source.chunks()), buffer=4):
            seen += 1
            if seen == 10:
                break
        at_break = source.reads
        for _ in range(20):
            await asyncio.sleep(0)
        return at_break, source.reads

    at_break, later = asyncio.run(main())
    assert at_break == later < 20


def test_to_aiter_a_slow_consumer_holds_an_async_reading_back() -> None:
    source = Counted(1000)
    leads: list[int] = []

    async def main() -> int:
        seen = 0
        async for _ in llm_rx.to_aiter(llm_rx.from_async_bytes(source.chunks()), buffer=8):
            seen += 1
            for _ in range(5):  # (a slow consumer: the reading task gets every chance to run)
                await asyncio.sleep(0)
            leads.append(source.reads - seen)
        return seen

    assert asyncio.run(main()) > 1001  # (1001 deltas, and the message's own events)
    assert max(leads) <= 8 + 2


def test_to_aiter_a_producer_on_another_thread_waits_for_room() -> None:
    reads = 0
    taken = 0
    leads: list[int] = []
    lock = threading.Lock()

    def pieces() -> Iterator[bytes]:
        nonlocal reads
        yield FIRST
        for _ in range(500):
            with lock:
                reads += 1
                leads.append(reads - taken)
            yield MORE
        yield DONE

    async def main() -> int:
        nonlocal taken
        events = llm_rx.from_bytes(pieces(), "openai-chat")
        async for _ in llm_rx.to_aiter(events, buffer=4, scheduler=ThreadPoolScheduler(1)):
            with lock:
                taken += 1
            await asyncio.sleep(0)
        return taken

    assert asyncio.run(main()) > 501
    assert max(leads) <= 4 + 3


def test_to_aiter_an_error_raises_after_the_items_before_it() -> None:
    source = Counted(2, end=b"")

    async def main() -> tuple[list[str], BaseException | None]:
        texts: list[str] = []
        try:
            async for text in llm_rx.to_aiter(
                llm_rx.from_async_bytes(source.chunks(), "openai-chat").pipe(lxo.text_only())
            ):
                texts.append(text)
        except IncompleteStreamError as error:
            return texts, error
        return texts, None

    texts, error = asyncio.run(main())
    assert texts == ["Hi", "x", "x"]
    assert isinstance(error, IncompleteStreamError)


def test_to_aiter_of_a_sync_source_and_a_timed_operator_on_the_loop() -> None:
    async def main() -> list[str]:
        texts = llm_rx.from_bytes(TEXT).pipe(lxo.text_only(), ops.buffer_with_count(1000))
        return ["".join(batch) async for batch in llm_rx.to_aiter(texts)]

    whole = llm_rx.reassemble(TEXT).content[0]
    assert asyncio.run(main()) == [getattr(whole, "text", None)]


def test_to_aiter_refuses_a_buffer_below_one() -> None:
    with pytest.raises(ValueError):
        llm_rx.to_aiter(llm_rx.from_bytes(TEXT), buffer=0)


# -- .run() inside a running loop: a RuntimeError at once, never a hang ----------------------


def _in_a_loop(body: Any) -> BaseException | None:
    """Run ``body`` (a coroutine function) with asyncio.run in a thread; what it raised, or
    the hang it hit (a thread still blocked after WAIT seconds)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            asyncio.run(body())
        except BaseException as error:  # noqa: BLE001 - reported to the test
            outcome.append(error)
        else:
            outcome.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(WAIT)
    assert outcome, ".run() inside the running loop hung"
    return outcome[0]


def _says_what_to_do(error: BaseException | None) -> None:
    assert isinstance(error, RuntimeError)
    assert "await" in str(error)
    assert "to_aiter" in str(error)


def test_run_inside_a_loop_on_from_async_bytes_raises_at_once() -> None:
    async def body() -> None:
        llm_rx.from_async_bytes(Counted(2).chunks()).pipe(lxo.to_response()).run()

    _says_what_to_do(_in_a_loop(body))


def test_run_inside_a_loop_on_an_async_httpx_response_raises_at_once() -> None:
    with serving(TEXT) as url:
        async def body() -> None:
            async with httpx.AsyncClient() as client, client.stream("POST", url) as response:
                llm_rx.from_httpx(response).pipe(lxo.to_response()).run()

        _says_what_to_do(_in_a_loop(body))


def test_run_inside_a_loop_on_an_async_sdk_stream_raises_at_once(
    llm_rx_server: EmulatorThread,
) -> None:
    async def body() -> None:
        client = openai.AsyncOpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test")
        stream = await client.chat.completions.create(
            model="openai__chat-text-basic", messages=[], stream=True
        )
        try:
            llm_rx.from_sdk(stream).run()
        finally:
            await stream.close()
            await client.close()

    _says_what_to_do(_in_a_loop(body))


def test_await_inside_a_loop_still_works_where_run_is_refused() -> None:
    async def main() -> Any:
        return await llm_rx.from_async_bytes(Counted(2).chunks()).pipe(lxo.to_response())

    assert asyncio.run(main()).complete


# -- RxPY's AsyncIOScheduler, subscribing from outside the loop -------------------------------


def _loop_in_a_thread() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    return loop, thread


def _stop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    loop.call_soon_threadsafe(loop.stop)
    thread.join(WAIT)
    loop.close()


def test_an_async_source_under_asyncio_scheduler_from_another_thread() -> None:
    loop, thread = _loop_in_a_thread()
    try:
        done = threading.Event()
        texts: list[str] = []
        errors: list[Exception] = []
        llm_rx.from_async_bytes(Counted(3).chunks()).pipe(lxo.text_only()).subscribe(
            texts.append, errors.append, done.set, scheduler=AsyncIOScheduler(loop)
        )
        assert done.wait(WAIT)
        assert (texts, errors) == (["Hi", "x", "x", "x"], [])
    finally:
        _stop(loop, thread)


def test_an_async_httpx_response_under_asyncio_scheduler_from_another_thread() -> None:
    loop, thread = _loop_in_a_thread()
    client = httpx.AsyncClient()
    try:
        with serving(TEXT) as url:
            def open_reply() -> Any:  # (a factory: the coroutine runs on the loop)
                return client.send(client.build_request("POST", url), stream=True)

            response = llm_rx.from_httpx(open_reply).pipe(lxo.to_response()).run(
                scheduler=AsyncIOScheduler(loop)
            )
        assert response.complete
        assert response.content == llm_rx.reassemble(TEXT).content
    finally:
        asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(WAIT)
        _stop(loop, thread)


def test_run_of_an_async_source_outside_any_loop_says_what_to_do() -> None:
    with pytest.raises(RuntimeError, match="AsyncIOScheduler"):
        llm_rx.from_async_bytes(Counted(1).chunks()).run()


def test_dispose_from_another_thread_cancels_the_reading_on_its_loop() -> None:
    loop, thread = _loop_in_a_thread()
    try:
        gate = asyncio.Event()
        closed = threading.Event()

        async def held() -> AsyncIterator[bytes]:
            try:
                yield FIRST
                await gate.wait()
                yield DONE
            finally:
                closed.set()

        first = threading.Event()
        seen: list[Event] = []

        def on_next(event: Event) -> None:
            seen.append(event)
            if isinstance(event, TextDelta):
                first.set()

        subscription = llm_rx.from_async_bytes(held(), "openai-chat").subscribe(
            on_next, lambda e: None, scheduler=AsyncIOScheduler(loop)
        )
        assert first.wait(WAIT)
        subscription.dispose()
        assert closed.wait(WAIT)
    finally:
        _stop(loop, thread)
