"""Replies through Redis Streams: events per second written by ``to_redis`` and followed by
``from_redis``, and the latency an event gains on loopback (handed to ``to_redis`` -> received
by a follower blocked in XREAD).

    python3 -m benchmarks.redis_stream [PORT]

Starts its own ``redis-server`` (no persistence) on a free port unless PORT is given.
"""

from __future__ import annotations

import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import reactivex
import redis
from reactivex import abc
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx import sinks as lxs
from llm_rx.events import Event, TextDelta
from llm_rx.sources import EventSource, from_redis
from llm_rx.sources._source import Reading

CAPTURE = Path(__file__).parents[1] / "tests/captures/openai/chat-text-basic.sse"


def _server() -> tuple[int, subprocess.Popen[bytes]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    exe = shutil.which("redis-server") or "redis-server"
    process = subprocess.Popen(
        [exe, "--save", "", "--appendonly", "no", "--port", str(port), "--bind", "127.0.0.1",
         "--dir", tempfile.mkdtemp()],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            return port, process
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class _Reads(EventSource):
    """Events in reads of ``size``, as a source decoding a connection's reads gives them."""

    def __init__(self, events: list[Event], size: int) -> None:
        super().__init__()
        self._events, self._size = events, size

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        for i in range(0, len(self._events), self._size):
            reading.emit(self._events[i : i + self._size])
        reading.end(None)
        return Disposable()


def throughput(client: redis.Redis) -> tuple[int, float, float, float]:
    """A long reply (the capture's text deltas repeated 200 times): written one event per
    round trip, written one read (64 events) per round trip, and followed to a Response."""
    events = llm_rx.from_bytes(CAPTURE.read_bytes(), "openai-chat").pipe(ops.to_list()).run()
    deltas = [event for event in events if isinstance(event, TextDelta)]
    long = events[:3] + deltas * 200 + events[3:]
    start = time.perf_counter()
    reactivex.from_iterable(long).pipe(lxs.to_redis(client, "bench-per-event")).run()
    per_event = time.perf_counter() - start
    start = time.perf_counter()
    _Reads(long, 64).pipe(lxs.to_redis(client, "bench-batched")).run()
    batched = time.perf_counter() - start
    start = time.perf_counter()
    followed = from_redis(client, "bench-batched").pipe(lxo.to_response()).run()
    read = time.perf_counter() - start
    assert followed.complete
    n = len(long)
    return n, n / per_event, n / batched, n / read


def latency(port: int, samples: int = 300) -> list[float]:
    """Seconds from handing an event to to_redis to a blocked follower receiving it."""
    producer, follower = redis.Redis(port=port), redis.Redis(port=port)
    sent: dict[int, float] = {}
    got: list[float] = []
    arrived = threading.Event()

    def seen(event: Event) -> None:
        if isinstance(event, TextDelta):
            got.append(time.perf_counter() - sent[int(event.text)])
            arrived.set()

    thread = threading.Thread(target=lambda: from_redis(follower, "bench-latency").subscribe(
        seen, print))
    thread.start()
    subject: Subject[Event] = Subject()
    subject.pipe(lxs.to_redis(producer, "bench-latency")).subscribe(on_error=print)
    for n in range(samples):
        arrived.clear()
        sent[n] = time.perf_counter()
        subject.on_next(TextDelta(0, str(n)))
        arrived.wait(5)
    subject.on_completed()
    thread.join(10)
    return sorted(got)


def main() -> None:
    port, process = (int(sys.argv[1]), None) if len(sys.argv) > 1 else _server()
    try:
        count, per_event, batched, read = throughput(redis.Redis(port=port))
        lat = latency(port)
        print(f"events in the reply: {count}")
        print(f"to_redis, a round trip per event:     {per_event:10.0f} events/s")
        print(f"to_redis, a round trip per read (64): {batched:10.0f} events/s")
        print(f"from_redis -> to_response:            {read:10.0f} events/s")
        print(f"added latency per event (loopback): median {statistics.median(lat) * 1e6:.0f} "
              f"us, p99 {lat[int(len(lat) * 0.99)] * 1e6:.0f} us")
    finally:
        if process is not None:
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
