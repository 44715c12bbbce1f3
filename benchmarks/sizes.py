"""``reassemble`` at the sizes users stream, against a plain parse loop (the floor).

    python -m benchmarks.sizes             # every stream kind at 50, 200 and 1,000 events
    python -m benchmarks.sizes --rounds 9  # fewer rounds (a quicker, noisier table)
    python -m benchmarks.sizes --live      # also a frame per read, as a live connection reads

Replies of 50, 200 and 1,000 events, generated as the APIs send them (see
``benchmarks.real_streams``: OpenAI's per-chunk ``obfuscation``, Anthropic's 0-15 spaces of
padding, Responses' ``sequence_number`` and ``obfuscation``, Bedrock's random ``p``, ids that
differ per reply), each read whole and in 1 KiB reads (a live stream's size). Everything is
measured in this one process, CPU time (``time.process_time``), llm-rx and the floor
interleaved round by round on the same bytes; a sample is a batch of distinct replies (so a
decoder cannot profit from having seen the same reply), and the table gives, per row, the
median over rounds of llm-rx's time over the floor's in the same round, with the spread
(the 25th and 75th percentiles of that ratio).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import struct
import sys
import time
from collections.abc import Callable

import orjson

import llm_rx
from llm_rx.response import Response

from . import real_streams
from .run import floor_gemini, floor_ollama

Floor = Callable[[list[bytes]], str]


def _sse_payloads(chunks: list[bytes]) -> list[bytes]:
    out = []
    for frame in b"".join(chunks).split(b"\n\n"):
        start = frame.find(b"data: ")
        if start >= 0 and frame[start + 6 : start + 7] == b"{":
            out.append(frame[start + 6 :])
    return out


def floor_openai(chunks: list[bytes]) -> str:
    out: list[str] = []
    for payload in _sse_payloads(chunks):
        for choice in orjson.loads(payload)["choices"]:
            text = choice["delta"].get("content")
            if text:
                out.append(text)
    return "".join(out)


def floor_anthropic(chunks: list[bytes]) -> str:
    out: list[str] = []
    for payload in _sse_payloads(chunks):
        event = orjson.loads(payload)
        if event["type"] == "content_block_delta":
            delta = event["delta"]
            text = delta.get("text") or delta.get("thinking")
            if text:
                out.append(text)
    return "".join(out)


def floor_responses(chunks: list[bytes]) -> str:
    out: list[str] = []
    for payload in _sse_payloads(chunks):
        event = orjson.loads(payload)
        if event["type"] == "response.output_text.delta":
            out.append(event["delta"])
    return "".join(out)


def floor_bedrock(chunks: list[bytes]) -> str:
    """The event-stream prelude read for each message's length, its JSON payload parsed (no
    header or checksum checked: less than a client does)."""
    body = b"".join(chunks)
    out: list[str] = []
    pos = 0
    while pos + 12 <= len(body):
        total, headers = struct.unpack_from(">II", body, pos)
        event = orjson.loads(body[pos + 12 + headers : pos + total - 4])
        delta = event.get("delta")
        if delta:
            text = delta.get("text")
            if text:
                out.append(text)
        pos += total
    return "".join(out)


#: (title, the generator of one reply, its floor).
KINDS: list[tuple[str, Callable[[int, int], bytes], Floor]] = [
    ("openai chat (obfuscation)", real_streams.openai_chat, floor_openai),
    ("anthropic (padded)", real_streams.anthropic, floor_anthropic),
    ("gemini", real_streams.gemini, floor_gemini),
    ("ollama /api/chat", real_streams.ollama, floor_ollama),
    ("openai responses", real_streams.responses, floor_responses),
    ("bedrock converse-stream", real_streams.bedrock, floor_bedrock),
]
SIZES = (50, 200, 1_000)
READS: tuple[tuple[str, int | None], ...] = (("whole", None), ("1 KiB", 1024))


LIVE = ("frame", 0)  # (``--live``: each frame a read of its own)


def _reads(body: bytes, size: int | None) -> list[bytes]:
    if size is None:
        return [body]
    if size == 0:
        return _frames(body)
    return [body[i : i + size] for i in range(0, len(body), size)]


def _frames(body: bytes) -> list[bytes]:
    """Each frame of a body a read of its own: an SSE event, an NDJSON line, an event-stream
    message (its length first)."""
    if body[:1] == b"{":
        return [line + b"\n" for line in body.split(b"\n") if line]
    if body[:1].isalpha() or body[:1] == b":":
        return [event + b"\n\n" for event in body.split(b"\n\n") if event]
    reads, at = [], 0
    while at < len(body):
        (length,) = struct.unpack_from(">I", body, at)
        reads.append(body[at : at + length])
        at += length
    return reads


def _cpu(run: Callable[[list[bytes]], object], batch: list[list[bytes]]) -> float:
    gc.collect()
    start = time.process_time()
    for reads in batch:
        run(reads)
    return time.process_time() - start


def _reassemble(reads: list[bytes]) -> Response:
    return llm_rx.reassemble(reads)


def row(make: Callable[[int, int], bytes], floor: Floor, n: int, size: int | None,
        rounds: int) -> tuple[float, float, float, float]:
    """Median ratio llm-rx / floor, its 25th and 75th percentiles, and llm-rx's median CPU
    microseconds per reply."""
    replies = max(4, 4_000 // n)  # a batch of distinct replies: ~4,000 events a sample
    batch = [_reads(make(n, seed), size) for seed in range(replies)]
    for reads in batch[:2]:  # (both checked once: they give the same text)
        assert floor(reads) == _reassemble(reads).text, "the floor and llm-rx disagree"
    ratios, ours = [], []
    for _ in range(rounds):
        base = _cpu(floor, batch)
        mine = _cpu(_reassemble, batch)
        ratios.append(mine / base)
        ours.append(mine / replies)
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return statistics.median(ratios), q1, q3, statistics.median(ours) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds per row")
    parser.add_argument("--kind", help="only the kinds whose title contains this")
    parser.add_argument("--live", action="store_true",
                        help="also each frame a read of its own (a live connection's reads)")
    args = parser.parse_args(argv)
    reads = (*READS, LIVE) if args.live else READS
    print(f"{'stream':28} {'events':>6} {'reads':>6} {'x floor':>8} {'(q1-q3)':>13} "
          f"{'µs/reply':>9}", flush=True)
    for title, make, floor in KINDS:
        if args.kind and args.kind not in title:
            continue
        for n in SIZES:
            for label, size in reads:
                median, q1, q3, micros = row(make, floor, n, size, args.rounds)
                print(f"{title:28} {n:6} {label:>6} {median:7.2f}x  ({q1:4.2f}-{q3:4.2f}) "
                      f"{micros:9.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
