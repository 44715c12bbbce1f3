"""``llm-rx serve``: the emulator as a process (``main(argv)``, also the CLI's subcommand)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from .._extras import install_hint
from ._defaults import IDLE_TIMEOUT, JOURNAL_BUDGET, MAX_BODY, MAX_CONNECTIONS

__all__ = ["add_arguments", "add_guard_arguments", "main", "run"]


def add_guard_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``llm-rx serve`` and ``llm-rx record`` about who may connect."""
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="also answer requests whose Host (or a browser's Origin) names "
                        "NAME; repeatable. By default only loopback names and addresses and "
                        "--host are answered (403 otherwise: a page whose name rebinds to "
                        "127.0.0.1 is refused). '*': any host, for a deliberate remote setup")
    parser.add_argument("--max-connections", type=int, default=None, metavar="N",
                        help=f"connections open at once; one more is answered 503 (default: "
                        f"{MAX_CONNECTIONS}, or a quarter of the open-file limit if lower)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``llm-rx serve`` (shared by the CLI's subcommand)."""
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="a folder laid out like captures/ (or one capture file); "
                        "default: the bundled captures")
    parser.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="default: 8000; 0: any free port")
    parser.add_argument("--pace", type=float, default=0.0, metavar="TOKENS_PER_S",
                        help="frames (about a token each) per second; 0 (default): as fast "
                        "as it can. Header x-llm-rx-pace overrides it per request")
    parser.add_argument("--read-size", type=int, default=16 * 1024, metavar="BYTES",
                        help="the most bytes one write carries (default: 16384)")
    parser.add_argument("--timing", choices=["paced", "recorded"], default="paced",
                        help="recorded: a capture with a <name>.timing.json (llm-rx record) "
                        "is sent read by read at its recorded times; default: paced (--pace)")
    parser.add_argument("--replay-speed", type=float, default=1.0, metavar="X",
                        help="with --timing recorded: X times the recorded pace (default: 1)")
    parser.add_argument("--max-body", type=int, default=MAX_BODY, metavar="BYTES",
                        help="the largest request body (or WebSocket message) read; a larger "
                        "one is answered 413 in the endpoint's error shape (default: "
                        "16777216, 16 MiB)")
    add_guard_arguments(parser)
    parser.add_argument("--keep-credentials", action="store_true",
                        help="the journal (GET /_llm_rx/requests) keeps Authorization, "
                        "x-api-key, api-key, x-goog-api-key, cookies and key= query values "
                        "whole; by default each is redacted to a hint (Bearer sk-p…abcd)")
    parser.add_argument("--journal-budget", type=int, default=JOURNAL_BUDGET, metavar="BYTES",
                        help="the bytes of requests the journal keeps; past it the oldest "
                        "bodies are dropped (each entry says so), then the oldest entries "
                        "(default: 67108864, 64 MiB)")
    parser.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT, metavar="SECONDS",
                        help="a WebSocket whose client sends nothing for this long is closed "
                        "(default: 300)")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Serves until SIGINT or SIGTERM; the first line on ``out`` says where it listens."""
    try:
        from ._app import create_app
        from ._server import bind, serve_forever, url_of
    except ImportError as error:  # pragma: no cover (the extra is not installed)
        sys.stderr.write(f"llm-rx serve needs the 'serve' extra "
                         f"({install_hint('serve')}): {error}\n")
        return 2
    if not args.replay_speed > 0:
        sys.stderr.write("llm-rx serve: --replay-speed must be > 0\n")
        return 2
    speed = args.replay_speed if args.timing == "recorded" else None
    app = create_app(args.paths or None, pace=args.pace, read_size=args.read_size,
                     replay_speed=speed, max_body=args.max_body,
                     allow_hosts=[args.host, *args.allow_host],
                     keep_credentials=args.keep_credentials,
                     journal_budget=args.journal_budget, idle_timeout=args.idle_timeout)
    sock = bind(args.host, args.port)
    emulator = app.state.emulator
    out.write(f"llm-rx serve: listening on {url_of(sock)}\n")
    out.write(f"llm-rx serve: {len(emulator.index)} captures\n")
    out.flush()
    serve_forever(app, sock, max_connections=args.max_connections, max_message=args.max_body)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="llm-rx serve", description="Serve recorded "
                                     "captures on each provider's real endpoints.")
    add_arguments(parser)
    return run(parser.parse_args(argv), sys.stdout)
