"""The emulator's plan (``llm_rx.serve._plan``), alone: a request in, its steps out, with no
server, no socket and no sleeping. Each HTTP and WebSocket fault is a list of steps here;
the two media give the same events for the same reply on ``/v1/responses``."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

import llm_rx
from llm_rx.serve import CaptureIndex
from llm_rx.serve._endpoints import Endpoint, find_endpoint
from llm_rx.serve._error_bodies import error_frame
from llm_rx.serve._faults import parse_fault
from llm_rx.serve._frames import split_frames
from llm_rx.serve._malformed import BROKEN_JSON
from llm_rx.serve._media import UNFINISHED, HttpBody, Pacing, SocketMessages
from llm_rx.serve._plan import (
    Ask,
    Cut,
    End,
    Fail,
    Medium,
    Open,
    Send,
    Stall,
    Step,
    Wait,
    plan,
)
from llm_rx.serve._replies import Emulator
from llm_rx.serve._timing import Timing
from llm_rx.testing import reply
from llm_rx.wire.messages import MESSAGE_FRAMINGS
from tests.captures import CAPTURES, HERE, Capture, capture

SSE = "text/event-stream; charset=utf-8"
CHAT = "openai/chat-text-basic.sse"
FRAMING = MESSAGE_FRAMINGS["openai-responses"]
SOCKET = SocketMessages(FRAMING)


def _endpoint(path: str) -> Endpoint:
    endpoint = find_endpoint(path, {})
    assert endpoint is not None
    return endpoint


CHAT_ENDPOINT = _endpoint("/v1/chat/completions")
RESPONSES = _endpoint("/v1/responses")


@pytest.fixture(scope="module")
def emulator() -> Emulator:
    return Emulator(CaptureIndex.load([HERE]), Pacing())


def _model(cap: Capture) -> str:
    return cap.name.rsplit(".", 1)[0].replace("/", "__")


def _chat(fault: str = "", pace: float = 0.0, **body: object) -> Ask:
    return Ask(CHAT_ENDPOINT, {"model": _model(capture(CHAT)), "stream": True, **body},
               parse_fault(fault), pace)


def _steps(ask: Ask, emulator: Emulator, medium: Medium | None = None) -> list[Step]:
    return list(plan(ask, emulator, medium or HttpBody()))


def _sent(steps: list[Step]) -> list[bytes]:
    return [step.data for step in steps if isinstance(step, Send)]


def _frames() -> list[bytes]:
    return split_frames(capture(CHAT).data, "sse")


def test_plan_a_streamed_capture_is_its_body_then_the_end(emulator: Emulator) -> None:
    steps = _steps(_chat(), emulator)
    assert steps == [Open(SSE), Send(capture(CHAT).data), End()]


def test_plan_writes_are_at_most_the_read_size(emulator: Emulator) -> None:
    steps = _steps(_chat(), emulator, HttpBody(read_size=1000))
    assert [len(data) for data in _sent(steps)[:-1]] == [1000] * (len(capture(CHAT).data) // 1000)
    assert b"".join(_sent(steps)) == capture(CHAT).data
    assert not any(isinstance(step, Wait) for step in steps)


def test_plan_a_non_stream_request_is_one_body_with_its_length(emulator: Emulator) -> None:
    steps = _steps(_chat(stream=False), emulator)
    [body] = _sent(steps)
    assert steps == [Open("application/json", {"content-length": str(len(body))}), Send(body),
                     End()]
    assert orjson.loads(body)["object"] == "chat.completion"


def test_plan_at_a_pace_waits_for_each_frame_s_tick(emulator: Emulator) -> None:
    frames = _frames()
    steps = _steps(_chat(pace=4.0), emulator)
    want: list[Step] = [Open(SSE), Send(frames[0])]
    for index, frame in enumerate(frames[1:], 1):
        want += [Wait(index / 4.0), Send(frame)]
    assert steps == [*want, End()]


def test_plan_a_status_fault_fails_and_leaves_the_queue(emulator: Emulator) -> None:
    emulator.script.put([reply("kept")])
    try:
        steps = _steps(_chat("status=429,retry-after=2"), emulator)
        assert steps == [Fail(429, "fault injected: status=429", {"retry-after": "2"})]
        assert _steps(_chat("status=400"), emulator) == [Fail(400, "fault injected: status=400")]
        assert len(emulator.script) == 1
    finally:
        emulator.script.clear()


def test_plan_an_unknown_capture_fails_404(emulator: Emulator) -> None:
    [fail] = _steps(Ask(CHAT_ENDPOINT, {"model": "no-such-capture", "stream": True}), emulator)
    assert isinstance(fail, Fail)
    assert fail.status == 404
    assert "'no-such-capture'" in fail.message


def test_plan_the_capture_header_names_the_capture(emulator: Emulator) -> None:
    ask = Ask(CHAT_ENDPOINT, {"model": "x", "stream": True}, capture=_model(capture(CHAT)))
    assert _sent(_steps(ask, emulator)) == [capture(CHAT).data]


def test_plan_a_queued_reply_answers_first(emulator: Emulator) -> None:
    emulator.script.put([reply("scripted words")])
    steps = _steps(_chat(), emulator)
    assert len(emulator.script) == 0
    assert llm_rx.reassemble(b"".join(_sent(steps)), "openai-chat").text == "scripted words"
    assert steps[0] == Open(SSE)
    assert steps[-1] == End()


def test_plan_drop_after_sends_that_many_bytes_then_cuts(emulator: Emulator) -> None:
    steps = _steps(_chat("drop-after=100"), emulator)
    assert steps == [Open(SSE), Send(capture(CHAT).data[:100]),
                     Cut("fault injected: drop-after=100")]


def test_plan_drop_after_past_the_body_still_cuts_its_end(emulator: Emulator) -> None:
    steps = _steps(_chat("drop-after=999999"), emulator)
    assert steps == [Open(SSE), Send(capture(CHAT).data), Cut("fault injected: drop-after=999999")]


def test_plan_a_stall_holds_at_its_byte_and_the_pace_goes_on(emulator: Emulator) -> None:
    frames = _frames()
    at = len(frames[0]) + 10  # (inside the second frame: its write is cut there)
    steps = _steps(_chat(f"stall-after={at},stall=0.5", pace=2.0), emulator)
    assert steps[:6] == [Open(SSE), Send(frames[0]), Wait(0.5), Send(frames[1][:10]),
                         Stall(0.5), Send(frames[1][10:])]
    assert steps[6] == Wait(1.0)
    assert b"".join(_sent(steps)) == capture(CHAT).data
    assert steps[-1] == End()


def test_plan_a_stall_and_a_drop_at_one_byte_hold_then_cut(emulator: Emulator) -> None:
    steps = _steps(_chat("stall-after=50,stall=1,drop-after=50"), emulator)
    assert steps == [Open(SSE), Send(capture(CHAT).data[:50]), Stall(1.0),
                     Cut("fault injected: drop-after=50")]


def test_plan_error_after_ends_with_the_provider_s_error_frame(emulator: Emulator) -> None:
    frames = _frames()
    steps = _steps(_chat(f"error-after={len(frames[0]) + 1}"), emulator)
    error = error_frame("openai-chat", "sse", f"fault injected: error-after={len(frames[0]) + 1}")
    assert _sent(steps) == [frames[0] + frames[1] + error]
    assert steps[-1] == End()


def test_plan_malformed_replaces_the_middle_frame(emulator: Emulator) -> None:
    frames = _frames()
    body = b"".join(_sent(_steps(_chat("malformed"), emulator)))
    after = split_frames(body, "sse")
    assert len(after) == len(frames)
    changed = [i for i, (a, b) in enumerate(zip(frames, after, strict=True)) if a != b]
    assert changed == [len(frames) // 2]
    assert BROKEN_JSON in after[changed[0]]


def test_plan_malformed_non_stream_is_broken_json(emulator: Emulator) -> None:
    steps = _steps(_chat("malformed", stream=False), emulator)
    assert steps == [Open("application/json", {"content-length": str(len(BROKEN_JSON))}),
                     Send(BROKEN_JSON), End()]


@pytest.fixture
def timed(tmp_path: Path) -> Emulator:
    """An emulator over one capture recorded with its timing: three reads."""
    data = capture(CHAT).data
    (tmp_path / "openai").mkdir()
    shutil.copy(HERE / CHAT, tmp_path / "openai" / "timed.sse")
    reads = ((0.0, 100), (0.25, 1000), (0.5, len(data) - 1100))
    (tmp_path / "openai" / "timed.timing.json").write_bytes(Timing(0.3, reads).to_json())
    return Emulator(CaptureIndex.load([tmp_path]), Pacing())


def test_plan_recorded_timing_sends_each_read_at_its_time(timed: Emulator) -> None:
    data = capture(CHAT).data
    ask = Ask(CHAT_ENDPOINT, {"model": "openai__timed", "stream": True}, replay_speed=2.0)
    steps = _steps(ask, timed)
    assert steps == [Open(SSE), Send(data[:100]), Wait(0.125), Send(data[100:1100]), Wait(0.375),
                     Send(data[1100:]), End()]


def test_plan_recorded_timing_with_a_stall_and_small_writes(timed: Emulator) -> None:
    data = capture(CHAT).data
    ask = Ask(CHAT_ENDPOINT, {"model": "openai__timed", "stream": True},
              parse_fault("stall-after=50,stall=3"), replay_speed=1.0)
    steps = _steps(ask, timed, HttpBody(read_size=600))
    assert steps == [Open(SSE), Send(data[:50]), Stall(3.0), Send(data[50:100]), Wait(0.25),
                     Send(data[100:700]), Send(data[700:1100]), Wait(0.75), *(
                         Send(data[at : min(at + 600, len(data))])
                         for at in range(1100, len(data), 600)), End()]


def test_plan_no_recorded_timing_without_a_speed_or_with_a_fault_that_changes_frames(
    timed: Emulator,
) -> None:
    body = {"model": "openai__timed", "stream": True}
    for ask in (Ask(CHAT_ENDPOINT, body), Ask(CHAT_ENDPOINT, body, parse_fault("malformed"),
                                               replay_speed=1.0)):
        steps = _steps(ask, timed)
        assert not any(isinstance(step, Wait) for step in steps)
        assert len(_sent(steps)) == 1


# -- a socket: one event a message


def _responses(cap: Capture, fault: str = "", pace: float = 0.0) -> Ask:
    return Ask(RESPONSES, {"type": "response.create", "model": _model(cap)}, parse_fault(fault),
               pace)


BASIC = capture("openai/responses-basic-llm.sse")


def _events(data: bytes) -> list[bytes]:
    return [m.encode() for frame in split_frames(data, "sse") for m in FRAMING.messages(frame)]


def test_plan_over_a_socket_each_event_is_one_send(emulator: Emulator) -> None:
    steps = _steps(_responses(BASIC, pace=10.0), emulator, SOCKET)
    events = _events(BASIC.data)
    want: list[Step] = [Open(SSE), Send(events[0])]
    for index, event in enumerate(events[1:], 1):
        want += [Wait(index / 10.0), Send(event)]
    assert steps == [*want, End()]


def test_plan_over_a_socket_a_drop_comes_before_the_event_that_passes_it(
    emulator: Emulator,
) -> None:
    events = _events(BASIC.data)
    at = len(events[0]) + len(events[1]) + 1
    steps = _steps(_responses(BASIC, f"drop-after={at},stall-after={at}"), emulator, SOCKET)
    assert steps == [Open(SSE), Send(events[0]), Send(events[1]),
                     Cut(f"fault injected: drop-after={at}")]
    steps = _steps(_responses(BASIC, f"stall-after={at},stall=2"), emulator, SOCKET)
    assert steps[3:5] == [Stall(2.0), Send(events[2])]
    assert steps[-1] == End()


def test_plan_over_a_socket_counts_past_the_end_do_not_hold_it(emulator: Emulator) -> None:
    steps = _steps(_responses(BASIC, "drop-after=999999,stall-after=999999"), emulator, SOCKET)
    assert _sent(steps) == _events(BASIC.data)
    assert steps[-1] == End()


def test_plan_over_a_socket_error_after_keeps_whole_events(emulator: Emulator) -> None:
    events = _events(BASIC.data)
    at = len(events[0]) + 1
    sent = _sent(_steps(_responses(BASIC, f"error-after={at}"), emulator, SOCKET))
    assert sent[0] == events[0]
    assert len(sent) == 2
    assert orjson.loads(sent[1])["type"] == "error"


def test_plan_over_a_socket_a_capture_without_its_end_is_cut(tmp_path: Path) -> None:
    cut = b"\n\n".join(e for e in BASIC.data.split(b"\n\n") if b"response.completed" not in e)
    (tmp_path / "openai").mkdir()
    (tmp_path / "openai" / "cut.partial.sse").write_bytes(cut)
    emulator = Emulator(CaptureIndex.load([tmp_path]), Pacing())
    ask = Ask(RESPONSES, {"type": "response.create", "model": "openai__cut.partial"})
    steps = _steps(ask, emulator, SOCKET)
    assert steps[-1] == Cut(UNFINISHED)
    assert _sent(steps) == _events(cut)
    assert _steps(ask, emulator)[-1] == End()  # (an HTTP body ends where its bytes do)


@pytest.mark.parametrize("cap", CAPTURES, ids=lambda cap: cap.name)
def test_plan_http_and_socket_send_the_same_events(cap: Capture, emulator: Emulator) -> None:
    """Every capture on /v1/responses: the HTTP body's events are the socket's messages."""
    ask = Ask(RESPONSES, {"model": _model(cap), "stream": True})
    body, socket = _steps(ask, emulator), _steps(ask, emulator, SOCKET)
    if isinstance(body[0], Fail):
        assert socket == body
        return
    sent = _sent(socket)
    assert sent == _events(b"".join(_sent(body)))
    assert body[-1] == End()
    assert socket[-1] == (End() if sent and FRAMING.last(sent[-1]) else Cut(UNFINISHED))
