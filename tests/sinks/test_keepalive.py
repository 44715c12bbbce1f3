"""Keep-alive comments on idle SSE responses (``sse_response``, ``redis_sse_response``): sent
only while nothing else is, skipped by every reader, never with an NDJSON target."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from reactivex.subject import Subject

import llm_rx
from llm_rx import sinks as lxs
from llm_rx.events import Event
from llm_rx.sinks._keepalive import KEEPALIVE, kept_alive
from tests.captures import capture
from tests.redis.helpers import events_of

THINKING = capture("openai/chat-text-basic.sse")
IDLE = 0.05  # seconds of silence before a keep-alive (the waits below end on events)


def test_kept_alive_only_between_silent_frames() -> None:
    async def run() -> list[bytes]:
        gate = asyncio.Event()

        async def frames() -> AsyncIterator[bytes]:
            yield b"a"
            await gate.wait()  # (silent until the keep-alive was seen)
            yield b"b"

        out: list[bytes] = []
        async for frame in kept_alive(frames(), IDLE):
            out.append(frame)
            if frame == KEEPALIVE:
                gate.set()
        return out

    assert asyncio.run(run()) == [b"a", KEEPALIVE, b"b"]


def test_kept_alive_none_passes_frames_as_they_are() -> None:
    async def run() -> list[bytes]:
        async def frames() -> AsyncIterator[bytes]:
            yield b"a"

        return [frame async for frame in kept_alive(frames(), None)]

    assert asyncio.run(run()) == [b"a"]


def test_sse_response_idle_sends_keepalive_and_the_reply_reads_the_same() -> None:
    events = events_of(THINKING)

    async def run(to: str) -> bytes:
        subject: Subject[Event] = Subject()
        response = lxs.sse_response(subject, to, keepalive=IDLE)
        chunks: list[bytes] = []
        async for chunk in response.body_iterator:
            data = chunk if isinstance(chunk, bytes) else chunk.encode()
            chunks.append(data)
            if data == KEEPALIVE and len(chunks) == 1:  # (silent so far: now the reply)
                for event in events:
                    subject.on_next(event)
                subject.on_completed()
        assert chunks[0] == KEEPALIVE
        return b"".join(chunks)

    body = asyncio.run(run("openai-chat"))
    assert llm_rx.reassemble(body, "openai-chat") == llm_rx.reassemble(
        THINKING.data, THINKING.provider)


def test_sse_response_ndjson_target_gets_no_keepalive() -> None:
    async def run() -> list[bytes]:
        subject: Subject[Event] = Subject()
        response = lxs.sse_response(subject, "ollama", keepalive=IDLE)
        asyncio.get_running_loop().call_later(4 * IDLE, subject.on_completed)
        return [chunk async for chunk in response.body_iterator]  # type: ignore[misc]

    assert KEEPALIVE not in asyncio.run(run())
