"""Side-by-side benchmark: llm-rx against a plain parse loop (the floor) and the SDK helpers.

    python -m benchmarks.run            # the full table (about a minute or two)
    python -m benchmarks.run --quick    # smaller streams, fewer rounds

``observed, ...``: the display, the reassembly, ``cost()`` and ``trace()`` (a recording
span) on one read of the stream, through ``lxo.fan_out`` and through RxPY's multicast.

Every stream is also reassembled from the whole body in one read, from 64 KiB reads and from
1 KiB reads (the lines ``reassemble, <read size>``), as ratios to the floor at 64 KiB reads:
a read's size should change only the cost of the reads themselves.

Each stream is measured in a fresh interpreter (nothing left on the heap by what ran before):
every contender runs on the same bytes, in interleaved rounds; the table gives medians and,
as ratios, the median over rounds of each contender's time over the floor's in the same
round (the machine is shared and noisy: compare ratios, not absolute times). Peak memory is
measured in a fresh subprocess per contender; first-delta latency, in a fresh interpreter
too, by feeding a ``Subject`` the bytes of the first text delta (in a read of their own, or
with the reply's first frame) and timing until that delta is emitted.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import Event, TextDelta
from llm_rx.response import Response

from . import streams

Contender = Callable[[list[bytes]], object]


# -- the floor: split SSE events, orjson.loads each, collect text deltas, join ----------------


def floor_openai(chunks: list[bytes]) -> str:
    out: list[str] = []
    for frame in b"".join(chunks).split(b"\n\n"):
        if frame.startswith(b"data: {"):
            for choice in orjson.loads(frame[6:])["choices"]:
                text = choice["delta"].get("content")
                if text:
                    out.append(text)
    return "".join(out)


def floor_openai_tools(chunks: list[bytes]) -> dict[int, str]:
    calls: dict[int, list[str]] = {}
    for frame in b"".join(chunks).split(b"\n\n"):
        if frame.startswith(b"data: {"):
            for choice in orjson.loads(frame[6:])["choices"]:
                for call in choice["delta"].get("tool_calls") or ():
                    calls.setdefault(call["index"], []).append(call["function"]["arguments"])
    return {index: "".join(parts) for index, parts in calls.items()}


def floor_anthropic(chunks: list[bytes]) -> str:
    out: list[str] = []
    for frame in b"".join(chunks).split(b"\n\n"):
        start = frame.find(b"data: ")
        if start >= 0:
            event = orjson.loads(frame[start + 6 :])
            if event["type"] == "content_block_delta":
                delta = event["delta"]
                text = delta.get("text") or delta.get("thinking") or delta.get("partial_json")
                if text:
                    out.append(text)
    return "".join(out)


def floor_gemini(chunks: list[bytes]) -> str:
    out: list[str] = []
    for frame in b"".join(chunks).split(b"\n\n"):
        if frame.startswith(b"data: "):
            for candidate in orjson.loads(frame[6:]).get("candidates") or ():
                for part in candidate["content"]["parts"]:
                    text = part.get("text")
                    if text:
                        out.append(text)
    return "".join(out)


def floor_ollama(chunks: list[bytes]) -> str:
    out: list[str] = []
    for line in b"".join(chunks).split(b"\n"):
        if line:
            text = orjson.loads(line)["message"]["content"]
            if text:
                out.append(text)
    return "".join(out)


# -- llm-rx --------------------------------------------------------------------------------


def reassemble(chunks: list[bytes]) -> Response:
    return llm_rx.reassemble(chunks)


def to_response(chunks: list[bytes]) -> Response:
    """The Rx way to the same response: the source, then ``to_response()``."""
    results: list[Response] = []
    llm_rx.from_bytes(chunks).pipe(lxo.to_response()).subscribe(results.append)
    return results[0]


def pipeline(chunks: list[bytes]) -> Response:
    """One upstream read shared by text_only, merge_usage and to_response."""
    published = llm_rx.from_bytes(chunks).pipe(ops.publish())
    texts: list[str] = []
    usages: list[object] = []
    results: list[Response] = []
    published.pipe(lxo.text_only()).subscribe(texts.append)
    published.pipe(lxo.merge_usage()).subscribe(usages.append)
    published.pipe(lxo.to_response()).subscribe(results.append)
    published.connect()
    return results[0]


class _NoView:
    """A display that draws nothing: what the live display costs besides its drawing."""

    def update(self, snapshot: object) -> None:
        pass

    def close(self, snapshot: object) -> None:
        pass


@functools.cache
def _tracer() -> Any:
    """An SDK tracer (recording, nothing exported), made once as an application does:
    making a ``TracerProvider`` detects its resources on threads (milliseconds)."""
    from opentelemetry.sdk.trace import TracerProvider

    return TracerProvider().get_tracer("benchmarks")


def _observed() -> list[Callable[[Any], Any]]:
    """Display (its frames on a clock that never moves: only the final one is drawn),
    reassembly, cost and a recorded span."""
    from reactivex.scheduler import HistoricalScheduler

    from llm_rx.sinks import live

    return [live(_NoView, scheduler=HistoricalScheduler()), lxo.to_response(), lxo.cost(),
            lxo.trace(_tracer())]


def fan_out(chunks: list[bytes]) -> Response:
    """Display + reassembly + cost + span on one read, through ``lxo.fan_out``."""
    results: list[tuple[Any, ...]] = []
    llm_rx.from_bytes(chunks).pipe(lxo.fan_out(*_observed())).subscribe(results.append)
    response: Response = results[0][1]
    return response


def rx_share(chunks: list[bytes]) -> Response:
    """The same four on one read through RxPY's multicast (``publish`` + ``connect``, as
    ``share()`` is once every subscriber is in)."""
    published = llm_rx.from_bytes(chunks).pipe(ops.publish())
    results: list[Response] = []
    display, reassembly, cost, span = _observed()
    published.pipe(display).subscribe()
    published.pipe(reassembly).subscribe(results.append)
    published.pipe(cost).subscribe()
    published.pipe(span).subscribe()
    published.connect()
    return results[0]


def accumulate(chunks: list[bytes]) -> Response:
    """A snapshot on every event; the last one materialised."""
    last: list[Any] = []
    llm_rx.from_bytes(chunks).pipe(lxo.accumulate()).subscribe(last.append)
    response: Response = last[-1].response
    return response


def accumulate_behind_map(chunks: list[bytes]) -> Response:
    """The same behind another operator: not fused with the source, one more hop per event."""
    last: list[Any] = []
    llm_rx.from_bytes(chunks).pipe(ops.map(_same), lxo.accumulate()).subscribe(last.append)
    response: Response = last[-1].response
    return response


def _same(event: Event) -> Event:
    return event


#: The stream each case is translated to by ``encode()`` (another provider's).
ENCODE_TO = ["anthropic", "openai-chat", "anthropic", "openai-chat", "openai-chat"]


def encoder(to: str) -> Contender:
    """Decode and re-encode as ``to``'s stream, end to end: the source, then ``encode()``."""

    def encode(chunks: list[bytes]) -> bytes:
        out: list[bytes] = []
        llm_rx.from_bytes(chunks).pipe(lxo.encode(to)).subscribe(out.append)
        return b"".join(out)

    return encode


# -- the official SDKs' helpers, end to end over a mock transport (optional extras) ----------


def _mock_client(module: Any, body: bytes, **kwargs: Any) -> Any:
    import httpx2

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return module(api_key="bench", http_client=httpx2.Client(
        transport=httpx2.MockTransport(handler)), **kwargs)


def openai_sdk(chunks: list[bytes]) -> object:
    import openai

    client = _mock_client(openai.OpenAI, b"".join(chunks), base_url="http://bench/v1")
    with client.chat.completions.stream(model="gpt-4o", messages=[
        {"role": "user", "content": "hi"}]) as stream:
        return stream.get_final_completion()


def anthropic_sdk(chunks: list[bytes]) -> object:
    import anthropic

    client = _mock_client(anthropic.Anthropic, b"".join(chunks), base_url="http://bench")
    with client.messages.stream(model="claude-sonnet-4", max_tokens=10, messages=[
        {"role": "user", "content": "hi"}]) as stream:
        return stream.get_final_message()


def litellm_sdk(chunks: list[bytes]) -> object:
    """LiteLLM's path: ``completion(stream=True)`` (over the openai client it wraps), then
    ``stream_chunk_builder`` on the chunks."""
    import litellm
    import openai

    client = _mock_client(openai.OpenAI, b"".join(chunks), base_url="http://bench/v1")
    messages = [{"role": "user", "content": "hi"}]
    stream = litellm.completion(model="openai/gpt-4o", messages=messages, stream=True,
                                client=client, stream_options={"include_usage": True})
    return litellm.stream_chunk_builder(list(stream), messages=messages)


def _available(module: str) -> bool:
    # (LiteLLM fetches its model price list when imported; the bundled copy does here)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        __import__(module)
    except ImportError:
        return False
    return True


# -- measuring -----------------------------------------------------------------------------


def measure(contenders: dict[str, Contender], chunks: list[bytes], rounds: int,
            slow_rounds: int) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Median seconds per contender over interleaved rounds (SDK helpers run ``slow_rounds``
    rounds, LiteLLM one: it takes seconds), and each contender's time of every round (to take
    ratios within a round)."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(rounds):
        for name, run in contenders.items():
            if name.endswith("(sdk)") and round_ >= (1 if "litellm" in name else slow_rounds):
                continue
            gc.collect()
            start = time.perf_counter()
            run(chunks)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}, times


def ratio(times: dict[str, list[float]], name: str, base: str) -> float:
    """The median over rounds of ``name``'s time over ``base``'s in the same round: a burst
    of load from elsewhere on the machine weighs on both sides of each ratio alike."""
    return statistics.median(a / b for a, b in zip(times[name], times[base], strict=False))


def first_delta_latency(
    body: bytes, variants: list[tuple[str | None, bool]], repeats: int = 2000
) -> tuple[list[float], float]:
    """Median seconds from feeding the bytes of the first text delta to its emission, per
    variant (provider, own read), the variants interleaved: with the frames before it in
    the same read, or (own read) fed before, as a live stream's earlier reads would be. And,
    measured between the samples, the floor's median time per event (``body``'s events): the
    machine's speed, to state the latency in floor events too."""
    start_of_delta = body.rindex(b"\n\n", 0, body.index(b'"content":"th')) + 2
    cut = body.index(b"\n\n", start_of_delta) + 2
    chunks, events = streams.chunked(body), body.count(b"\n\ndata: ")
    samples: list[list[float]] = [[] for _ in variants]
    floors: list[float] = []
    for repeat in range(repeats):
        for (provider, own_read), out in zip(variants, samples, strict=True):
            bus: Subject[bytes] = Subject()
            seen: list[float] = []

            def on_event(event: Event, seen: list[float] = seen) -> None:
                if type(event) is TextDelta and not seen:
                    seen.append(time.perf_counter())

            bus.pipe(lxo.decode(provider)).subscribe(on_event)
            if own_read:
                bus.on_next(body[:start_of_delta])
            start = time.perf_counter()
            bus.on_next(body[start_of_delta:cut] if own_read else body[:cut])
            out.append(seen[0] - start)
        if repeat % 100 == 0:
            start = time.perf_counter()
            floor_openai(chunks)
            floors.append((time.perf_counter() - start) / events)
    return [statistics.median(values) for values in samples], statistics.median(floors)


_PEAK = """
import gc, sys, tracemalloc
sys.path.insert(0, {root!r})
from benchmarks import run, streams
body = getattr(streams, {stream!r})({n})
chunks = streams.chunked(body)
contender = getattr(run, {name!r})
gc.collect()
tracemalloc.start()
result = contender(chunks)
print(tracemalloc.get_traced_memory()[1])
"""


def peak_memory(name: str, stream: str, n: int) -> int:
    """Peak bytes allocated by one run (the input excluded), in a fresh interpreter."""
    import pathlib

    root = str(pathlib.Path(__file__).resolve().parent.parent)
    code = _PEAK.format(root=root, stream=stream, n=n, name=name)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip())


_Case = tuple[str, Callable[[], bytes], Contender, dict[str, Contender]]


def _cases(n: int, sdks: bool = True) -> list[_Case]:
    """Each stream: its title, how to make its body, its floor, the SDK helpers to run (the
    installed ones, imported here, outside the timing; none if not ``sdks``)."""
    openai_sdks: dict[str, Contender] = (
        {"openai (sdk)": openai_sdk} if sdks and _available("openai") else {})
    if openai_sdks and _available("litellm"):
        openai_sdks["litellm (sdk)"] = litellm_sdk
    anthropic_sdks: dict[str, Contender] = (
        {"anthropic (sdk)": anthropic_sdk} if sdks and _available("anthropic") else {})
    floors: list[Contender] = [floor_openai, floor_anthropic, floor_openai_tools, floor_gemini,
                               floor_ollama]
    return list(zip(
        ["openai chat, text", "anthropic, thinking+text+tool",
         "openai chat, parallel tool calls", "gemini, text + usage per chunk", "ollama /api/chat"],
        [lambda: streams.openai_chat(n), lambda: streams.anthropic(n),
         lambda: streams.openai_tool_calls(8, n // 32), lambda: streams.gemini(n),
         lambda: streams.ollama(n)],
        floors,
        [openai_sdks, anthropic_sdks, openai_sdks, {}, {}],
        strict=True,
    ))


#: The read sizes every stream is also reassembled at (``None``: the whole body in one read).
READ_SIZES: tuple[tuple[str, int | None], ...] = (
    ("whole body", None), ("64 KiB reads", 64 * 1024), ("1 KiB reads", 1024))


def by_read_size(body: bytes) -> dict[str, Contender]:
    """``reassemble`` of ``body`` at each of ``READ_SIZES`` (the reads made beforehand, outside
    the timing; the chunks a contender is given are ignored)."""
    def of(reads: list[bytes]) -> Contender:
        return lambda _chunks: reassemble(reads)

    return {f"reassemble, {label}": of([body] if size is None else streams.chunked(body, size))
            for label, size in READ_SIZES}


#: The contenders of ``--observed``: the display, reassembly, cost and span on one read.
OBSERVED = ("floor", "llm_rx.reassemble", "observed, lxo.fan_out", "observed, rx publish")


def run_case(number: int, n: int, rounds: int, slow_rounds: int, observed: bool = False) -> None:
    """Print the lines of one stream's table, then its read-size lines: ``reassemble`` at
    each read size, as ratios to the floor at 64 KiB reads (with ``observed``, only the
    lines of ``OBSERVED``)."""
    title, make_body, floor, sdks = _cases(n, sdks=not observed)[number]
    contenders: dict[str, Contender] = {
        "floor": floor,
        "llm_rx.reassemble": reassemble,
        "to_response()": to_response,
        "pipeline (3 sinks)": pipeline,
        "observed, lxo.fan_out": fan_out,
        "observed, rx publish": rx_share,
        "accumulate()": accumulate,
        "accumulate() after map": accumulate_behind_map,
        "encode()": encoder(ENCODE_TO[number]),
        **sdks,
    }
    if observed:
        contenders = {name: contenders[name] for name in OBSERVED}
    body = make_body()
    result, times = measure(contenders, streams.chunked(body), rounds, slow_rounds)
    for name, seconds in result.items():
        print(f"{title:34} {name:22} {seconds * 1e3:8.1f}ms "
              f"{ratio(times, name, 'floor'):7.2f}x")
    if observed:
        return
    for name in ("accumulate()", "accumulate() after map", "encode()"):
        print(f"{title:34} {name.replace('()', '') + ' / reassemble':34} "
              f"{ratio(times, name, 'llm_rx.reassemble'):7.2f}x")
    reads = {"floor": floor, **by_read_size(body)}
    result, times = measure(reads, streams.chunked(body), rounds, slow_rounds)
    for name, seconds in result.items():
        if name != "floor":
            print(f"{title:34} {name:28} {seconds * 1e3:8.1f}ms "
                  f"{ratio(times, name, 'floor'):7.2f}x")


def run_latency() -> None:
    body = streams.openai_chat(2_000)
    variants: list[tuple[str | None, bool]] = [
        ("openai-chat", True), (None, True), ("openai-chat", False), (None, False)]
    latencies, per_event = first_delta_latency(body, variants)
    for (provider, own_read), seconds in zip(variants, latencies, strict=True):
        where = "in a read of its own" if own_read else "with the first frame"
        label = f"{provider or 'told from the bytes'}, {where}"
        print(f"  {label:44} {seconds * 1e6:6.1f} µs = {seconds / per_event:5.1f} floor events")
    print(f"  (the floor: {per_event * 1e6:.2f} µs per event on this machine, this run)")


def _in_fresh_process(*args: str) -> None:
    """Run this script with ``args`` in a fresh interpreter (no heap left by what ran before,
    such as an SDK's hundreds of thousands of objects) and pass its output on."""
    import pathlib

    root = str(pathlib.Path(__file__).resolve().parent.parent)
    out = subprocess.run([sys.executable, "-m", "benchmarks.run", *args], cwd=root,
                         capture_output=True, text=True, check=True)
    print(out.stdout, end="", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer rounds")
    parser.add_argument("--case", type=int, help=argparse.SUPPRESS)  # (one stream, in-process)
    parser.add_argument("--latency", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--observed", action="store_true",
        help="only the floor, reassemble and display + reassembly + cost + span on one read "
             "(fan_out and RxPY's multicast), on every stream")
    args = parser.parse_args(argv)
    n = 4_000 if args.quick else 20_000
    rounds, slow_rounds = (5, 1) if args.quick else (15, 3)
    if args.case is not None:
        run_case(args.case, n, rounds, slow_rounds, args.observed)
        return 0
    if args.latency:
        run_latency()
        return 0
    quick = ["--quick"] if args.quick else []
    observed = ["--observed"] if args.observed else []
    print(f"{'stream':34} {'contender':22} {'median':>10} {'x floor':>8}", flush=True)
    for number in range(len(_cases(0, sdks=False))):
        _in_fresh_process("--case", str(number), *quick, *observed)
    if args.observed:
        return 0
    print("\nfirst text delta emitted after its bytes arrived (median, a fresh decoder each time):")
    _in_fresh_process("--latency", *quick)
    print("\npeak memory (fresh subprocess, input excluded):")
    for stream in ("openai_chat",):
        for size in (n, 2 * n):
            floor_peak = peak_memory("floor_openai", stream, size)
            ours = peak_memory("reassemble", stream, size)
            print(f"  {stream} n={size:6}: floor {floor_peak / 1e6:6.2f} MB, "
                  f"llm_rx.reassemble {ours / 1e6:6.2f} MB ({ours / floor_peak:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
