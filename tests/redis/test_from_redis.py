"""``sources.from_redis``: followers (in this process and in others) of a reply in Redis."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import orjson
import pytest
from reactivex import operators as ops

import llm_rx
from llm_rx import Response
from llm_rx import operators as lxo
from llm_rx import sinks as lxs
from llm_rx.errors import StreamTimeoutError, WireFormatError
from llm_rx.events import Event
from llm_rx.sources import RedisEntry, from_redis
from tests.captures import CAPTURES, Capture, capture
from tests.redis.conftest import RedisServer
from tests.redis.helpers import (
    DEADLINE,
    blocked_readers,
    events_of,
    finish,
    fold,
    spawn,
    until,
)

TEXT = capture("openai/chat-text-basic.sse")


def _produce(client: Any, key: str, recorded: Capture) -> Response:
    response: Response = llm_rx.from_bytes(recorded.data, recorded.provider).pipe(
        lxs.to_redis(client, key), lxo.to_response()
    ).run()
    return response


@pytest.mark.parametrize("recorded", CAPTURES, ids=lambda c: c.name)
def test_from_redis_follower_equals_producer_on_every_capture(
    server: RedisServer, recorded: Capture
) -> None:
    client: Any = server.client()
    produced = _produce(client, "k", recorded)
    followed = from_redis(client, "k", heartbeat_timeout=DEADLINE).pipe(
        lxo.to_response()
    ).run()
    assert followed == produced


@pytest.mark.parametrize(
    "name", ["anthropic/thinking-signature.sse", "gemini/sse-thought-parts.sse"]
)
def test_from_redis_follows_a_paced_producer_in_another_process(
    server: RedisServer, name: str
) -> None:
    recorded = capture(name)
    followers = [spawn("follower", server.port, "k") for _ in range(2)]
    client: Any = server.client()
    until(lambda: blocked_readers(client) == 2, "the followers to wait")
    producer = spawn("producer", server.port, "k", name, "--pace", "0.002")
    produced = Response.model_validate_json(finish(producer))
    for follower in followers:
        assert Response.model_validate_json(finish(follower)) == produced
    assert produced == llm_rx.reassemble(recorded.data, recorded.provider)


def test_from_redis_many_followers_of_one_reply(server: RedisServer) -> None:
    client: Any = server.client()
    followers = [spawn("follower", server.port, "k") for _ in range(4)]
    until(lambda: blocked_readers(client) == 4, "the followers to wait")
    produced = _produce(client, "k", TEXT)
    for follower in followers:
        assert Response.model_validate_json(finish(follower)) == produced


def test_from_redis_late_joiner_gets_what_was_written_then_the_rest(
    server: RedisServer,
) -> None:
    client: Any = server.client()
    events = events_of(TEXT)
    half = len(events) // 2
    producer = spawn("producer", server.port, "k", TEXT.name, "--stop-after", half)
    assert producer.stdout is not None
    assert producer.stdout.readline().strip() == "written"
    seen: list[Event] = []
    thread = threading.Thread(target=lambda: from_redis(
        server.client(), "k", heartbeat_timeout=DEADLINE).subscribe(seen.append, seen.append)
    )
    thread.start()
    until(lambda: blocked_readers(client) == 1, "the late joiner to wait")
    assert seen == events[:half]
    producer.kill()
    producer.communicate(timeout=DEADLINE)
    client.xadd("k", {"e": orjson.dumps(llm_rx.event_to_dict(events[half]))})
    client.xadd("k", {"end": b'{"error":null}'})
    thread.join(DEADLINE)
    assert seen == events[: half + 1]


def test_from_redis_resumes_after_the_last_id_it_saw(server: RedisServer) -> None:
    client: Any = server.client()
    produced = _produce(client, "k", TEXT)
    first: list[RedisEntry] = from_redis(client, "k", with_ids=True).pipe(
        ops.take(4), ops.to_list()
    ).run()
    rest: list[RedisEntry] = from_redis(client, "k", after=first[-1].id, with_ids=True).pipe(
        ops.to_list()
    ).run()
    assert [entry.event for entry in first + rest] == events_of(TEXT)
    assert [entry.id for entry in first + rest] == [
        entry_id.decode() for entry_id, _ in client.xrange("k")[:-1]
    ]
    assert fold([entry.event for entry in first + rest]) == produced


def test_from_redis_resumes_from_a_cursor(server: RedisServer) -> None:
    client: Any = server.client()
    _produce(client, "k", TEXT)
    first: list[RedisEntry] = from_redis(client, "k", with_ids=True).pipe(
        ops.take(3), ops.to_list()
    ).run()
    cursor = first[-1].cursor
    assert cursor == llm_rx.Cursor(last_event_id=first[-1].id)
    rest: list[Event] = from_redis(client, "k", after=cursor).pipe(ops.to_list()).run()
    assert [entry.event for entry in first] + rest == events_of(TEXT)


def test_from_redis_producer_killed_mid_reply_ends_incomplete(server: RedisServer) -> None:
    events = events_of(TEXT)
    producer = spawn("producer", server.port, "k", TEXT.name, "--stop-after", 5)
    assert producer.stdout is not None
    assert producer.stdout.readline().strip() == "written"
    producer.kill()
    producer.communicate(timeout=DEADLINE)
    followed = from_redis(server.client(), "k", heartbeat_timeout=0.3).pipe(
        lxo.to_response()
    ).run()
    timeout = StreamTimeoutError("x")
    assert followed.model_dump(exclude={"error"}) == fold(events[:5], timeout).model_dump(
        exclude={"error"}
    )
    assert followed.error is not None
    assert followed.error.kind == "incomplete"
    assert not followed.complete
    assert followed.stop_reason == "interrupted"


def test_from_redis_no_stream_at_all_times_out(server: RedisServer) -> None:
    with pytest.raises(StreamTimeoutError):
        from_redis(server.client(), "nothing", heartbeat_timeout=0.2).run()


def test_from_redis_bad_entry_is_a_typed_error_after_what_came(server: RedisServer) -> None:
    client: Any = server.client()
    events = events_of(TEXT)
    for event in events[:3]:
        client.xadd("k", {"e": orjson.dumps(llm_rx.event_to_dict(event))})
    client.xadd("k", {"e": b'{"type": "text_delta", "index": "x"'})
    client.xadd("k", {"e": orjson.dumps(llm_rx.event_to_dict(events[3]))})
    seen: list[Event] = []
    errors: list[Exception] = []
    from_redis(client, "k", heartbeat_timeout=DEADLINE).subscribe(seen.append, errors.append)
    assert seen == events[:3]
    (error,) = errors
    assert isinstance(error, WireFormatError)
    assert error.raw == '{"e":"{\\"type\\": \\"text_delta\\", \\"index\\": \\"x\\""}'


@pytest.mark.parametrize(
    "fields", [{"x": b"1"}, {"e": b'{"type": "nope"}'}, {"end": b'{"error": 5}'}, {"end": b"[]"}]
)
def test_from_redis_entry_not_written_by_to_redis_is_a_wire_format_error(
    server: RedisServer, fields: dict[str, bytes]
) -> None:
    client: Any = server.client()
    client.xadd("k", fields)
    with pytest.raises(WireFormatError):
        from_redis(client, "k", heartbeat_timeout=DEADLINE).run()


def test_from_redis_async_client_follows_live(server: RedisServer) -> None:
    import redis.asyncio

    async def follow() -> tuple[Response, Response]:
        client = redis.asyncio.Redis(port=server.port, socket_timeout=10)
        try:
            followed = asyncio.ensure_future(from_redis(client, "k", heartbeat_timeout=DEADLINE)
                                             .pipe(lxo.to_response(), ops.to_future()))
            while blocked_readers(server.client()) < 1:
                await asyncio.sleep(0.01)
            produced = await asyncio.to_thread(_produce, server.client(), "k", TEXT)
            return produced, await asyncio.wait_for(followed, DEADLINE)
        finally:
            await client.aclose()

    produced, followed = asyncio.run(follow())
    assert followed == produced


def test_from_redis_rejects_a_timeout_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="heartbeat_timeout"):
        from_redis(object(), "k", heartbeat_timeout=0)
