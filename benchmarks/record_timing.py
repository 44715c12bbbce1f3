"""How faithfully ``llm-rx record`` keeps a reply's timing, and ``llm-rx serve --timing
recorded`` gives it back: a paced emulator is recorded through the proxy, then the capture is
replayed, and each read's time is compared with the pace that sent it (recording) and with
the recorded schedule (replay).

    python -m benchmarks.record_timing                # pace 50 frames/s, 5 rounds
    python -m benchmarks.record_timing --pace 100 --rounds 3

Reported: the recorded stream's duration over the paced one (from the first read's last
frame to the end), per round; and, in ms over every read of every round, each recorded
read's time after the upstream sent the last frame it holds, and each replayed read's time
after its recorded schedule, both counted from the first read (which takes all that was
sent by then: a read looks early only by as much as the sender was late with that first
read's frames). Wall-clock figures: a busy machine is later.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from llm_rx.serve import EmulatorThread, RecorderThread
from llm_rx.serve._frames import split_frames
from llm_rx.serve._timing import timing_of

CAPTURE = Path(__file__).resolve().parent.parent / "tests/captures/openai/chat-text-basic.sse"
BODY = {"model": "chat-text-basic", "messages": [], "stream": True}


def _read(url: str, body: dict[str, object]) -> tuple[bytes, list[tuple[float, int]]]:
    marks: list[tuple[float, int]] = []
    got = b""
    with httpx.Client(timeout=30) as client, client.stream("POST", url, json=body) as answer:
        for chunk in answer.iter_raw():
            got += chunk
            marks.append((time.monotonic(), len(got)))
    return got, [(at - marks[0][0], size) for at, size in marks]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pace", type=float, default=50.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    recorded_late: list[float] = []
    replay_late: list[float] = []
    durations: list[float] = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as out, EmulatorThread(
                [CAPTURE], pace=args.pace) as upstream, RecorderThread(upstream.url,
                                                                       out) as proxy:
            data, _ = _read(f"{proxy.url}/v1/chat/completions", BODY)
            assert proxy.wait(1)
            path = proxy.saved[0]
            timing = timing_of(path)
            assert timing is not None
            starts = [len(b"".join(split_frames(data, "sse")[:i]))
                      for i in range(len(split_frames(data, "sse")))]
            at, received, first = 0.0, 0, None
            for index, (gap, size) in enumerate(timing.reads):
                at += gap if index else 0.0
                received += size
                frame = max(i for i, start in enumerate(starts) if start < received)
                first = frame if first is None else first  # (all the first read had)
                recorded_late.append((at - (frame - first) / args.pace) * 1000)
            durations.append(at / ((len(starts) - 1 - first) / args.pace))
            schedule = timing.schedule()
            ends = [sum(size for _, size in timing.reads[: i + 1]) for i in range(len(schedule))]
            with EmulatorThread([path.parent.parent], replay_speed=1.0) as replay:
                model = f"openai-chat__{path.stem}"
                _, marks = _read(f"{replay.url}/v1/chat/completions", {**BODY, "model": model})
            origin = None
            for when, received in marks:
                index = next(i for i, end in enumerate(ends) if end >= received)
                origin = schedule[index] if origin is None else origin
                replay_late.append((when - (schedule[index] - origin)) * 1000)
    print(f"{'recorded duration / paced duration':40} median "
          f"{statistics.median(durations):7.3f}   max {max(durations):7.3f}   "
          f"min {min(durations):7.3f}   n={len(durations)}")
    for name, values in (("recorded read after its send (ms)", recorded_late),
                         ("replayed read after its schedule (ms)", replay_late)):
        print(f"{name:40} median {statistics.median(values):7.2f}   max {max(values):7.2f}   "
              f"min {min(values):7.2f}   n={len(values)}")


if __name__ == "__main__":
    main()
