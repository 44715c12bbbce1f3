"""``llm-rx record`` in front of the emulator itself (no network): replies pass through
unchanged and live; each is written as a capture that reassembles to the upstream's reply,
with its read timing and without a credential; ``--timing recorded`` replays the pauses.

Timing checks are CPU-independent where they can be: bytes never arrive before the upstream
sent them (a lower bound that holds on any machine), and the replay schedule is checked
exactly on the server's own clock; the upper bounds are loose (a busy machine is late).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import pytest

import llm_rx
from llm_rx.serve import EmulatorThread
from llm_rx.serve._frames import split_frames
from llm_rx.serve._media import Pacing, writes
from llm_rx.serve._record_main import RecorderThread
from llm_rx.serve._timing import Timing, timing_of
from llm_rx.testing import reply
from tests.captures import capture

PACE = 50.0  # frames per second upstream: 20 ms between frames
# Times are counted from the first read, which holds every byte sent by then: a later read
# looks early only by as much as the upstream was late with that first read's last frame (a
# frame's period on an idle machine; more under load, hence the slack).
EARLY = 0.1
SECRETS = {"authorization": "Bearer sk-live-SECRET-1", "x-api-key": "SECRET-2",
           "api-key": "SECRET-3", "x-goog-api-key": "SECRET-4"}
ANTHROPIC = "anthropic/text-basic.sse"
OPENAI = "openai/chat-text-basic.sse"


@pytest.fixture(scope="module")
def upstream() -> Iterator[EmulatorThread]:
    paths = [capture(ANTHROPIC).path, capture(OPENAI).path]
    with EmulatorThread(paths, pace=PACE, keep_credentials=True) as server:  # (what went on)
        yield server


@pytest.fixture
def proxy(upstream: EmulatorThread, tmp_path: Path) -> Iterator[RecorderThread]:
    with RecorderThread(upstream.url, tmp_path / "recorded") as recorder:
        yield recorder


def timed_read(url: str, body: dict[str, object],
               headers: dict[str, str] | None = None) -> tuple[bytes, list[tuple[float, int]]]:
    """The body and, per read, (seconds after the first read, bytes so far)."""
    marks: list[tuple[float, int]] = []
    got = b""
    with httpx.Client(timeout=10) as client, client.stream("POST", url, json=body,
                                                           headers=headers) as answer:
        assert answer.status_code == 200
        for chunk in answer.iter_raw():
            got += chunk
            marks.append((time.monotonic(), len(got)))
    start = marks[0][0]
    return got, [(at - start, size) for at, size in marks]


def test_a_stream_passes_through_unchanged_and_is_recorded(
    upstream: EmulatorThread, proxy: RecorderThread
) -> None:
    body = {"model": "text-basic", "max_tokens": 9, "messages": [], "stream": True}
    direct = httpx.post(f"{upstream.url}/v1/messages", json=body, timeout=10).content
    relayed, _ = timed_read(f"{proxy.url}/v1/messages", body, SECRETS)
    assert relayed == direct
    assert proxy.wait(1)
    (saved,) = proxy.saved
    assert saved.parent.name == "anthropic"
    assert saved.name == "text-basic-001.sse"
    assert saved.read_bytes() == direct
    original = llm_rx.reassemble(capture(ANTHROPIC).path, "anthropic")
    assert llm_rx.reassemble(saved, "anthropic") == original


def test_no_credential_reaches_a_file(upstream: EmulatorThread, proxy: RecorderThread) -> None:
    body = {"model": "text-basic", "max_tokens": 9, "messages": [], "stream": True}
    timed_read(f"{proxy.url}/v1/messages", body, SECRETS)
    with anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-SECRET-5",
                             max_retries=0) as client, client.messages.stream(
            model="text-basic", max_tokens=9, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        assert stream.get_final_message().stop_reason == "end_turn"
    upstream.queue(reply("keyed"))
    keyed = httpx.post(f"{proxy.url}/v1beta/models/gemini-x:streamGenerateContent", timeout=10,
                       params={"alt": "sse", "key": "SECRET-6"}, json={"contents": []})
    assert llm_rx.reassemble(keyed.content).text == "keyed"
    assert proxy.wait(3)
    assert upstream.requests[-1].query["key"] == "SECRET-6"
    seen = upstream.requests[-3:-1]
    assert seen[0].headers["x-goog-api-key"] == "SECRET-4"  # (passed on upstream)
    sdk = seen[1].headers
    assert "sk-ant-SECRET-5" in sdk.get("x-api-key", "") + sdk.get("authorization", "")
    files = [path for path in proxy.saved[0].parent.parent.rglob("*") if path.is_file()]
    assert len(files) == 6  # three captures, three timings
    for path in files:
        text = path.read_bytes()
        assert b"SECRET" not in text, path
        assert b"x-api-key" not in text.lower(), path


def test_recorded_gaps_follow_the_upstream_pace(upstream: EmulatorThread,
                                                proxy: RecorderThread) -> None:
    body = {"model": "chat-text-basic", "messages": [], "stream": True}
    data, _ = timed_read(f"{proxy.url}/v1/chat/completions", body)
    assert proxy.wait(1)
    timing = timing_of(proxy.saved[0])
    assert timing is not None
    assert sum(size for _, size in timing.reads) == len(data)
    frames = split_frames(data, "sse")
    starts = [sum(map(len, frames[:index])) for index in range(len(frames))]
    at, received, first = 0.0, 0, None
    for index, (gap, size) in enumerate(timing.reads):
        at += gap if index else 0.0
        received += size
        last_frame = max(i for i, start in enumerate(starts) if start < received)
        first = last_frame if first is None else first
        assert at >= (last_frame - first) / PACE - EARLY  # (no byte before it was sent)
    assert at <= (len(frames) - 1) / PACE + 2.0


def test_the_replay_schedule_is_the_recorded_one_exactly() -> None:
    timing = Timing(0.3, ((0.0, 3), (0.02, 2), (0.5, 4)))
    assert timing.schedule() == (0.0, 0.02, 0.52)
    assert timing.schedule(2.0) == (0.0, 0.01, 0.26)
    pieces = timing.split(b"abcdefghi")
    assert pieces == [b"abc", b"de", b"fghi"]
    assert timing.split(b"abc") is None
    sent = list(writes(pieces, Pacing(0.0, 2, timing.schedule(2.0))))
    assert sent == [(0.0, b"ab"), (0.0, b"c"), (0.01, b"de"), (0.26, b"fg"), (0.26, b"hi")]


def test_serve_replays_the_recorded_timing(upstream: EmulatorThread,
                                           proxy: RecorderThread) -> None:
    body = {"model": "chat-text-basic", "messages": [], "stream": True}
    data, _ = timed_read(f"{proxy.url}/v1/chat/completions", body)
    assert proxy.wait(1)
    timing = timing_of(proxy.saved[0])
    assert timing is not None
    folder = proxy.saved[0].parent.parent
    speed = 2.0
    recorded = timing.schedule(speed)
    with EmulatorThread([folder], replay_speed=speed) as replay:
        model = "openai-chat__chat-text-basic-001"
        again, marks = timed_read(f"{replay.url}/v1/chat/completions",
                                  {"model": model, "messages": [], "stream": True})
        assert again == data
        ends = [sum(size for _, size in timing.reads[: i + 1]) for i in range(len(recorded))]
        origin = None
        for at, received in marks:  # (never before its recorded time, over speed)
            index = next(i for i, end in enumerate(ends) if end >= received)
            origin = recorded[index] if origin is None else origin
            assert at >= recorded[index] - origin - EARLY
        assert marks[-1][0] <= recorded[-1] + 1.0
    # without --timing recorded, the same folder is served at the server's pace
    with EmulatorThread([folder]) as fast:
        fast_data, _ = timed_read(f"{fast.url}/v1/chat/completions",
                                  {"model": model, "messages": [], "stream": True})
    assert fast_data == data


def test_a_scripted_upstream_is_recorded_too(upstream: EmulatorThread,
                                             proxy: RecorderThread) -> None:
    upstream.queue(reply("recorded", usage={"input_tokens": 3, "output_tokens": 1}))
    with httpx.Client(timeout=10) as client:
        answer = client.post(f"{proxy.url}/v1beta/models/gemini-x:streamGenerateContent",
                             params={"alt": "sse"}, json={"contents": []})
        plain = client.post(f"{proxy.url}/v1/chat/completions",
                            json={"model": "chat-text-basic", "messages": []})
    assert answer.status_code == plain.status_code == 200
    assert proxy.wait(2)
    stream, body = proxy.saved
    assert (stream.parent.name, stream.suffix) == ("gemini", ".sse")
    assert llm_rx.reassemble(stream).text == "recorded"
    assert body.name.endswith(".nonstream.json")
    assert llm_rx.reassemble(body).text == llm_rx.reassemble(capture(OPENAI).path).text


def test_a_stream_is_passed_on_live_and_a_cut_one_is_not_written(
    upstream: EmulatorThread, proxy: RecorderThread
) -> None:
    before = upstream.stats["disconnected"]
    body = {"model": "text-basic", "max_tokens": 9, "messages": [], "stream": True}
    stalled = {"x-llm-rx-fault": "stall-after=300", "x-llm-rx-pace": "0"}
    with httpx.Client(timeout=10) as client, client.stream(
            "POST", f"{proxy.url}/v1/messages", json=body, headers=stalled) as answer:
        first = next(answer.iter_raw())  # (the upstream sends nothing more: this came live)
        assert first.startswith(b"event: message_start")
    # the client went away: the proxy lets the upstream go, and writes nothing
    assert upstream.stats.wait("disconnected", before + 1, timeout=10)
    assert proxy.saved == []


def test_a_request_too_large_or_an_upstream_down_is_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llm_rx.serve import _record

    monkeypatch.setattr(_record, "MAX_REQUEST", 10)
    with RecorderThread("http://127.0.0.1:9", tmp_path) as proxy, httpx.Client(
            timeout=10) as client:  # (port 9, discard: nothing listens on loopback)
        assert client.post(f"{proxy.url}/v1/messages", content=b"x" * 11).status_code == 413
        down = client.post(f"{proxy.url}/v1/messages", content=b"{}")
    assert down.status_code == 502
    assert "upstream" in down.json()["error"]["message"]
    assert proxy.saved == []


def test_a_path_no_provider_uses_is_recorded_from_the_stream_itself(
    upstream: EmulatorThread, tmp_path: Path
) -> None:
    # (an upstream URL with the version in it: the client's path is no provider's own)
    with RecorderThread(f"{upstream.url}/v1", tmp_path) as proxy:
        streamed = httpx.post(f"{proxy.url}/chat/completions", timeout=10,
                              json={"model": "chat-text-basic", "messages": [], "stream": True})
        plain = httpx.post(f"{proxy.url}/chat/completions", timeout=10,
                           json={"model": "chat-text-basic", "messages": []})
        assert streamed.status_code == plain.status_code == 200
        assert proxy.wait(1)
        (saved,) = proxy.saved  # (the non-stream body of an unknown path is not written)
    assert saved.relative_to(tmp_path).as_posix() == "openai-chat/chat-text-basic-001.sse"
    assert saved.read_bytes() == streamed.content
