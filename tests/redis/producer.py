"""A producer in its own process: ``python -m tests.redis.producer PORT KEY CAPTURE
[--pace SECONDS] [--stop-after N]``. Writes the capture's events to Redis through
``to_redis`` (paced, or all at once) and prints the Response JSON; with ``--stop-after N`` it
writes N events, prints ``written`` and waits (to be killed mid-reply)."""

from __future__ import annotations

import argparse
import sys

import reactivex
import redis
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx import sinks as lxs
from llm_rx.events import Event
from tests.captures import capture


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("key")
    parser.add_argument("capture")
    parser.add_argument("--pace", type=float, default=0.0)
    parser.add_argument("--stop-after", type=int, default=None)
    args = parser.parse_args()
    client = redis.Redis(port=args.port, socket_timeout=10)
    recorded = capture(args.capture)
    events: reactivex.Observable[Event] = llm_rx.from_bytes(recorded.data, recorded.provider)
    if args.stop_after is not None:
        subject: Subject[Event] = Subject()
        subject.pipe(lxs.to_redis(client, args.key)).subscribe(on_error=print)
        first = events.pipe(ops.take(args.stop_after), ops.to_list())
        for event in first.run():
            subject.on_next(event)
        print("written", flush=True)
        sys.stdin.read()  # (until killed)
        return
    if args.pace:
        events = events.pipe(lxo.paced(args.pace))
    response = events.pipe(lxs.to_redis(client, args.key), lxo.to_response()).run()
    print(response.model_dump_json(), flush=True)


if __name__ == "__main__":
    main()
