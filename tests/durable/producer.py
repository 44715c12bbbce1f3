"""A producer in its own process: ``python -m tests.durable.producer URL CAPTURE
[--stop-after N] [--epoch E] [--id ID]``. Appends the capture's events to the Durable Stream
``URL`` through ``to_durable_stream`` (each event its own read: one append each) and prints
``done``; with ``--stop-after N`` it appends N events, prints ``written`` and waits (to be
killed mid-reply)."""

from __future__ import annotations

import argparse
import sys

import httpx
from reactivex.subject import Subject

from llm_rx import sinks as lxs
from llm_rx.events import Event
from tests.captures import capture
from tests.redis.helpers import events_of


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("capture")
    parser.add_argument("--stop-after", type=int, default=None)
    parser.add_argument("--epoch", type=int, default=0)
    parser.add_argument("--id", default="producer")
    args = parser.parse_args()
    events = events_of(capture(args.capture))
    subject: Subject[Event] = Subject()
    failures: list[Exception] = []
    done: list[bool] = []
    lxs.to_durable_stream(subject, args.url, client=httpx.Client(timeout=30),
                          producer_id=args.id, epoch=args.epoch, heartbeat=None,
                          ).subscribe(on_error=failures.append,
                                      on_completed=lambda: done.append(True))
    for event in events[:args.stop_after]:
        subject.on_next(event)
        if failures:
            print("failed", failures[0], flush=True)
            return
    if args.stop_after is not None:
        print("written", flush=True)
        sys.stdin.read()  # (until killed)
        return
    subject.on_completed()
    print("done" if done else f"failed {failures}", flush=True)


if __name__ == "__main__":
    main()
