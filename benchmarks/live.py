"""A live stream's per-read cost, without the network: ``from_httpx`` → ``to_response()`` on an
httpx response whose reads are one SSE frame each (as ``benchmarks.http``'s ``/live`` server
writes them), against reading the same response and doing nothing.

    python -m benchmarks.live              # the table
    python -m benchmarks.live --quick      # smaller streams, fewer rounds
    python -m benchmarks.live --profile    # where the time of one stream goes (cProfile)

The response is a real ``httpx.Response`` over an in-memory byte stream, so both contenders
run httpx's own ``iter_raw`` per read, and llm-rx's whole path: the source's loop
(``sources/_httpx.py``, ``_engine.py``), the framer, the decoder, the fused builder. The table
gives nanoseconds per read: the floor (httpx's read alone), what llm-rx adds to it, the
decode + fold of the same reads in memory (``reassemble``), and the least a decoder can do for
a text frame (parse its one varying string, append it to a list). ``benchmarks.http``'s live
ratio is 1 + (llm-rx's added cost) / (the loopback floor's cost per read): the cost per read of
that floor (a socket read and an HTTP chunk each) is printed there, this one's here.
Times are medians over interleaved rounds (the machine is shared).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial

import httpx
import orjson

import llm_rx
from llm_rx import operators as lxo
from llm_rx.response import Response
from llm_rx.wire.providers import ProviderName

from . import streams

_URLS = {"openai-chat": "http://bench/v1/chat/completions",
         "anthropic": "http://bench/v1/messages"}
_TEXT = {"openai-chat": b'"delta":{"content":"', "anthropic": b'"type":"text_delta","text":"'}


class _Reads(httpx.SyncByteStream):
    """A response body that arrives in the given reads."""

    def __init__(self, reads: list[bytes]) -> None:
        self._reads = reads

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._reads)


def live_reads(body: bytes) -> list[bytes]:
    """The body a frame per read."""
    return [frame + b"\n\n" for frame in body.split(b"\n\n")[:-1]]


def response(provider: str, reads: list[bytes]) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"},
                          stream=_Reads(reads), request=httpx.Request("POST", _URLS[provider]))


def floor(provider: str, reads: list[bytes]) -> None:
    for _ in response(provider, reads).iter_raw():
        pass


def ours(provider: str, reads: list[bytes]) -> Response:
    results: list[Response] = []
    llm_rx.from_httpx(response(provider, reads)).pipe(lxo.to_response()).subscribe(
        results.append)
    return results[0]


def in_memory(provider: ProviderName, reads: list[bytes]) -> Response:
    return llm_rx.reassemble(reads, provider)


def least(provider: str, reads: list[bytes]) -> Callable[[], None]:
    """Per text frame, the least work: its string parsed from known offsets, appended."""
    marker = _TEXT[provider]
    texts = [read for read in reads if marker in read]
    sample = texts[len(texts) // 2]
    start = sample.index(marker) + len(marker) - 1
    tail = len(sample) - sample.index(b'"', start + 1) - 1
    texts = [read for read in texts if len(read) - tail - 1 > start]
    loads = orjson.loads
    varies = b'"obfuscation":"' in sample  # (the tail varies: its closing quote is found)

    def run() -> None:
        parts: list[str] = []
        append = parts.append
        if varies:
            find = bytes.find
            for read in texts:
                append(loads(read[start : find(read, b'"', start + 1) + 1]))
            return
        for read in texts:
            append(loads(read[start : len(read) - tail]))

    run.count = len(texts)  # type: ignore[attr-defined]
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer rounds")
    parser.add_argument("--profile", action="store_true", help="cProfile one stream of each")
    args = parser.parse_args(argv)
    n = 2_000 if args.quick else 10_000
    rounds = 5 if args.quick else 15
    # (stream name: its provider and body; OpenAI's chunks now end with a random string)
    bodies: dict[str, tuple[ProviderName, bytes]] = {
        "openai-chat": ("openai-chat", streams.openai_chat(n)),
        "openai-obf": ("openai-chat", streams.openai_chat(n, obfuscation=True)),
        "anthropic": ("anthropic", streams.anthropic(n))}
    if args.profile:
        for stream, (provider, body) in bodies.items():
            reads = live_reads(body)
            ours(provider, reads)
            profile = cProfile.Profile()
            profile.runcall(ours, provider, reads)
            print(f"-- {stream}: {len(reads)} reads")
            pstats.Stats(profile).sort_stats("tottime").print_stats(18)
        return 0
    print(f"{'stream':12} {'reads':>6} {'floor':>9} {'llm-rx adds':>12} {'in memory':>10} "
          f"{'least/text frame':>17}   (ns per read)")
    for stream, (provider, body) in bodies.items():
        reads = live_reads(body)
        minimum = least(provider, reads)
        assert ours(provider, reads) == in_memory(provider, reads)
        times: dict[str, list[float]] = {"floor": [], "ours": [], "memory": [], "least": []}
        contenders: dict[str, Callable[[], object]] = {
            "floor": partial(floor, provider, reads), "ours": partial(ours, provider, reads),
            "memory": partial(in_memory, provider, reads), "least": minimum}
        for _ in range(rounds):
            for name, run in contenders.items():
                gc.collect()
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
        per = len(reads) / 1e9
        added = statistics.median(o - f for o, f in zip(times["ours"], times["floor"],
                                                         strict=True)) / per
        print(f"{stream:12} {len(reads):6} {statistics.median(times['floor']) / per:9.0f} "
              f"{added:12.0f} {statistics.median(times['memory']) / per:10.0f} "
              f"{statistics.median(times['least']) / minimum.count * 1e9:17.0f}")  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(main())
