"""Peak memory where bytes wait for a slow party: what a hostile or slow peer adds to the
peak resident set (``VmHWM``) of the process that holds the buffer, over loopback.

    python -m benchmarks.memory                  # this checkout
    python -m benchmarks.memory --root OTHER     # the llm_rx of another checkout (same cases)

- ``serve``: a 100 MB request body sent to ``llm-rx serve`` (with a ``Content-Length``, and
  chunked); the status it answers and the server's growth.
- ``gateway``: ``examples/anthropic_gateway.py`` in front of an upstream that sends without
  end (192 MiB at most), and a client that sends its request and never reads; the MiB the
  upstream got out, and the gateway's growth.
- ``gzip bomb`` / ``endless JSON``: ``from_httpx`` reading a 256 MiB gzip bomb, and an
  endless ``application/json`` body (512 MiB at most), sync and async; the error and the
  reader's growth.
- ``readers``: a 256 MiB body (a compression bomb in every coding: ``identity``, ``gzip``,
  ``deflate``, ``br``, ``zstd``), a stream, a non-stream body under ``text/plain`` and one
  under ``application/json``, read by ``from_httpx`` sync and async, and the identity bodies
  by ``from_bytes``, ``reassemble`` and ``from_async_bytes``; the error and the reader's growth.

- ``redis``: ``redis_sse_response`` served by uvicorn, a real ``redis-server`` (started here),
  four clients that stop reading a 22 MB reply and then read it all; the entries read from
  Redis for each while they stalled, and the server's growth.

- ``serve journal``: 12 requests of 16 MiB (many small messages) to ``llm-rx serve``; the
  server's growth after the first and after the twelfth, and the bodies its journal kept.
- ``serve connections``: ``llm-rx serve`` under an open-file limit of 1,024 (a common
  default), 1,100 WebSockets opened at once and left idle; how many opened, were answered
  503, were reset or got no answer, the server's open files, and what a request gets while
  they are open.

- ``durable``: ``durable_sse_response`` served by uvicorn, the Durable Streams reference server
  (started here), four clients that follow a live reply and stop reading while the rest of
  it (22 MB) is appended, then read it all; the bytes of the stream read for each while they
  stalled, and the server's growth.

``--only`` runs some of these (``serve``, ``gateway``, ``client``, ``readers``, ``redis``,
``durable``, ``journal``, ``connections``).

The cases are those of the memory tests (``tests/memory.py`` and the tests that use it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import sys
import tempfile
from collections import Counter
from pathlib import Path

import httpx

from tests.durable import test_durable_sse as durable_sse
from tests.durable.conftest import start_server
from tests.memory import ROOT, MiB, endless, peak_rss, process, run_child
from tests.redis import test_redis_sse_slow as redis_sse
from tests.redis.conftest import RedisServer
from tests.serve import test_bounded as bounded
from tests.serve import test_limits as serve
from tests.sinks import test_asgi_memory as gateway
from tests.sources import test_body_limits as readers
from tests.sources import test_httpx_limits as client


def _serve(root: Path) -> None:
    argv = [sys.executable, "-m", "llm_rx", "serve", "--port", "0"]
    with process(argv, lambda line: "listening on" in line, root) as child:
        for framing in ("content-length", "chunked"):
            before = peak_rss(child.pid)
            if framing == "chunked":
                head = serve._head("/v1/messages", {"transfer-encoding": "chunked"})
                body = serve._chunked(serve.BODY)
            else:
                head = serve._head("/v1/messages", {"content-length": str(serve.BODY)})
                body = serve._pieces(serve.BODY)
            status, _ = serve._exchange(child.address, head, body)
            growth = (peak_rss(child.pid) - before) / MiB
            print(f"serve, 100 MB body ({framing}): {status}, +{growth:.0f} MiB")


def _gateway(root: Path) -> None:
    first = gateway._frame({"role": "assistant", "content": ""})
    piece = gateway._frame({"content": "x" * 1000}) * 64
    argv = [sys.executable, "-c", gateway.GATEWAY]
    with endless(gateway.HEAD, first, piece, budget=192 * MiB) as upstream, \
            process([*argv, upstream.url], lambda line: line.startswith("http://"),
                    root) as child:
        before = peak_rss(child.pid)
        with socket.create_connection(child.address, timeout=10) as sock:
            sock.sendall(gateway._request(*child.address))
            upstream.done.wait(300)
            growth = (peak_rss(child.pid) - before) / MiB
    print(f"gateway, a client that never reads: upstream sent {upstream.sent / MiB:.0f} MiB, "
          f"gateway +{growth:.0f} MiB")


def _client(root: Path) -> None:
    for sync in (True, False):
        mode = "sync" if sync else "async"
        first, piece = client._gzip_bomb(256)
        head = client.JSON_HEAD + b"content-encoding: gzip\r\n\r\n"
        with endless(head, first, piece, budget=len(piece) * 16) as upstream:
            result = run_child(client.CLIENT.format(url=upstream.url, sync=sync), 600, root)
        print(f"from_httpx, 256 MiB gzip bomb ({mode}): {result['error']}, "
              f"+{int(result['growth']) / MiB:.0f} MiB")  # type: ignore[call-overload]
        start = b'{"id":"x","object":"chat.completion","choices":[{"message":{"content":"'
        with endless(client.JSON_HEAD + b"\r\n", start, b"a" * 65536, 512 * MiB) as upstream:
            result = run_child(client.CLIENT.format(url=upstream.url, sync=sync), 600, root)
        print(f"from_httpx, endless JSON body ({mode}): {result['error']}, "
              f"+{int(result['growth']) / MiB:.0f} MiB")  # type: ignore[call-overload]


def _readers(root: Path) -> None:
    def row(what: str, result: dict[str, object]) -> None:
        growth = int(result["growth"]) / MiB  # type: ignore[call-overload]
        print(f"{what}: {result['error']}, +{growth:.0f} MiB", flush=True)

    for encoding in ("identity", "gzip", "deflate", "br", "zstd"):
        for kind in ("stream", "nonstream", "json"):
            for sync in (True, False):
                result = readers.measured(encoding, kind, "from_httpx", sync, root)
                mode = "sync" if sync else "async"
                row(f"from_httpx, 256 MiB {encoding} body ({readers.CONTENT_TYPE[kind]}, "
                    f"{mode})", result)
    for reader, sync in (("from_bytes", True), ("reassemble", True),
                         ("from_async_bytes", False)):
        for kind in ("stream", "nonstream"):
            result = readers.measured("identity", kind, reader, sync, root)
            row(f"{reader}, 256 MiB body ({readers.CONTENT_TYPE[kind]})", result)


def _redis(root: Path) -> None:
    executable = shutil.which("redis-server")
    if executable is None:
        print("redis_sse_response: no redis-server here")
        return
    with tempfile.TemporaryDirectory() as folder:
        server = RedisServer(executable, Path(folder))
        server.start()
        try:
            result = redis_sse.slow_clients(server, root)
        finally:
            server.stop()
    stalled = result["stalled"]
    read = max(stalled["entries"].values())
    whole = all(ids == result["ids"] for ids, _ in result["got"])
    print(f"redis_sse_response, {redis_sse.CLIENTS} clients that stop reading a 22 MB reply: "
          f"{read} of {redis_sse.ENTRIES + 1} entries read for each while stalled, server "
          f"+{stalled['growth'] / MiB:.0f} MiB; read on: "
          f"{'every entry' if whole else 'cut'}, +{result['growth'] / MiB:.0f} MiB")




def _durable(root: Path) -> None:
    server = start_server()
    try:
        result = durable_sse.slow_clients(server, root)
    finally:
        server.process.terminate()
        server.process.communicate(timeout=30)
    stalled = result["stalled"]
    read = max(stalled["read"].values())
    whole = all(len(ids) == durable_sse.APPENDS * durable_sse.PER_APPEND
                and last == b"event: end\ndata: {}" for ids, last in result["got"])
    print(f"durable_sse_response, {durable_sse.CLIENTS} clients that stop reading a live 22 MB "
          f"reply: {read:,} bytes of the stream read for each while stalled, server "
          f"+{stalled['growth'] / MiB:.0f} MiB; read on: {'every event' if whole else 'cut'}, "
          f"+{result['growth'] / MiB:.0f} MiB")


def _journal(root: Path) -> None:
    body = bounded._big_body(16 * MiB - 4096)
    pieces = [body[at:at + MiB] for at in range(0, len(body), MiB)]
    argv = [sys.executable, "-m", "llm_rx", "serve", "--port", "0"]
    with process(argv, lambda line: "listening on" in line, root) as child:
        before = peak_rss(child.pid)
        head = serve._head("/v1/chat/completions", {"content-length": str(len(body))})
        growth = []
        for _ in range(bounded.REQUESTS):
            status, _ = serve._exchange(child.address, head, pieces)
            growth.append((peak_rss(child.pid) - before) / MiB)
        url = "http://{}:{}/_llm_rx/requests".format(*child.address)
        kept = sum(entry["json"] is not None
                   for entry in httpx.get(url, timeout=120).json()["requests"])
    print(f"serve journal, {bounded.REQUESTS} requests of 16 MiB: {status}, +{growth[0]:.0f} "
          f"MiB after the first, +{growth[-1]:.0f} MiB after all; {kept} bodies kept")


async def _idle_sockets(address: tuple[str, int], pid: int, count: int) -> str:
    """Opens ``count`` WebSockets at once and, while they are open, counts the server's open
    files and asks it for its model list."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    url = "ws://{}:{}/v1/responses".format(*address)
    results = await asyncio.gather(*(connect(url, open_timeout=10) for _ in range(count)),
                                   return_exceptions=True)
    outcomes: Counter[str] = Counter()
    for result in results:
        if isinstance(result, InvalidStatus):
            outcomes[f"answered {result.response.status_code}"] += 1
        elif isinstance(result, TimeoutError):
            outcomes["no answer"] += 1
        else:
            outcomes["reset" if isinstance(result, BaseException) else "open"] += 1
    files = len(os.listdir(f"/proc/{pid}/fd"))
    async with httpx.AsyncClient(timeout=10) as client:
        try:
            answer = await client.get("http://{}:{}/v1/models".format(*address))
            after = str(answer.status_code)
        except httpx.HTTPError as error:
            after = type(error).__name__
    await asyncio.gather(*(result.close() for result in results
                           if not isinstance(result, BaseException)))
    shown = ", ".join(f"{number} {what}" for what, number in sorted(outcomes.items()))
    return f"{shown}; the server's open files: {files}; a request then: {after}"


def _connections(root: Path, count: int = 1100) -> None:
    argv = ["sh", "-c", 'ulimit -n 1024 && exec "$0" -m llm_rx serve --port 0',
            sys.executable]
    with process(argv, lambda line: "listening on" in line, root) as child:
        said = asyncio.run(_idle_sockets(child.address, child.pid, count))
    print(f"serve connections, {count} idle WebSockets (open-file limit 1,024): {said}")


CASES = {"serve": _serve, "gateway": _gateway, "client": _client, "readers": _readers,
         "redis": _redis, "durable": _durable, "journal": _journal, "connections": _connections}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout whose llm_rx the measured processes import")
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), default=list(CASES),
                        help="the cases to run (all by default)")
    options = parser.parse_args()
    for name in options.only:
        CASES[name](options.root.resolve())


if __name__ == "__main__":
    main()
