"""``sinks.to_redis``: what it writes, per read, at each kind of end, and when Redis goes away."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any

import orjson
import pytest
import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx import sinks as lxs
from llm_rx.errors import IncompleteStreamError, SinkWriteError
from llm_rx.events import Event, event_to_dict
from llm_rx.sources import EventSource, from_redis
from tests.captures import capture
from tests.redis.conftest import RedisServer
from tests.redis.helpers import DEADLINE, events_of, fold, until

TEXT = capture("openai/chat-text-basic.sse")


class CountingClient:
    """A client whose writes (script calls, pipelines) count their round trips."""

    def __init__(self, client: Any) -> None:
        self.client, self.round_trips = client, 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        return self.client.execute_command(*args, **options)

    def register_script(self, script: str) -> Any:
        registered = self.client.register_script(script)

        def counted(**arguments: Any) -> Any:
            self.round_trips += 1
            return registered(**arguments)

        return counted

    def pipeline(self, transaction: bool = True) -> Any:
        pipe = self.client.pipeline(transaction=transaction)
        execute = pipe.execute

        def counted() -> Any:
            self.round_trips += 1
            return execute()

        pipe.execute = counted
        return pipe


def test_to_redis_one_entry_per_event_then_an_end_entry(server: RedisServer) -> None:
    client: Any = server.client()
    events = events_of(TEXT)
    llm_rx.from_bytes(TEXT.data, TEXT.provider).pipe(lxs.to_redis(client, "k")).run()
    entries = client.xrange("k")
    assert [orjson.loads(fields[b"e"]) for _, fields in entries[:-1]] == [
        event_to_dict(event) for event in events
    ]
    assert entries[-1][1] == {b"end": b'{"error":null}'}
    assert 0 < client.ttl("k") <= lxs._redis.DEFAULT_TTL


def test_to_redis_one_round_trip_per_read(server: RedisServer) -> None:
    client = CountingClient(server.client())
    data = TEXT.data
    chunks = [data[: len(data) // 3], data[len(data) // 3 : len(data) // 2], data[len(data) // 2 :]]
    source = llm_rx.from_bytes(chunks, TEXT.provider)
    assert isinstance(source, EventSource)
    reads: list[int] = []
    source.subscribe_steps(
        lambda events: ([len(events)] if events else [], None), reads.append,
        pytest.fail, pytest.fail, lambda: None,
    )
    source.pipe(lxs.to_redis(client, "k")).run()
    assert len(events_of(TEXT)) > len(reads) + 1
    assert client.round_trips == len(reads) + 1  # (+ the end entry)


def test_to_redis_keeps_the_fast_path_of_the_operators_after_it(server: RedisServer) -> None:
    client = CountingClient(server.client())
    response = llm_rx.from_bytes(TEXT.data, TEXT.provider).pipe(
        lxs.to_redis(client, "k"), lxo.to_response()
    ).run()
    assert response == llm_rx.reassemble(TEXT.data, TEXT.provider)
    assert client.round_trips == 2


def test_to_redis_a_tap_after_it_keeps_the_reads(server: RedisServer) -> None:
    # bug class: a tap (a display, trace()) after to_redis() reading it another way than
    # the operators do (it failed: to_redis() reads only through subscribe_steps)
    client = CountingClient(server.client())
    response = llm_rx.from_bytes(TEXT.data, TEXT.provider).pipe(
        lxs.to_redis(client, "k"), lxo.trace(), lxo.to_response()
    ).run()
    assert response == llm_rx.reassemble(TEXT.data, TEXT.provider)
    assert client.round_trips == 2


def test_to_redis_truncated_reply_ends_with_its_error(server: RedisServer) -> None:
    client: Any = server.client()
    cut = TEXT.data[: len(TEXT.data) // 2]
    produced = llm_rx.from_bytes(cut, TEXT.provider).pipe(
        lxs.to_redis(client, "k"), lxo.to_response()
    ).run()
    end = orjson.loads(client.xrange("k")[-1][1][b"end"])
    assert end["error"]["kind"] == "incomplete"
    assert end["error"]["type"] == "IncompleteStreamError"
    followed = from_redis(client, "k", heartbeat_timeout=1).pipe(lxo.to_response()).run()
    assert followed == produced
    assert not followed.complete


def test_to_redis_plain_observable_is_written_per_event(server: RedisServer) -> None:
    client = CountingClient(server.client())
    events = events_of(TEXT)
    reactivex.from_iterable(events).pipe(lxs.to_redis(client, "k")).run()
    assert client.round_trips == len(events) + 1
    assert from_redis(client.client, "k").pipe(ops.to_list()).run() == events


def test_to_redis_disposed_producer_writes_a_cancelled_end(server: RedisServer) -> None:
    client: Any = server.client()
    events = events_of(TEXT)
    subject: Subject[Event] = Subject()
    subscription = subject.pipe(lxs.to_redis(client, "k")).subscribe(on_error=pytest.fail)
    for event in events[:3]:
        subject.on_next(event)
    subscription.dispose()
    end = orjson.loads(client.xrange("k")[-1][1][b"end"])
    assert end["error"]["kind"] == "cancelled"
    followed = from_redis(client, "k", heartbeat_timeout=1).pipe(lxo.to_response()).run()
    assert followed.error is not None
    assert followed.error.kind == "cancelled"
    assert followed.stop_reason == "interrupted"


def test_to_redis_consumer_failure_ends_the_stream_too(server: RedisServer) -> None:
    client: Any = server.client()
    errors: list[Exception] = []

    def boom(_: Event) -> None:
        raise RuntimeError("consumer failed")

    llm_rx.from_bytes(TEXT.data, TEXT.provider).pipe(lxs.to_redis(client, "k")).subscribe(
        boom, errors.append
    )
    assert [str(error) for error in errors] == ["consumer failed"]
    end = orjson.loads(client.xrange("k")[-1][1][b"end"])
    assert end["error"]["kind"] == "incomplete"


def test_to_redis_async_client_writes_the_same_stream(server: RedisServer) -> None:
    import redis.asyncio

    async def produce() -> llm_rx.Response:
        client = redis.asyncio.Redis(port=server.port, socket_timeout=10)
        try:
            source = llm_rx.from_async_bytes(_aiter([TEXT.data]), TEXT.provider)
            return await source.pipe(lxs.to_redis(client, "k"), lxo.to_response())
        finally:
            await client.aclose()

    produced = asyncio.run(produce())
    followed = from_redis(server.client(), "k", heartbeat_timeout=1).pipe(
        lxo.to_response()
    ).run()
    assert followed == produced == llm_rx.reassemble(TEXT.data, TEXT.provider)


async def _aiter(chunks: list[bytes]) -> Any:
    for chunk in chunks:
        yield chunk


def test_to_redis_async_client_server_gone_is_a_typed_error(server: RedisServer) -> None:
    import redis.asyncio

    events = events_of(TEXT)

    async def produce() -> llm_rx.Response:
        client = redis.asyncio.Redis(port=server.port, socket_timeout=10)
        subject: Subject[Event] = Subject()
        result = asyncio.ensure_future(
            subject.pipe(lxs.to_redis(client, "k"), lxo.to_response(), ops.to_future())
        )
        subject.on_next(events[0])
        await asyncio.sleep(0)  # (lets the writer task run: a turn of the loop, not a delay)
        while await client.xlen("k") < 1:
            await asyncio.sleep(0)
        server.stop()
        for event in events[1:]:
            subject.on_next(event)
        subject.on_completed()
        try:
            return await asyncio.wait_for(result, DEADLINE)
        finally:
            await client.aclose()

    produced = asyncio.run(produce())
    server.start()
    assert not produced.complete
    assert produced.error is not None
    assert produced.error.kind == "incomplete"
    assert "could not be written to Redis" in produced.error.message


def test_to_redis_restarted_server_mid_reply_keeps_what_arrived(server: RedisServer) -> None:
    producer: Any = server.client()
    follower: Any = server.client()
    events = events_of(TEXT)
    half = len(events) // 2
    followed: list[Event] = []
    follower_errors: list[Exception] = []
    got_half = threading.Event()
    done = threading.Event()

    def seen(event: Event) -> None:
        followed.append(event)
        if len(followed) == half:
            got_half.set()

    def ended(error: Exception | None = None) -> None:
        if error is not None:
            follower_errors.append(error)
        done.set()

    reader = threading.Thread(
        target=lambda: from_redis(follower, "k", heartbeat_timeout=DEADLINE).subscribe(
            seen, ended, ended
        )
    )
    reader.start()
    subject: Subject[Event] = Subject()
    results: list[llm_rx.Response] = []
    subject.pipe(lxs.to_redis(producer, "k"), lxo.to_response()).subscribe(
        results.append, pytest.fail
    )
    for event in events[:half]:
        subject.on_next(event)
    assert got_half.wait(DEADLINE)
    server.stop()
    subject.on_next(events[half])
    assert done.wait(DEADLINE)
    reader.join(DEADLINE)
    server.start()

    (produced,) = results  # the producer's error is typed, and what arrived is kept
    assert produced == fold(events[: half + 1], produced_error(produced))
    assert not produced.complete
    assert produced.stop_reason == "interrupted"
    assert produced.error is not None
    assert produced.error.raw is not None
    assert orjson.loads(produced.error.raw.splitlines()[0])["e"]  # the entry not written
    assert followed == events[:half]  # the follower's too
    (error,) = follower_errors
    assert isinstance(error, IncompleteStreamError)
    assert "could not be read" in str(error)


def produced_error(response: llm_rx.Response) -> SinkWriteError:
    assert response.error is not None
    return SinkWriteError(response.error.message, response.error.raw)


def test_importing_llm_rx_does_not_import_redis() -> None:
    code = "import sys, llm_rx, llm_rx.sinks, llm_rx.sources; print('redis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=DEADLINE, check=True)
    assert out.stdout.strip() == "False"


def test_to_redis_heartbeats_keep_followers_of_a_silent_reply(server: RedisServer) -> None:
    client: Any = server.client()
    events = events_of(TEXT)
    subject: Subject[Event] = Subject()
    results: list[llm_rx.Response] = []
    subject.pipe(lxs.to_redis(client, "k", heartbeat=0.05), lxo.to_response()).subscribe(
        results.append, pytest.fail
    )
    subject.on_next(events[0])
    followed: list[llm_rx.Response] = []
    reader = threading.Thread(target=lambda: from_redis(
        server.client(), "k", heartbeat_timeout=0.5).pipe(lxo.to_response()).subscribe(
            followed.append, pytest.fail))
    reader.start()

    def heartbeats() -> int:
        return sum(1 for _, fields in client.xrange("k") if b"h" in fields)

    until(lambda: heartbeats() >= 20, "a silence longer than the follower's timeout")
    for event in events[1:]:
        subject.on_next(event)
    subject.on_completed()
    reader.join(DEADLINE)
    assert followed == results
    assert followed[0].complete
    assert b"end" in client.xrange("k")[-1][1]  # (no heartbeat after the end)


def test_to_redis_rejects_a_heartbeat_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="heartbeat"):
        lxs.to_redis(object(), "k", heartbeat=0)
