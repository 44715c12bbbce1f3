"""End-to-end throughput over loopback: ``from_httpx`` → ``to_response()`` against the I/O
floor (httpx reading the same bytes and doing nothing) and the SDKs' own streaming helpers.

    python -m benchmarks.http            # the table (a minute or so)
    python -m benchmarks.http --quick    # smaller streams, fewer rounds

The server runs in its own process (it would otherwise share the client's interpreter lock)
and answers every request from memory, in 64 KiB chunked writes (a bulk transfer: the floor
then parses nothing and costs little more than a copy), or, under ``/live``, a frame per
write as a live reply arrives, on keep-alive connections.
The floor reads with ``iter_raw`` (the body has no content encoding: its raw reads are the
body, and from_httpx reads them so too); the ``iter_bytes`` floor is beside it. The bound row
is 1 + (the parse of the same reads in memory) / floor: where it is above the target, the
parse itself, not the source, is what misses it.
Every contender runs on the same bytes in interleaved rounds; ratios are the median over
rounds of the two times taken in the same round (the machine is shared: compare ratios).
Memory per idle open stream: many streams opened on one event loop, each held by the server
after its first frame, measured with ``tracemalloc`` with and without an llm-rx subscription.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import httpx
from reactivex import Observable

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import Event
from llm_rx.response import Response

from . import streams

_READ = 64 * 1024
_ASK = [{"role": "user", "content": "hi"}]
OURS = "from_httpx -> to_response()"
FLOOR = "floor (httpx iter_raw, read only)"
IN_MEMORY = "reassemble(same bytes, in memory)"


# -- the server (a subprocess) ---------------------------------------------------------------


async def _serve(n: int) -> None:
    bodies = {b"/v1/chat/completions": streams.openai_chat(n),
              b"/v1/messages": streams.anthropic(n)}
    first_frame = bodies[b"/v1/chat/completions"].split(b"\n\n", 1)[0] + b"\n\n"

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1]
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        await reader.readexactly(int(line.split(b":", 1)[1]))
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                             b"transfer-encoding: chunked\r\n\r\n")
                if path.startswith(b"/hold"):  # the first frame, then nothing until a hang-up
                    writer.write(b"%x\r\n%s\r\n" % (len(first_frame), first_frame))
                    await reader.read()
                    return
                if path.startswith(b"/live"):  # a frame per write, as a live reply comes
                    for frame in bodies[path[5:]].split(b"\n\n")[:-1]:
                        writer.write(b"%x\r\n%s\n\n\r\n" % (len(frame) + 2, frame))
                        await writer.drain()
                    writer.write(b"0\r\n\r\n")
                    continue
                body = bodies[path]
                for start in range(0, len(body), _READ):
                    piece = body[start : start + _READ]
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(reply, "127.0.0.1", 0, backlog=1024)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def _start_server(n: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "benchmarks.http", "--serve", str(n)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def _stop_server(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(10)
    if process.stdout is not None:
        process.stdout.close()


# -- the contenders: one stream each, end to end ---------------------------------------------

Contender = Callable[[], object]


def floor(client: httpx.Client, url: str) -> Contender:
    """The bytes read and dropped, the cheapest correct way: ``iter_raw`` (the body has no
    content encoding, so its raw reads are the body; from_httpx reads it so too)."""
    def run() -> object:
        with client.stream("POST", url) as reply:
            for _ in reply.iter_raw():
                pass
        return None

    return run


def floor_decoded(client: httpx.Client, url: str) -> Contender:
    """As a user who does not know the body has no encoding reads it: ``iter_bytes``."""
    def run() -> object:
        with client.stream("POST", url) as reply:
            for _ in reply.iter_bytes():
                pass
        return None

    return run


def from_httpx(client: httpx.Client, url: str) -> Contender:
    def run() -> object:
        reply = client.send(client.build_request("POST", url), stream=True)
        return _response(llm_rx.from_httpx(reply))

    return run


def _response(events: Observable[Event]) -> Response:
    """The reply, read on this thread (``run()`` would read on a new thread and wait)."""
    results: list[Response] = []
    events.pipe(lxo.to_response()).subscribe(results.append)
    return results[0]


def in_memory(client: httpx.Client, url: str) -> Contender:
    """The decoding alone: the body's reads already in memory (floor + this ~ from_httpx
    says the difference from the floor is decoding, not I/O)."""
    with client.stream("POST", url) as reply:
        chunks = list(reply.iter_raw())

    def run() -> object:
        return llm_rx.reassemble(chunks)

    return run


def openai_helper(base: str) -> Contender:
    import openai

    client = openai.OpenAI(api_key="bench", base_url=base + "/v1", max_retries=0)

    def run() -> object:
        with client.chat.completions.stream(model="m", messages=_ASK) as stream:  # type: ignore[arg-type]
            return stream.get_final_completion()

    return run


def from_sdk_openai(base: str) -> Contender:
    import openai

    client = openai.OpenAI(api_key="bench", base_url=base + "/v1", max_retries=0)

    def run() -> object:
        stream = client.chat.completions.create(model="m", messages=_ASK, stream=True)  # type: ignore[arg-type]
        return _response(llm_rx.from_sdk(stream))

    return run


def anthropic_helper(base: str) -> Contender:
    import anthropic

    client = anthropic.Anthropic(api_key="bench", base_url=base, max_retries=0)

    def run() -> object:
        with client.messages.stream(model="m", max_tokens=9, messages=_ASK) as stream:  # type: ignore[arg-type]
            return stream.get_final_message()

    return run


def measure(contenders: dict[str, Contender], rounds: int, slow_rounds: int
            ) -> dict[str, list[float]]:
    """Each contender's time in every round, the contenders interleaved (SDK helpers run
    only the first ``slow_rounds`` rounds)."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(rounds):
        for name, run in contenders.items():
            if "(sdk" in name and round_ >= slow_rounds:
                continue
            gc.collect()
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return times


def ratio(times: dict[str, list[float]], name: str, base: str) -> float:
    return statistics.median(a / b for a, b in zip(times[name], times[base], strict=False))


def bound(times: dict[str, list[float]]) -> float:
    """The best from_httpx can do if reading and parsing never overlap and cost nothing
    more together than apart: 1 + (the parse of the same reads, in memory) / floor, per
    round. A target below it would need a faster parse, not a thinner source."""
    return statistics.median(
        1 + parse / base for parse, base in zip(times[IN_MEMORY], times[FLOOR], strict=False)
    )


# -- memory per idle open stream -------------------------------------------------------------


async def _idle_memory(base: str, count: int, subscribe: bool) -> float:
    """Bytes allocated per open stream held after its first frame (the client's share)."""
    limits = httpx.Limits(max_connections=count + 8, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        await _open_idle(client, base, 4, subscribe)  # (imports and first-use caches: not counted)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        held = await _open_idle(client, base, count, subscribe)
        gc.collect()
        used = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        for reply, subscription in held:
            if subscription is not None:
                subscription.dispose()
            await reply.aclose()
    return used / count


async def _open_idle(client: httpx.AsyncClient, base: str, count: int, subscribe: bool
                     ) -> list[tuple[Any, Any]]:
    async def one(number: int) -> tuple[Any, Any]:
        reply = await client.send(client.build_request("POST", f"{base}/hold/{number}"),
                                  stream=True)
        if not subscribe:
            return reply, None
        started = asyncio.Event()
        subscription = llm_rx.from_httpx(reply, "openai-chat").subscribe(
            lambda _: started.set(), lambda _: started.set())
        await started.wait()
        return reply, subscription

    return list(await asyncio.gather(*(one(number) for number in range(count))))


# -- the table -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer rounds")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)  # (the server process)
    args = parser.parse_args(argv)
    if args.serve is not None:
        asyncio.run(_serve(args.serve))
        return 0
    n = 2_000 if args.quick else 10_000
    rounds, slow_rounds = (5, 2) if args.quick else (11, 3)
    process, base = _start_server(n)
    try:
        with httpx.Client(timeout=60) as client:
            cases = {
                "openai chat": (base + "/v1/chat/completions", {
                    "openai .stream() (sdk)": openai_helper(base),
                    "from_sdk(create(stream=True)) (sdk+llm-rx)": from_sdk_openai(base)}),
                "anthropic": (base + "/v1/messages", {
                    "anthropic .stream() (sdk)": anthropic_helper(base)}),
                # the same bodies a frame per write, as a live reply arrives (a read per frame)
                "openai, live": (base + "/live/v1/chat/completions", {}),
                "anthropic, live": (base + "/live/v1/messages", {}),
            }
            print(f"{'stream':15} {'contender':44} {'median':>9} {'streams/s':>10} {'ratio':>22}")
            for title, (url, sdks) in cases.items():
                contenders = {FLOOR: floor(client, url),
                              "floor, iter_bytes (httpx, read only)": floor_decoded(client, url),
                              OURS: from_httpx(client, url),
                              IN_MEMORY: in_memory(client, url),
                              **sdks}
                times = measure(contenders, rounds, slow_rounds)
                for name, values in times.items():
                    seconds = statistics.median(values)
                    versus = "" if name == FLOOR else f"{ratio(times, name, FLOOR):6.2f}x floor"
                    if "(sdk" in name:
                        versus += f", {ratio(times, name, OURS):5.1f}x ours"
                    print(f"{title:15} {name:44} {seconds * 1e3:7.1f}ms {1 / seconds:10.1f} "
                          f"{versus:>22}")
                print(f"{title:15} {'  (bound: floor + the parse of its bytes)':44} "
                      f"{'':20} {bound(times):6.2f}x floor")
        count = 100 if args.quick else 500
        bare = asyncio.run(_idle_memory(base, count, subscribe=False))
        ours = asyncio.run(_idle_memory(base, count, subscribe=True))
        print(f"\nmemory per idle open stream ({count} open, tracemalloc): httpx response "
              f"{bare / 1024:.1f} KiB; with from_httpx subscribed {ours / 1024:.1f} KiB "
              f"(llm-rx's share {(ours - bare) / 1024:.1f} KiB)")
        print(f"(bodies: {n} chunks; ratios are medians of per-round ratios)")
    finally:
        _stop_server(process)
    return 0


if __name__ == "__main__":
    sys.exit(main())
