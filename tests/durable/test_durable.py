"""``sinks.to_durable_stream`` and ``from_durable_stream`` against the protocol's reference
server (npm ``@durable-streams/server``) on loopback: round trips, retried appends written
once, epochs fencing, dropped reads resumed, a producer gone."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx import sinks as lxs
from llm_rx.errors import (
    CancelledStreamError,
    IncompleteStreamError,
    SinkWriteError,
    StreamTimeoutError,
)
from llm_rx.events import Event
from tests.captures import capture
from tests.durable.conftest import DurableServer
from tests.durable.proxy import dropping
from tests.redis.helpers import events_of, fold

pytestmark = pytest.mark.slow

NAMES = ["openai/chat-text-basic.sse", "anthropic/tool-use-input-json-delta.sse"]


def items_of(url: str) -> list[Any]:
    answer = httpx.get(url, params={"offset": "-1"})
    assert answer.status_code == 200
    items: list[Any] = answer.json()
    return items


def read(url: str, **options: Any) -> tuple[list[Event], BaseException | None]:
    got: list[Event] = []
    failure: list[BaseException] = []
    llm_rx.from_durable_stream(url, **options).subscribe(got.append, failure.append)
    return got, (failure[0] if failure else None)


def write(url: str, events: list[Event], **options: Any) -> list[BaseException]:
    """Write ``events`` one append each (a Subject: one read per event)."""
    subject: Subject[Event] = Subject()
    failures: list[BaseException] = []
    lxs.to_durable_stream(subject, url, heartbeat=None, **options).subscribe(
        on_error=failures.append)
    for event in events:
        subject.on_next(event)
    subject.on_completed()
    return failures


@pytest.mark.parametrize("name", NAMES)
def test_durable_round_trip_same_response(durable_server: DurableServer, name: str) -> None:
    recorded = capture(name)
    url = durable_server.stream()
    written = lxs.to_durable_stream(llm_rx.from_bytes(recorded.data, recorded.provider), url,
                                    heartbeat=None).pipe(lxo.to_response()).run()
    assert written == llm_rx.reassemble(recorded.data, recorded.provider)
    assert llm_rx.from_durable_stream(url).pipe(lxo.to_response()).run() == written
    assert httpx.head(url).headers["Stream-Closed"] == "true"
    items = items_of(url)
    assert [item["e"] for item in items[:-1]] == [llm_rx.event_to_dict(e)
                                                  for e in events_of(recorded)]
    assert items[-1] == {"end": {"error": None}}


def test_durable_cut_reply_ends_with_its_error(durable_server: DurableServer) -> None:
    recorded = capture("openai/chat-text-basic.sse")
    cut = recorded.data[: len(recorded.data) // 2]
    url = durable_server.stream()
    got: list[Event] = []
    failure: list[BaseException] = []
    lxs.to_durable_stream(llm_rx.from_bytes(cut, recorded.provider), url, heartbeat=None
                          ).subscribe(got.append, failure.append)
    assert isinstance(failure[0], IncompleteStreamError)
    events, error = read(url)
    assert events == got
    assert type(error) is type(failure[0])
    assert fold(events, error) == llm_rx.reassemble(cut, recorded.provider)
    assert fold(events, error).complete is False


def test_durable_retried_append_written_once(durable_server: DurableServer) -> None:
    """The server makes appends 2 and 5 but their answers are lost: the producer sends them
    again with the same sequence number, and each is kept once."""
    events = events_of(capture("openai/chat-text-basic.sse"))
    path = durable_server.stream().removeprefix(durable_server.url)
    with dropping(durable_server.url, lambda method, n: method == "POST" and n in (2, 5)) as url:
        assert write(url + path, events) == []
    got, error = read(durable_server.url + path)
    assert (got, error) == (events, None)


def test_durable_newer_epoch_fences_the_old_producer(durable_server: DurableServer) -> None:
    events = events_of(capture("openai/chat-text-basic.sse"))
    url = durable_server.stream()
    old: Subject[Event] = Subject()
    failures: list[BaseException] = []
    lxs.to_durable_stream(old, url, producer_id="p", heartbeat=None).subscribe(
        on_error=failures.append)
    old.on_next(events[0])
    new: Subject[Event] = Subject()  # (the producer restarted for the same reply)
    new_failures: list[BaseException] = []
    lxs.to_durable_stream(new, url, producer_id="p", epoch=1, heartbeat=None).subscribe(
        on_error=new_failures.append)
    new.on_next(events[1])
    old.on_next(events[1])
    assert isinstance(failures[0], SinkWriteError)
    assert "fenced off by a producer with epoch 1" in str(failures[0])
    for event in events[2:]:
        new.on_next(event)
    new.on_completed()
    assert new_failures == []
    assert read(url) == (events, None)


def test_durable_reader_resumes_after_a_dropped_read(durable_server: DurableServer) -> None:
    events = events_of(capture("anthropic/tool-use-input-json-delta.sse"))
    url = durable_server.stream()
    assert write(url, events) == []
    path = url.removeprefix(durable_server.url)
    with dropping(durable_server.url, lambda method, n: method == "GET" and n == 1) as proxy:
        assert read(proxy + path) == (events, None)


def test_durable_reader_follows_live_from_an_offset(durable_server: DurableServer) -> None:
    events = events_of(capture("openai/chat-text-basic.sse"))
    url = durable_server.stream()
    subject: Subject[Event] = Subject()
    lxs.to_durable_stream(subject, url, heartbeat=None).subscribe(on_error=print)
    subject.on_next(events[0])
    offset = httpx.head(url).headers["Stream-Next-Offset"]
    got: list[Event] = []
    ended: list[object] = []
    done = asyncio.Event()

    async def follow() -> None:
        async with httpx.AsyncClient() as client:
            source = llm_rx.from_durable_stream(url, offset, client=client)
            source.subscribe(got.append, ended.append, lambda: done.set())
            await asyncio.sleep(0)  # (the first read is in flight)
            for event in events[1:]:
                subject.on_next(event)
            subject.on_completed()
            await asyncio.wait_for(done.wait(), 20)

    asyncio.run(follow())
    assert got == events[1:]
    assert ended == []


def test_durable_reader_of_a_vanished_producer_ends_cut(durable_server: DurableServer) -> None:
    events = events_of(capture("openai/chat-text-basic.sse"))
    url = durable_server.stream()
    subject: Subject[Event] = Subject()
    with httpx.Client() as client:
        lxs.to_durable_stream(subject, url, heartbeat=None, client=client).subscribe(
            on_error=print)
        for event in events[:3]:
            subject.on_next(event)  # (and then nothing: the producer is gone)
    got, error = read(url, idle_timeout=1.5)
    assert got == events[:3]
    assert isinstance(error, StreamTimeoutError)
    assert fold(got, error).complete is False
    assert isinstance(read(url, live=False)[1], IncompleteStreamError)


def test_durable_disposed_producer_closes_cancelled(durable_server: DurableServer) -> None:
    events = events_of(capture("openai/chat-text-basic.sse"))
    url = durable_server.stream()
    subject: Subject[Event] = Subject()
    subscription = lxs.to_durable_stream(subject, url, heartbeat=None).subscribe(
        on_error=print)
    subject.on_next(events[0])
    subscription.dispose()
    got, error = read(url)
    assert got == events[:1]
    assert isinstance(error, CancelledStreamError)


def test_durable_async_producer_round_trip(durable_server: DurableServer) -> None:
    recorded = capture("anthropic/tool-use-input-json-delta.sse")
    url = durable_server.stream()

    async def produce() -> Any:
        async with httpx.AsyncClient() as client:
            return await lxs.to_durable_stream(
                llm_rx.from_bytes(recorded.data, recorded.provider), url, client=client,
                heartbeat=None).pipe(lxo.to_response())

    written = asyncio.run(produce())
    assert written == llm_rx.reassemble(recorded.data, recorded.provider)
    assert llm_rx.from_durable_stream(url).pipe(lxo.to_response()).run() == written


def test_durable_reader_goes_on_from_an_entrys_cursor(durable_server: DurableServer) -> None:
    # bug class: a resumable source that takes its own position type only (every other one
    # takes llm_rx.Cursor: from_redis(after=), from_httpx's reconnect)
    recorded = capture(NAMES[0])
    url = durable_server.stream()
    write(url, list(events_of(recorded)))
    entries: list[Any] = []
    llm_rx.from_durable_stream(url, with_offsets=True).subscribe(entries.append)
    at = len(entries) // 2
    rest, failure = read(url, offset=entries[at].cursor)
    assert failure is None
    assert rest == [entry.event for entry in entries[at + 1 :]]
    assert read(url, offset=llm_rx.Cursor())[0] == [entry.event for entry in entries]
