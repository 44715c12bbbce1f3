"""The ``llm-rx`` command: the same engine as the library, on recorded bodies.

::

    llm-rx demo                                   replay the bundled captures, live
    llm-rx replay FILE [--provider P] [--delay S] show a recorded reply as it arrives
    llm-rx reassemble FILE [--provider P] [--native [--to P]]   the response as JSON
    llm-rx events FILE [--provider P]             one JSON event per line

Exit status: 0 for a complete reply, 1 when the reply is incomplete (cut short, or an error
inside the stream; the JSON is still printed), 2 for input that is not a stream at all.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import orjson
import reactivex
from reactivex import Observable
from reactivex import operators as ops

from . import operators as lxo
from .data import DEMO_CAPTURES, capture_path
from .errors import LlmRxError
from .events import Event, event_to_dict
from .native import ENCODERS, to_native
from .response import Response
from .sinks import terminal_display
from .sources import from_file
from .wire.registry import PROVIDERS

__all__ = ["main"]

EXIT_OK, EXIT_INCOMPLETE, EXIT_BAD_INPUT = 0, 1, 2


def _paced(delay: float) -> Callable[[Observable[Event]], Observable[Event]]:
    """Re-emit each event ``delay`` seconds after the previous one (a simulated pace)."""

    def later(event: Event) -> Observable[Event]:
        return reactivex.timer(delay).pipe(ops.map(lambda _: event))

    return ops.concat_map(later)


def _dump(value: Any, out: TextIO, *, indent: bool = True) -> None:
    option = orjson.OPT_INDENT_2 if indent else 0
    out.write(orjson.dumps(value, option=option).decode() + "\n")


def _replay(path: Path, provider: str | None, delay: float, out: TextIO) -> Response:
    events = from_file(path, provider)
    if delay > 0:
        events = events.pipe(_paced(delay))
    # rich Live on a terminal (when rich is installed), plain incremental text otherwise
    response: Response = events.pipe(terminal_display(out=out), lxo.to_response()).run()
    return response


def _summary(response: Response, out: TextIO) -> None:
    usage = response.usage
    state = "complete" if response.complete else f"INCOMPLETE ({response.error})"
    out.write(
        f"-- {response.provider} · model {response.model} · stop {response.stop_reason} · "
        f"{state}\n-- usage: input {usage.input_tokens}, output {usage.output_tokens}, "
        f"reasoning {usage.reasoning_tokens}, cache read {usage.cache_read_tokens}\n"
    )


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    delay = args.delay if args.delay is not None else (0.01 if out.isatty() else 0.0)
    for name in DEMO_CAPTURES:
        out.write(f"\n=== replaying {name} (a real recorded stream) ===\n")
        response = _replay(capture_path(name), None, delay, out)
        _summary(response, out)
        out.write("-- reassembled response:\n")
        _dump(response.model_dump(mode="json"), out)
    return EXIT_OK


def _cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    delay = args.delay if args.delay is not None else (0.02 if out.isatty() else 0.0)
    response = _replay(Path(args.file), args.provider, delay, out)
    _summary(response, out)
    return EXIT_OK if response.complete else EXIT_INCOMPLETE


def _cmd_reassemble(args: argparse.Namespace, out: TextIO) -> int:
    response: Response = from_file(Path(args.file), args.provider).pipe(lxo.to_response()).run()
    if args.native:
        _dump(to_native(response, args.to or response.provider), out)
    else:
        _dump(response.model_dump(mode="json"), out)
    return EXIT_OK if response.complete else EXIT_INCOMPLETE


def _cmd_events(args: argparse.Namespace, out: TextIO) -> int:
    failure: list[Exception] = []
    started: list[bool] = []

    def write(event: Event) -> None:
        started.append(True)
        _dump(event_to_dict(event), out, indent=False)

    from_file(Path(args.file), args.provider).subscribe(write, failure.append)
    if failure:
        error = failure[0]
        _dump({"type": "error", "kind": getattr(error, "kind", "incomplete"),
               "message": str(error)}, out, indent=False)
        return EXIT_INCOMPLETE if started else EXIT_BAD_INPUT
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llm-rx", description="Replay, reassemble and inspect streamed LLM replies."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def with_file(name: str, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help)
        sub.add_argument("file", help="a recorded response body (SSE or NDJSON)")
        sub.add_argument("--provider", choices=PROVIDERS, help="default: told from the bytes")
        return sub

    demo = commands.add_parser("demo", help="replay the bundled real captures (no key needed)")
    demo.add_argument("--delay", type=float, help="seconds between events (default: paced "
                      "on a terminal, instant otherwise)")
    replay = with_file("replay", "show a recorded reply as it arrives")
    replay.add_argument("--delay", type=float, help="seconds between events")
    reassemble = with_file("reassemble", "print the reassembled response as JSON")
    reassemble.add_argument("--native", action="store_true",
                            help="the provider's own non-stream body instead of canonical JSON")
    reassemble.add_argument("--to", choices=sorted(ENCODERS),
                            help="with --native: re-encode for this provider")
    with_file("events", "print one JSON event per line")
    return parser


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "demo": _cmd_demo,
    "replay": _cmd_replay,
    "reassemble": _cmd_reassemble,
    "events": _cmd_events,
}


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = _parser().parse_args(argv)
    stream = out or sys.stdout
    try:
        return _COMMANDS[args.command](args, stream)
    except LlmRxError as error:
        sys.stderr.write(f"llm-rx: {type(error).__name__}: {error}\n")
        return EXIT_BAD_INPUT
    except (OSError, ValueError) as error:
        sys.stderr.write(f"llm-rx: {error}\n")
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
