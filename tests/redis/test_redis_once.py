"""``sinks.to_redis`` writes each entry once: a write whose answer was lost is retried (the
client's own retry) and kept once; a producer restarted with a higher epoch fences off the
old one."""

from __future__ import annotations

from typing import Any

import redis
from reactivex.subject import Subject

import llm_rx
from llm_rx import sinks as lxs
from llm_rx.errors import SinkWriteError
from llm_rx.events import Event
from llm_rx.sources import from_redis
from tests.captures import capture
from tests.redis.conftest import RedisServer
from tests.redis.helpers import events_of
from tests.redis.tcp_proxy import losing_one_answer

TEXT = capture("openai/chat-text-basic.sse")


def test_to_redis_retried_write_is_kept_once(server: RedisServer) -> None:
    events = events_of(TEXT)
    with losing_one_answer(server.port, b"text_delta") as port:
        client: Any = redis.Redis(port=port, socket_timeout=10)
        llm_rx.from_bytes(TEXT.data, TEXT.provider).pipe(
            lxs.to_redis(client, "k", heartbeat=None)).run()
        client.close()
    direct: Any = server.client()
    read: list[Event] = []
    from_redis(direct, "k").subscribe(read.append)
    direct.close()
    assert read == events


def test_to_redis_newer_epoch_fences_the_old_producer(server: RedisServer) -> None:
    events = events_of(TEXT)
    client: Any = server.client()
    old: Subject[Event] = Subject()
    failures: list[BaseException] = []
    old.pipe(lxs.to_redis(client, "k", heartbeat=None, producer_id="p")).subscribe(
        on_error=failures.append)
    old.on_next(events[0])
    new: Subject[Event] = Subject()
    new.pipe(lxs.to_redis(client, "k", heartbeat=None, producer_id="p", epoch=1)).subscribe(
        on_error=failures.append)
    new.on_next(events[1])
    old.on_next(events[2])
    assert len(failures) == 1
    assert isinstance(failures[0], SinkWriteError)
    assert "fenced off" in str(failures[0])
    for event in events[2:]:
        new.on_next(event)
    new.on_completed()
    read: list[Event] = []
    from_redis(client, "k").subscribe(read.append)
    client.close()
    assert read == events
