"""live(): the pacing engine of the displays, in virtual time (TestScheduler), never sleeping.

Frames are rendered at most ``refresh_per_second`` times a second of the scheduler's clock,
events pass through untouched, fragments arriving during a frame are coalesced into the next
one, and the final state is always rendered last, in full.
"""

from __future__ import annotations

import sys

import pytest
import reactivex
from reactivex import operators as ops
from reactivex.scheduler import CurrentThreadScheduler
from reactivex.subject import Subject
from reactivex.testing import ReactiveTest, TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import ProviderError
from llm_rx.events import BlockStart, BlockStop, Event, MessageStart, MessageStop, TextDelta
from llm_rx.fold.builder import Snapshot
from llm_rx.sinks import LiveView, live

from ..captures import capture
from .timeline import FrameLog, cold_timeline

on_next, on_completed, on_error = (
    ReactiveTest.on_next, ReactiveTest.on_completed, ReactiveTest.on_error
)
subscribe = ReactiveTest.subscribe

WORDS = [f"w{n} " for n in range(100)]
REPLY: list[Event] = [
    MessageStart("p", "m"),
    BlockStart(0, "text"),
    *(TextDelta(0, word) for word in WORDS),
    BlockStop(0),
    MessageStop("end_turn"),
]


def _text_at(time: float, start: int = 201) -> str:
    """The reply's text once the events up to ``time`` arrived (one event per tick)."""
    arrived = int(time) - start + 1
    return "".join(e.text for e in REPLY[:arrived] if isinstance(e, TextDelta))


def test_live_fast_stream_renders_at_a_bounded_rate_then_in_full() -> None:
    scheduler = TestScheduler()
    source = cold_timeline(scheduler, REPLY)  # 104 events, one per tick, from 201
    log = FrameLog(scheduler)
    observer = scheduler.start(lambda: source.pipe(live(lambda: log, refresh_per_second=0.1)))

    # one frame per 10 ticks at most: the first event at once, then every 10 ticks
    assert log.kinds == ["update"] * 11 + ["close"]
    assert log.times == [201, 211, 221, 231, 241, 251, 261, 271, 281, 291, 301, 305]
    for time, _, snapshot in log.frames[:-1]:
        assert snapshot.text == _text_at(time)  # everything that arrived, nothing dropped
        assert snapshot.response.complete is False
        assert snapshot.response.stop_reason is None
    final = log.last.response
    assert final.text == "".join(WORDS)
    assert final.complete is True
    assert final.stop_reason == "end_turn"
    # a tap: the same events, at the same times, then the end
    expected = [on_next(201 + n, event) for n, event in enumerate(REPLY)] + [on_completed(305)]
    assert observer.messages == expected
    assert source.subscriptions == [subscribe(200, 305)]


def test_live_slow_stream_shows_each_event_when_it_arrives() -> None:
    scheduler = TestScheduler()
    source = cold_timeline(scheduler, REPLY[:5], start=10, step=30)
    log = FrameLog(scheduler)
    scheduler.start(lambda: source.pipe(live(lambda: log, refresh_per_second=0.1)))
    # gaps (30 ticks) are longer than the interval (10 ticks): no event waits
    assert log.times == [210, 240, 270, 300, 330, 360]
    assert [s.text for _, _, s in log.frames] == ["", "", "w0 ", "w0 w1 ", "w0 w1 w2 ",
                                                  "w0 w1 w2 "]
    assert log.last.response.stop_reason == "interrupted"  # ended without its MessageStop


def test_live_fragments_arriving_during_a_frame_go_into_the_next_frame() -> None:
    scheduler = TestScheduler()
    subject: Subject[Event] = Subject()
    rendered: list[str] = []

    class PushingView:
        """Renders slowly: two more fragments land while the first frame is drawn."""

        def update(self, snapshot: Snapshot) -> None:
            rendered.append(snapshot.text)
            if len(rendered) == 1:
                subject.on_next(TextDelta(0, " during"))
                subject.on_next(TextDelta(0, " render"))

        def close(self, snapshot: Snapshot) -> None:
            rendered.append("final:" + snapshot.text)

    for time, event in [(210, MessageStart("p")), (210, BlockStart(0, "text")),
                        (210, TextDelta(0, "before")), (250, MessageStop("end_turn"))]:
        scheduler.schedule_absolute(time, lambda *_, e=event: subject.on_next(e))
    scheduler.schedule_absolute(260, lambda *_: subject.on_completed())
    observer = scheduler.start(
        lambda: subject.pipe(live(PushingView, refresh_per_second=0.1)), disposed=1000
    )
    # 210: the first frame; 220: the fragments that landed during it; 250: the MessageStop
    assert rendered == ["before", "before during render", "before during render",
                        "final:before during render"]
    assert [m.time for m in observer.messages] == [210, 210, 210, 210, 210, 250, 260]
    assert [m.value.value for m in observer.messages[3:5]] == [
        TextDelta(0, " during"), TextDelta(0, " render")
    ]


def test_live_error_renders_what_arrived_marked_then_passes_the_error_on() -> None:
    scheduler = TestScheduler()
    failure = ProviderError("overloaded", '{"type": "error"}')
    source = cold_timeline(scheduler, REPLY[:6], step=5, error=failure)
    log = FrameLog(scheduler)
    observer = scheduler.start(lambda: source.pipe(live(lambda: log, refresh_per_second=1)))
    assert log.kinds[-1] == "close"
    assert log.times[-1] == 231
    final = log.last.response
    assert final.text == "w0 w1 w2 w3 "
    assert final.stop_reason == "error"
    assert final.error is not None
    assert final.error.kind == "provider"
    assert observer.messages[-1] == on_error(231, failure)
    assert len(observer.messages) == 7


def test_live_dispose_renders_the_reply_as_cancelled_and_stops_rendering() -> None:
    scheduler = TestScheduler()
    source = cold_timeline(scheduler, REPLY)
    log = FrameLog(scheduler)
    observer = scheduler.start(
        lambda: source.pipe(live(lambda: log, refresh_per_second=0.1)), disposed=250
    )
    assert log.kinds[-1] == "close"
    assert log.times[-1] == 250
    assert all(time <= 250 for time in log.times)
    final = log.last.response
    assert final.stop_reason == "interrupted"
    assert final.error is not None
    assert final.error.kind == "cancelled"
    assert final.text == _text_at(249)  # the events up to the dispose, none after
    assert observer.messages[-1].time == 249
    assert source.subscriptions == [subscribe(200, 250)]


def test_live_take_until_upstream_ends_with_an_interrupted_frame() -> None:
    scheduler = TestScheduler()
    source = cold_timeline(scheduler, REPLY)
    stop = scheduler.create_hot_observable(on_next(230, "stop"))
    log = FrameLog(scheduler)
    observer = scheduler.start(lambda: source.pipe(
        ops.take_until(stop), live(lambda: log, refresh_per_second=0.1), lxo.to_response()
    ))
    assert log.times[-1] == 230
    final = log.last.response
    assert final.stop_reason == "interrupted"
    assert final.error is not None
    assert final.error.kind == "incomplete"
    response = observer.messages[0].value.value
    assert response.text == final.text == _text_at(229)
    assert observer.messages[1] == on_completed(230)


def test_live_view_failure_goes_to_on_error_and_unsubscribes() -> None:
    scheduler = TestScheduler()
    source = cold_timeline(scheduler, REPLY)
    broken = RuntimeError("the frontend went away")

    closes: list[Snapshot] = []

    class BrokenView:
        def update(self, snapshot: Snapshot) -> None:
            raise broken

        def close(self, snapshot: Snapshot) -> None:
            closes.append(snapshot)  # once, best effort, to release what the view holds
            raise RuntimeError("and it cannot close either")

    observer = scheduler.start(lambda: source.pipe(live(BrokenView, refresh_per_second=0.1)))
    # the first frame (201) fails; the next event (202) carries the failure downstream
    assert observer.messages == [on_next(201, REPLY[0]), on_error(202, broken)]
    assert source.subscriptions == [subscribe(200, 202)]
    assert len(closes) == 1


def test_live_opens_one_view_per_subscription() -> None:
    scheduler = TestScheduler()
    source = cold_timeline(scheduler, REPLY[:4])
    logs: list[FrameLog] = []

    def open_view() -> FrameLog:
        logs.append(FrameLog(scheduler))
        return logs[-1]

    displayed = source.pipe(live(open_view, refresh_per_second=1))
    displayed.subscribe(scheduler=scheduler)
    displayed.subscribe(scheduler=scheduler)
    scheduler.start()
    assert len(logs) == 2
    assert [log.last.text for log in logs] == ["w0 w1 ", "w0 w1 "]


def test_live_rejects_a_scheduler_without_timers_and_a_zero_rate() -> None:
    with pytest.raises(ValueError, match="refresh_per_second"):
        live(lambda: FrameLog(TestScheduler()), refresh_per_second=0)
    with pytest.raises(ValueError, match="timers"):
        live(lambda: FrameLog(TestScheduler()), scheduler=CurrentThreadScheduler())


def test_live_blocking_run_on_threads_ends_with_the_whole_reply() -> None:
    """``.run()`` decodes on a thread while frames render on timer threads: the builder is
    read under the lock, every frame is a prefix, and the last frame is the final one."""
    frames: list[tuple[str, Snapshot, str]] = []

    class Recorder:
        """Reads each frame while it renders, as real views do (events still arriving)."""

        def update(self, snapshot: Snapshot) -> None:
            frames.append(("update", snapshot, snapshot.response.text))

        def close(self, snapshot: Snapshot) -> None:
            frames.append(("close", snapshot, snapshot.response.text))

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: a torn read would show
    try:
        _run_threaded(frames, Recorder)
    finally:
        sys.setswitchinterval(switching)


def _run_threaded(frames: list[tuple[str, Snapshot, str]], view: type[LiveView]) -> None:
    data = capture("anthropic/thinking-signature.sse").data
    for _ in range(5):
        frames.clear()
        chunks = [data[i:i + 7] for i in range(0, len(data), 7)]  # many small reads
        response = llm_rx.from_bytes(chunks).pipe(
            live(view, refresh_per_second=1000), lxo.to_response()
        ).run()
        kinds = [kind for kind, _, _ in frames]
        assert kinds[-1] == "close"
        assert "close" not in kinds[:-1]
        assert frames[-1][1].response == response
        for _, snapshot, text in frames:
            assert response.text.startswith(text)
            # The display's builder keeps no history: a frame is materialised as it is taken
            # (under the session's lock), so the frame's moment is what was rendered.
            assert snapshot._seq is None
            assert snapshot._response.text == text


def test_live_subscription_scheduler_paces_frames_when_none_is_given() -> None:
    scheduler = TestScheduler()
    log = FrameLog(scheduler)
    events = reactivex.from_iterable(REPLY).pipe(
        ops.concat_map(lambda e: reactivex.timer(1.0).pipe(ops.map(lambda _: e)))
    )
    scheduler.start(lambda: events.pipe(live(lambda: log, refresh_per_second=0.05)))
    # the timers and the frames both ran on the TestScheduler given at subscription
    assert log.times[:3] == [201, 221, 241]
    assert log.times[-1] == 304
    assert log.last.text == "".join(WORDS)


def test_live_stream_ending_inside_an_update_closes_after_it() -> None:
    # bug class: the final frame taken while this thread renders (a view that drives its own
    # source) deadlocked on a non-re-entrant lock
    scheduler = TestScheduler()
    subject: Subject[Event] = Subject()
    calls: list[str] = []

    class DrivingView:
        def update(self, snapshot: Snapshot) -> None:
            calls.append("update")
            subject.on_next(TextDelta(0, " more"))
            subject.on_completed()  # the stream ends while this frame renders
            calls.append("update returns")

        def close(self, snapshot: Snapshot) -> None:
            calls.append(f"close {snapshot.text!r}")

    scheduler.schedule_absolute(210, lambda *_: subject.on_next(MessageStart("p")))
    scheduler.start(lambda: subject.pipe(live(DrivingView, refresh_per_second=0.1)),
                    disposed=1000)
    assert calls == ["update", "update returns", "close ' more'"]
