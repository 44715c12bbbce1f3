"""An async ``from_redis`` reads as its consumer takes: through ``to_aiter``, and through
``redis_sse_response``'s frames, the next ``XREAD`` waits until the entries it gave were
taken, so a consumer slower than Redis holds a bounded number of entries (a real Redis; the
slow HTTP clients and the heartbeat across a pause are in ``test_redis_sse_slow.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

import llm_rx
from llm_rx.events import TextDelta
from llm_rx.sinks._redis_sse import BATCH, sse_frames
from llm_rx.sources import from_redis
from llm_rx.sources._redis_entries import end_entry, event_entry
from tests.redis.conftest import RedisServer

ENTRIES = 5000
COUNT = 1024  # (what from_redis asks for a read)
BUFFER = 8


def _fill(server: RedisServer) -> None:
    client: Any = server.client()
    pipe = client.pipeline(transaction=False)
    for number in range(ENTRIES):
        pipe.xadd("k", event_entry(TextDelta(0, f"{number} ")))
    pipe.xadd("k", end_entry(None))
    pipe.execute()
    client.close()


def _counted(port: int) -> Any:
    import redis.asyncio

    class Counted(redis.asyncio.Redis):  # type: ignore[type-arg]
        read = 0

        async def xread(self, *args: Any, **options: Any) -> Any:
            reply = await super().xread(*args, **options)
            self.read += sum(len(batch) for _, batch in reply or ())
            return reply

    return Counted(port=port, socket_timeout=10)


def test_to_aiter_over_from_redis_reads_as_the_consumer_takes(server: RedisServer) -> None:
    import redis.asyncio

    _fill(server)

    async def follow() -> tuple[list[int], str]:
        client, other = _counted(server.port), redis.asyncio.Redis(port=server.port)
        ahead: list[int] = []  # entries read past those taken, at each take
        text = []
        try:
            async for event in llm_rx.to_aiter(
                from_redis(client, "k", heartbeat_timeout=10), buffer=BUFFER
            ):
                text.append(event.text)  # type: ignore[union-attr]
                ahead.append(client.read - len(text))
                await other.ping()  # (a real round trip: the reading may run meanwhile)
        finally:
            await client.aclose()
            await other.aclose()
        return ahead, "".join(text)

    ahead, text = asyncio.run(follow())
    assert text == "".join(f"{number} " for number in range(ENTRIES))
    assert max(ahead) <= BUFFER + COUNT, max(ahead)


def test_sse_frames_read_a_batch_once_the_last_was_taken(server: RedisServer) -> None:
    import redis.asyncio

    _fill(server)

    async def follow() -> tuple[list[int], list[bytes]]:
        client, other = _counted(server.port), redis.asyncio.Redis(port=server.port)
        ahead: list[int] = []
        frames = []
        try:
            async for frame in sse_frames(client, "k", heartbeat_timeout=10):
                frames.append(frame)
                ahead.append(client.read - len(frames))
                await other.ping()
        finally:
            await client.aclose()
            await other.aclose()
        return ahead, frames

    ahead, frames = asyncio.run(follow())
    assert len(frames) == ENTRIES + 1
    assert frames[-1] == b"event: end\ndata: {}\n\n"
    assert max(ahead) <= BATCH, max(ahead)
