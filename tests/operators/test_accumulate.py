"""accumulate(): a snapshot per event; the last one is exactly to_response()'s Response."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import ReactiveTest, TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import WireFormatError
from llm_rx.events import BlockStart, MessageStart, MessageStop, TextDelta
from llm_rx.fold.builder import Snapshot

from ..captures import CAPTURES, Capture, capture
from ..helpers import CountedReads, reads_of

on_next, on_completed, on_error = (
    ReactiveTest.on_next, ReactiveTest.on_completed, ReactiveTest.on_error
)
subscribe = ReactiveTest.subscribe


def _snapshots(data: bytes, provider: str) -> list[Snapshot]:
    result: list[Snapshot] = llm_rx.from_bytes(data, provider).pipe(
        lxo.accumulate(), ops.to_list()
    ).run()
    return result


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_accumulate_last_snapshot_equals_to_response(capture: Capture) -> None:
    snapshots = _snapshots(capture.data, capture.provider)
    final = llm_rx.from_bytes(capture.data, capture.provider).pipe(lxo.to_response()).run()
    assert snapshots[-1].response.model_dump() == final.model_dump()
    assert snapshots[-1].response == final


@pytest.mark.parametrize("capture", CAPTURES[:20], ids=lambda c: c.name)
def test_accumulate_snapshots_grow_and_stay_unchanged(capture: Capture) -> None:
    snapshots = _snapshots(capture.data, capture.provider)
    texts = [snapshot.text for snapshot in snapshots]
    for earlier, later in itertools.pairwise(texts):
        assert later.startswith(earlier)  # text only ever grows
    # Reading an old snapshot after the stream ended still gives its own moment.
    middle = snapshots[len(snapshots) // 2]
    assert middle.response.text == texts[len(snapshots) // 2]
    assert not middle.response.complete or middle is snapshots[-1]


def test_accumulate_in_progress_snapshot_is_not_complete() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        on_next(210, MessageStart("anthropic", "m")),
        on_next(220, BlockStart(0, "text")),
        on_next(230, TextDelta(0, "Hel")),
        on_next(240, TextDelta(0, "lo")),
        on_next(250, MessageStop("end_turn")),
        on_completed(260),
    )
    observer = scheduler.start(lambda: source.pipe(lxo.accumulate()))
    times = [message.time for message in observer.messages]
    assert times == [210, 220, 230, 240, 250, 260]
    snapshots = [m.value.value for m in observer.messages[:-1]]
    assert [s.text for s in snapshots] == ["", "", "Hel", "Hello", "Hello"]
    assert snapshots[3].response.complete is False
    assert snapshots[3].response.stop_reason is None
    assert snapshots[3].response.error is None
    assert snapshots[4].response.complete is True
    assert source.subscriptions == [subscribe(200, 260)]


def test_accumulate_error_after_start_ends_with_an_incomplete_snapshot() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        on_next(210, MessageStart("anthropic", "m")),
        on_next(220, BlockStart(0, "text")),
        on_next(230, TextDelta(0, "partial")),
        on_error(240, WireFormatError("bad frame", "{")),
    )
    observer = scheduler.start(lambda: source.pipe(lxo.accumulate()))
    last = observer.messages[-2].value.value
    assert observer.messages[-1].value.kind == "C"
    assert last.response.text == "partial"
    assert last.response.stop_reason == "error"
    assert last.response.error is not None
    assert last.response.error.raw == "{"


def test_accumulate_dispose_ends_the_subscription() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        on_next(210, MessageStart("anthropic")), on_next(400, BlockStart(0, "text"))
    )
    observer = scheduler.start(lambda: source.pipe(lxo.accumulate()), disposed=300)
    assert len(observer.messages) == 1
    assert source.subscriptions == [subscribe(200, 300)]


def test_accumulate_snapshot_never_changes_after_it_was_emitted() -> None:
    # Each snapshot is read when emitted and again after the stream ended: the same reply.
    events = [
        MessageStart("anthropic", "m"),
        TextDelta(0, "Hel"),  # a delta before its block started (lenient)
        BlockStart(0, "text"),
        TextDelta(0, "lo"),
        MessageStop("end_turn"),
    ]
    at_emission: list[dict[str, object]] = []
    snapshots: list[Snapshot] = []

    def record(snapshot: Snapshot) -> None:
        at_emission.append(snapshot.response.model_dump())
        snapshots.append(snapshot)

    reactivex.from_iterable(events).pipe(lxo.accumulate()).subscribe(record)
    assert [s.response.model_dump() for s in snapshots] == at_emission
    assert snapshots[-1].response.text == "Hello"  # the early delta is not lost


def test_accumulate_snapshot_before_message_start_keeps_its_provider() -> None:
    snapshots: list[Snapshot] = []
    reactivex.from_iterable([TextDelta(0, "x"), MessageStart("anthropic")]).pipe(
        lxo.accumulate()
    ).subscribe(snapshots.append)
    first = snapshots[0]
    assert first.response.provider == "unknown"


# -- right after a source: the step runs in the source's own loop -------------------------


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
@pytest.mark.parametrize("size", [13, 500, 1 << 20])
def test_accumulate_right_after_the_source_is_accumulate_after_any_source(
    capture: Capture, size: int
) -> None:
    # bug class: the fused loop numbers a read's snapshots wrong or loses the end
    reads = reads_of(capture.data, size)
    fused = llm_rx.from_bytes(reads, capture.provider).pipe(lxo.accumulate(), ops.to_list())
    hop = llm_rx.from_bytes(reads, capture.provider).pipe(
        ops.map(lambda event: event), lxo.accumulate(), ops.to_list()
    )
    got, expected = fused.run(), hop.run()
    assert [s.text for s in got] == [s.text for s in expected]
    for at in {0, len(got) // 2, len(got) - 2, len(got) - 1}:
        assert got[at].response == expected[at].response


def test_accumulate_right_after_the_source_keeps_what_came_before_a_bad_frame() -> None:
    data = capture("openai/chat-gpt41-nano-text.sse").data
    body = data[: data.index(b"data: [DONE]")] + b"data: {not json\n\n"
    snapshots = _snapshots(body, "openai-chat")
    assert isinstance(snapshots[-1].error, WireFormatError)
    last = snapshots[-1].response
    assert last.error is not None
    assert last.error.raw == "{not json"
    assert last.text == llm_rx.reassemble(data).text
    assert not last.complete


def test_accumulate_right_after_the_source_stops_reading_when_disposed() -> None:
    reads = CountedReads(capture("openai/chat-gpt41-nano-text.sse").data, 64)
    snapshots = llm_rx.from_bytes(reads).pipe(lxo.accumulate(), ops.take(3), ops.to_list())
    assert len(snapshots.run()) == 3
    assert reads.pulled < len(reads.reads) // 2


def test_accumulate_right_after_the_source_lets_a_consumer_error_through() -> None:
    class Boom(Exception):
        pass

    def consume(snapshot: Snapshot) -> None:
        if snapshot.text:
            raise Boom

    source = llm_rx.from_bytes(capture("openai/chat-gpt41-nano-text.sse").data)
    with pytest.raises(Boom):
        source.pipe(lxo.accumulate()).subscribe(consume)


def _accumulated_async(reads: list[bytes]) -> list[Snapshot]:
    async def chunks() -> AsyncIterator[bytes]:
        for read in reads:
            yield read

    async def main() -> list[Snapshot]:
        result: list[Snapshot] = await llm_rx.from_async_bytes(chunks()).pipe(
            lxo.accumulate(), ops.to_list()
        )
        return result

    return asyncio.run(main())


@pytest.mark.parametrize(
    "name", ["openai/chat-gpt41-nano-text.sse", "anthropic/thinking-signature.sse"]
)
def test_accumulate_right_after_an_async_source_is_accumulate_after_any_source(
    name: str,
) -> None:
    data = capture(name).data
    got = _accumulated_async([*reads_of(data, 300), b""])  # (an empty read changes nothing)
    expected = _snapshots(data, capture(name).provider)
    assert [s.text for s in got] == [s.text for s in expected]
    assert got[-1].response == expected[-1].response


def test_accumulate_right_after_an_async_source_keeps_what_came_before_a_bad_frame() -> None:
    data = capture("openai/chat-gpt41-nano-text.sse").data
    body = data[: data.index(b"data: [DONE]")] + b"data: {not json\n\n"  # in the one read
    got = _accumulated_async([body])
    assert got[-1].response == llm_rx.reassemble(body)
    assert got[-1].response.text == llm_rx.reassemble(data).text
    assert isinstance(got[-1].error, WireFormatError)


@pytest.mark.parametrize("capture", CAPTURES[::3], ids=lambda c: c.name)
def test_accumulate_right_after_decode_is_accumulate_after_any_source(capture: Capture) -> None:
    def run(hop: bool) -> list[Snapshot]:
        bus: Subject[bytes] = Subject()
        snapshots: list[Snapshot] = []
        pipeline = [lxo.decode(capture.provider), ops.map(lambda e: e)] if hop else [
            lxo.decode(capture.provider)]
        bus.pipe(*pipeline, lxo.accumulate()).subscribe(snapshots.append)  # type: ignore[call-overload]
        for read in reads_of(capture.data, 500):
            bus.on_next(read)
        bus.on_completed()
        return snapshots

    got, expected = run(hop=False), run(hop=True)
    assert [s.text for s in got] == [s.text for s in expected]
    assert got[-1].response == expected[-1].response


def test_accumulate_right_after_decode_ends_at_a_bad_frame_and_reads_no_more() -> None:
    data = capture("openai/chat-gpt41-nano-text.sse").data
    good = data[: data.index(b"data: [DONE]")]
    bus: Subject[bytes] = Subject()
    snapshots: list[Snapshot] = []
    ends: list[str] = []
    bus.pipe(lxo.decode(), lxo.accumulate()).subscribe(
        snapshots.append, lambda e: ends.append("error"), lambda: ends.append("completed")
    )
    bus.on_next(good + b"data: {not json\n\n")
    bus.on_next(b"data: [DONE]\n\n")  # after the error: nothing more is read
    bus.on_completed()
    assert ends == ["completed"]
    assert isinstance(snapshots[-1].error, WireFormatError)
    assert snapshots[-1].response == llm_rx.reassemble(good + b"data: {not json\n\n")


def test_accumulate_right_after_decode_passes_an_upstream_error_on() -> None:
    data = capture("openai/chat-gpt41-nano-text.sse").data
    bus: Subject[bytes] = Subject()
    snapshots: list[Snapshot] = []
    bus.pipe(lxo.decode(), lxo.accumulate()).subscribe(snapshots.append)
    bus.on_next(data[:600])
    bus.on_error(ConnectionResetError("peer went away"))
    last = snapshots[-1].response
    assert not last.complete
    assert last.stop_reason == "interrupted"
    assert "peer went away" in str(last.error)
