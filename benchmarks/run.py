"""Side-by-side benchmark: llm-rx against a plain parse loop (the floor) and the SDK helpers.

    python -m benchmarks.run            # the full table (about a minute or two)
    python -m benchmarks.run --quick    # smaller streams, fewer rounds

Every contender runs on the same bytes, in the same process, in interleaved rounds; the table
gives medians and the ratio to the floor measured in the same rounds (the machine is shared
and noisy: compare ratios, not absolute times). Peak memory is measured in a fresh
subprocess per contender; first-delta latency by feeding a ``Subject`` the bytes of the
first text delta and timing until that delta is emitted.
"""

from __future__ import annotations

import argparse
import gc
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


def accumulate(chunks: list[bytes]) -> Response:
    """A snapshot on every event; the last one materialised."""
    last: list[Any] = []
    llm_rx.from_bytes(chunks).pipe(lxo.accumulate()).subscribe(last.append)
    response: Response = last[-1].response
    return response


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


def _available(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


# -- measuring -----------------------------------------------------------------------------


def measure(contenders: dict[str, Contender], chunks: list[bytes], rounds: int,
            slow_rounds: int) -> dict[str, float]:
    """Median seconds per contender over interleaved rounds (slow ones run fewer rounds)."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(rounds):
        for name, run in contenders.items():
            if name.endswith("(sdk)") and round_ >= slow_rounds:
                continue
            gc.collect()
            start = time.perf_counter()
            run(chunks)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def first_delta_latency(
    body: bytes, provider: str | None, own_read: bool = False, repeats: int = 2000
) -> float:
    """Median seconds from feeding the bytes of the first text delta to its emission: with
    the frames before it in the same read, or (``own_read``) fed before, as a live stream's
    earlier reads would have been."""
    start_of_delta = body.rindex(b"\n\n", 0, body.index(b'"content":"th')) + 2
    cut = body.index(b"\n\n", start_of_delta) + 2
    before, head = (body[:start_of_delta], body[start_of_delta:cut]) if own_read else (
        b"", body[:cut])
    samples = []
    for _ in range(repeats):
        bus: Subject[bytes] = Subject()
        seen: list[float] = []

        def on_event(event: Event, seen: list[float] = seen) -> None:
            if type(event) is TextDelta and not seen:
                seen.append(time.perf_counter())

        bus.pipe(lxo.decode(provider)).subscribe(on_event)
        if before:
            bus.on_next(before)
        start = time.perf_counter()
        bus.on_next(head)
        samples.append(seen[0] - start)
    return statistics.median(samples)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer rounds")
    args = parser.parse_args(argv)
    n = 4_000 if args.quick else 20_000
    rounds, slow_rounds = (5, 1) if args.quick else (9, 3)

    cases: list[tuple[str, str, bytes, Contender, dict[str, Contender]]] = [
        ("openai chat, text", "openai_chat", streams.openai_chat(n), floor_openai,
         {"openai (sdk)": openai_sdk} if _available("openai") else {}),
        ("anthropic, thinking+text+tool", "anthropic", streams.anthropic(n), floor_anthropic,
         {"anthropic (sdk)": anthropic_sdk} if _available("anthropic") else {}),
        ("openai chat, parallel tool calls", "openai_tool_calls",
         streams.openai_tool_calls(8, n // 32), floor_openai_tools,
         {"openai (sdk)": openai_sdk} if _available("openai") else {}),
        ("gemini, text + usage per chunk", "gemini", streams.gemini(n), floor_gemini, {}),
        ("ollama /api/chat", "ollama", streams.ollama(n), floor_ollama, {}),
    ]
    print(f"{'stream':34} {'contender':22} {'median':>10} {'x floor':>8}")
    for title, _, body, floor, sdks in cases:
        chunks = streams.chunked(body)
        contenders: dict[str, Contender] = {
            "floor": floor,
            "llm_rx.reassemble": reassemble,
            "pipeline (3 sinks)": pipeline,
            "accumulate()": accumulate,
            **sdks,
        }
        result = measure(contenders, chunks, rounds, slow_rounds)
        for name, seconds in result.items():
            ratio = seconds / result["floor"]
            print(f"{title:34} {name:22} {seconds * 1e3:8.1f}ms {ratio:7.2f}x")
        print(f"{title:34} {'accumulate / reassemble':22} {'':>10} "
              f"{result['accumulate()'] / result['llm_rx.reassemble']:7.2f}x")
    body = streams.openai_chat(n)
    print("\nfirst text delta emitted after its bytes arrived (median, a fresh decoder each time):")
    for own_read, where in ((True, "in a read of its own"), (False, "with the first frame")):
        for provider in ("openai-chat", None):
            label = f"{provider or 'told from the bytes'}, {where}"
            seconds = first_delta_latency(body, provider, own_read)
            print(f"  {label:44} {seconds * 1e6:6.1f} µs")
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
