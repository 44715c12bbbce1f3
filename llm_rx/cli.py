"""The ``llm-rx`` command: the same engine as the library, on recorded bodies.

::

    llm-rx demo [--json]                          replay the bundled captures, live
    llm-rx replay FILE [--provider P] [--delay S] show a recorded reply as it arrives
    llm-rx reassemble FILE [--provider P] [--native [--to P]]   the response as JSON
    llm-rx events FILE [--provider P]             one JSON event per line
    llm-rx serve [PATH ...] [--host H] [--port N] [--pace T]   captures on provider endpoints
    llm-rx record --upstream URL --out DIR [--port N]          a recording proxy
    llm-rx convert FILE --to P [--provider Q]     the reply as P's stream, live
    llm-rx --version

FILE ``-`` reads stdin. Exit status: 0 for a complete reply; 1 when the reply is incomplete
(cut short, or an error inside the stream: what arrived is still printed, and stderr says
why); 2 for input that is not a stream at all, a file that cannot be read, or bad options;
130 after Ctrl-C. When stdout is closed early (``llm-rx events FILE | head -1``) the command
stops quietly, as ``cat`` does: killed by ``SIGPIPE``, which a shell reports as 141.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

import orjson
from reactivex import Observable
from reactivex import operators as ops

from . import __version__, serve
from . import operators as lxo
from ._cli_io import (
    EXIT_PIPE,
    BadInput,
    discard_stdout,
    open_input,
    quiet_on_closed_pipe,
    run_to_end,
)
from ._extras import install_hint
from .data import DEMO_CAPTURES, capture_path
from .encoders import ENCODERS as STREAM_ENCODERS
from .errors import LlmRxError
from .events import Dropped, Event, event_to_dict
from .native import ENCODERS, to_native
from .response import Response
from .sinks import terminal_display
from .sinks._term_text import terminal_json, terminal_text
from .sources import from_bytes
from .wire.providers import UI_STREAMS, ProviderName, provider_id
from .wire.registry import PROVIDERS

__all__ = ["main"]

EXIT_OK, EXIT_INCOMPLETE, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

#: Shown in a human summary for a value nobody reported (never ``None``, never ``0``).
ABSENT = "—"
#: the streams a command reads: every provider's wire and the browser protocols
_READ = (*PROVIDERS, *UI_STREAMS)


def _say(message: str) -> None:
    """A message on stderr (what it quotes of a reply, terminal-escaped: see sinks)."""
    sys.stderr.write(f"llm-rx: {terminal_text(message)}\n")


def _dump(value: Any, out: TextIO, *, indent: bool = True) -> None:
    option = orjson.OPT_INDENT_2 if indent else 0
    out.write(terminal_json(orjson.dumps(value, option=option).decode()) + "\n")


def _events(chunks: Iterable[bytes], provider: ProviderName | None) -> Observable[Event]:
    return from_bytes(chunks, provider)


def _replay(
    chunks: Iterable[bytes], provider: ProviderName | None, delay: float, out: TextIO
) -> Response:
    events = _events(chunks, provider)
    if delay > 0:
        events = events.pipe(lxo.paced(delay))
    # rich Live on a terminal (when rich is installed), plain incremental text otherwise
    return run_to_end(events.pipe(terminal_display(out=out), lxo.to_response()))


def _shown(value: object) -> str:
    """A value as the summary shows it: a count as the display's footer writes it (4,714)."""
    if value is None:
        return ABSENT
    return f"{value:,}" if isinstance(value, int) else str(value)


#: The summary under a reply is one line of a terminal of 100 columns (it never wraps).
SUMMARY_WIDTH = 100


def _summary(response: Response, out: TextIO, width: int = SUMMARY_WIDTH) -> None:
    """One line under a reply: whose, which model, how it ended, and the token counts.

    What does not fit ``width`` is left out, the least useful first: a count nobody
    reported, then the cache and reasoning counts, the stop reason, the model (never shown
    as unknown), the output and input counts; whose reply it is and whether it is complete
    (and why not, shortened to the room there is) always stay."""
    usage = response.usage
    # (a part: its text, and its rank: the highest is left out first; 0 always stays)
    model = terminal_text(response.model or "")
    parts = [(f"-- {response.provider}", 0), *([(model, 6)] if model else []),
             (f"stop {_shown(response.stop_reason)}", 7), (_state(response, _WHY), 0)]
    for label, value, rank in (("input", usage.input_tokens, 4),
                               ("output", usage.output_tokens, 5),
                               ("reasoning", usage.reasoning_tokens, 8),
                               ("cache read", usage.cache_read_tokens, 9)):
        parts.append((f"{label} {_shown(value)}", rank + (10 if value is None else 0)))
    while len(" · ".join(text for text, _ in parts)) > width and any(r for _, r in parts):
        highest = max(rank for _, rank in parts)
        parts = [(text, rank) for text, rank in parts if rank != highest]
    line = " · ".join(text for text, _ in parts)
    if len(line) > width:  # (only why it ended is left to shorten)
        state = _state(response, min(_WHY, len(_why(response))) - (len(line) - width))
        line = " · ".join(state if text.startswith("INCOMPLETE") else text for text, _ in parts)
    out.write(line[:width] + "\n")


#: Characters of why a reply is incomplete shown in its summary at most.
_WHY = 60


def _state(response: Response, room: int) -> str:
    if response.complete:
        return "complete"
    why = _why(response)
    return f"INCOMPLETE ({why if len(why) <= room else why[: max(1, room - 1)] + '…'})"


def _why(response: Response) -> str:
    error = response.error
    return "no error reported" if error is None else terminal_text(f"{error.kind}: {error.message}")


def _outcome(response: Response) -> int:
    """The exit status of a reply printed as data; why one is incomplete goes to stderr."""
    if response.complete:
        return EXIT_OK
    _say(f"the reply is incomplete ({_why(response)})")
    return EXIT_INCOMPLETE


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    delay = args.delay if args.delay is not None else (0.01 if out.isatty() else 0.0)
    for name in DEMO_CAPTURES:
        out.write(f"\n=== replaying {name} (a real recorded stream) ===\n")
        with open_input(str(capture_path(name))) as chunks:
            response = _replay(chunks, None, delay, out)
        _summary(response, out)
        if args.json:  # (only when asked: a reply's JSON is a screenful or more)
            out.write("-- reassembled response:\n")
            _dump(response.model_dump(mode="json"), out)
    return EXIT_OK


def _cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    delay = args.delay if args.delay is not None else (0.02 if out.isatty() else 0.0)
    with open_input(args.file) as chunks:
        response = _replay(chunks, args.provider, delay, out)
    _summary(response, out)  # (which says why a reply is incomplete)
    return EXIT_OK if response.complete else EXIT_INCOMPLETE


def _cmd_reassemble(args: argparse.Namespace, out: TextIO) -> int:
    with open_input(args.file) as chunks:
        response = run_to_end(_events(chunks, args.provider).pipe(lxo.to_response()))
    if args.native:
        _dump(to_native(response, provider_id(args.to or response.provider)), out)
    else:
        _dump(response.model_dump(mode="json"), out)
    return _outcome(response)


def _cmd_events(args: argparse.Namespace, out: TextIO) -> int:
    def write(event: Event) -> None:
        _dump(event_to_dict(event), out, indent=False)

    # folded as reassemble folds them: the same exit status, the same message on stderr
    with open_input(args.file) as chunks:
        events = _events(chunks, args.provider)
        response = run_to_end(events.pipe(ops.do_action(write), lxo.to_response()))
    return _outcome(response)


def _cmd_convert(args: argparse.Namespace, out: TextIO) -> int:
    sink = getattr(out, "buffer", None)  # (the bytes as they are: Bedrock's are binary)
    written = False

    def write(data: bytes) -> None:
        nonlocal written
        written = True
        if sink is not None:
            sink.write(data)
            sink.flush()
        else:
            out.write(data.decode("utf-8", "replace"))

    dropped: list[Dropped] = []
    with open_input(args.file) as chunks:
        encoded = _events(chunks, args.provider).pipe(
            lxo.encode(args.to, dropped=dropped), ops.do_action(write), ops.to_list())
        try:
            run_to_end(encoded)
            status = EXIT_OK
        except LlmRxError as error:
            if not written:  # not a stream at all: nothing to convert
                raise
            _say(f"the reply is incomplete ({error.kind}: {error})")
            status = EXIT_INCOMPLETE
    for item in dropped:
        where = "" if item.index is None else f" (block {item.index})"
        _say(f"dropped {item.what}{where}: {item.reason}")
    return status


def _delay(text: str) -> float:
    """A ``--delay``: seconds, zero or more."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not seconds >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, not {text}")
    return seconds


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llm-rx", description="Replay, reassemble and inspect streamed LLM replies.",
        epilog="Exit status: 0 complete reply, 1 incomplete reply (what arrived is still "
               "printed), 2 not a stream / unreadable file / bad options, 130 Ctrl-C.",
    )
    parser.add_argument("--version", action="version", version=f"llm-rx {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def with_file(name: str, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.add_argument("file", metavar="FILE",
                         help="a recorded response body (SSE, NDJSON, ...); - reads stdin")
        sub.add_argument("--provider", choices=_READ, metavar="P",
                         help=f"one of {', '.join(_READ)} (default: told from the bytes)")
        return sub

    demo = commands.add_parser(
        "demo", help="replay the bundled real captures (no key needed)",
        description="Replay real recorded replies bundled with llm-rx (text, reasoning, "
                    "parallel tool calls; several providers) in the live terminal display, "
                    "each followed by a one-line summary. No key and no network needed.")
    demo.add_argument("--delay", type=_delay, metavar="S", help="seconds between events "
                      "(default: paced on a terminal, instant otherwise)")
    demo.add_argument("--json", action="store_true",
                      help="after each reply, also print the reassembled response as JSON")
    replay = with_file("replay", "show a recorded reply as it arrives")
    replay.add_argument("--delay", type=_delay, metavar="S", help="seconds between events "
                        "(default: 0.02 on a terminal, instant otherwise)")
    reassemble = with_file("reassemble", "print the reassembled response as JSON")
    reassemble.add_argument("--native", action="store_true",
                            help="the provider's own non-stream body instead of canonical JSON")
    reassemble.add_argument("--to", choices=sorted(ENCODERS),
                            metavar="P", help="with --native: the body of this provider "
                            f"instead, one of {', '.join(sorted(ENCODERS))}")
    reassemble.set_defaults(subparser=reassemble)  # (to refuse --to without --native)
    with_file("events", "print one JSON event per line")
    serve.add_arguments(commands.add_parser(
        "serve", help="serve captures on each provider's real endpoints (extra 'serve')",
        description="Serve recorded replies on each provider's real endpoints and wire "
                    "formats, so the official SDKs and any HTTP client can be pointed at it: "
                    "the request's model names the capture. "
                    f"Needs the 'serve' extra ({install_hint('serve')})."))
    from .serve._record_main import add_record_arguments

    add_record_arguments(commands.add_parser(
        "record", help="a recording proxy: captures and their timing (extra 'serve')",
        description="Pass requests on to a provider and write each streamed reply as a "
        "capture with its timing; credentials never reach a file."))
    convert = with_file("convert", "print the reply re-encoded as another provider's stream")
    convert.add_argument("--to", required=True, choices=sorted(STREAM_ENCODERS), metavar="P",
                         help=f"the target stream, one of {', '.join(sorted(STREAM_ENCODERS))}")
    return parser


def _cmd_record(args: argparse.Namespace, out: TextIO) -> int:
    from .serve._record_main import run_record

    return run_record(args, out)


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "demo": _cmd_demo,
    "replay": _cmd_replay,
    "reassemble": _cmd_reassemble,
    "events": _cmd_events,
    "serve": serve.run,
    "record": _cmd_record,
    "convert": _cmd_convert,
}


#: The commands whose output is all on stdout, ended by SIGPIPE when it closes. (Never a
#: command that writes to sockets: a client that goes away would kill the process.)
_PRINTING = frozenset({"demo", "replay", "reassemble", "events", "convert"})


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command; ``argv`` ``None`` means this process's command line (the ``llm-rx``
    command itself, which then also lets a closed stdout end it quietly)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if argv is None and args.command in _PRINTING:
        quiet_on_closed_pipe()
    if args.command == "reassemble" and args.to is not None and not args.native:
        args.subparser.error("--to only works with --native (it names whose body to print)")
    stream = out or sys.stdout
    try:
        return _COMMANDS[args.command](args, stream)
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # (where there is no SIGPIPE to end the process quietly)
        discard_stdout()
        return EXIT_PIPE
    except BadInput as error:
        _say(str(error))
        return EXIT_BAD_INPUT
    except LlmRxError as error:
        _say(f"{type(error).__name__}: {error}")
        return EXIT_BAD_INPUT
    except (OSError, ValueError) as error:
        _say(str(error))
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
