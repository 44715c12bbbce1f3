"""``redis_sse_response`` sends keep-alive comments while the producer is silent, and the
reply after them reads the same."""

from __future__ import annotations

import asyncio
from typing import Any

import redis
import redis.asyncio

import llm_rx
from llm_rx import sinks as lxs
from llm_rx.sinks._keepalive import KEEPALIVE
from tests.captures import capture
from tests.redis.conftest import RedisServer
from tests.redis.helpers import events_of

TEXT = capture("openai/chat-text-basic.sse")


def test_redis_sse_response_keepalive_while_the_producer_is_silent(server: RedisServer) -> None:
    async def run() -> list[bytes]:
        client = redis.asyncio.Redis(port=server.port, socket_timeout=10)
        response = lxs.redis_sse_response(client, "k", keepalive=0.05)
        chunks: list[bytes] = []
        try:
            async for chunk in response.body_iterator:
                data = chunk if isinstance(chunk, bytes) else chunk.encode()
                chunks.append(data)
                if data == KEEPALIVE and len(chunks) == 1:  # (silent so far: now the reply)
                    sync: Any = redis.Redis(port=server.port)
                    llm_rx.from_bytes(TEXT.data, TEXT.provider).pipe(
                        lxs.to_redis(sync, "k", heartbeat=None)).run()
                    sync.close()
        finally:
            await client.aclose()
        return chunks

    chunks = asyncio.run(run())
    assert chunks[0] == KEEPALIVE
    assert chunks[-1] == b"event: end\ndata: {}\n\n"
    frames = [chunk for chunk in chunks if chunk != KEEPALIVE]
    assert len(frames) == len(events_of(TEXT)) + 1  # (each event once, then the end)
