"""Instruction counts of ``reassemble`` against the floor, split per reply, per event, per read.

    python -m benchmarks.instructions                  # every stream kind (needs valgrind)
    python -m benchmarks.instructions --kind anthropic

CPU time moves with the machine's load; the instructions a run executes do not. Each stream
kind runs in one process under ``valgrind --tool=callgrind``, which counts only what runs
inside ``functools.reduce`` (``--toggle-collect``) and writes one count each time it returns
(``--dump-after``): every measurement is one reassembly wrapped in a ``reduce`` call, after
a first run of each outside it (imports, caches and the allocator warm), the fewest of three.
The replies are those of ``benchmarks.sizes`` (generated as the APIs send them); the floor is
the same plain parse loop. From a reply of 50 events and one of 250, whole and in 1 KiB reads:

- per event: (I(250) - I(50)) / 200
- per reply: I(50) - 50 x per event (the set-up and the end of a reply)
- per read: (I(250 in 1 KiB reads) - I(250 whole)) / (reads - 1)

for llm-rx with the speed shortcuts on, with them off (``fast_paths(False)``: the plain
decoders alone), and for the floor; the per-reply cost is also given in floor events.

``--long``: the long synthetic streams of ``benchmarks.run`` instead (5,000 events, or 8
parallel calls of 600 fragments, in 64 KiB reads), the whole reply's count over the floor's.
"""

from __future__ import annotations

import argparse
import functools
import gc
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import sizes

_SMALL, _LARGE, _READ = 50, 250, 1024
_ROUNDS = 3
_CONFIGS = ((_SMALL, None), (_LARGE, None), (_LARGE, _READ))


def _runners(floor: sizes.Floor) -> list[tuple[str, Callable[[list[bytes]], object]]]:
    import llm_rx
    from llm_rx.speed import fast_paths

    def plain(reads: list[bytes]) -> object:
        with fast_paths(False):
            return llm_rx.reassemble(reads)

    return [("llm-rx", llm_rx.reassemble), ("plain", plain), ("floor", floor)]


def child(kind: str) -> None:
    """Under callgrind: each measurement inside its own ``functools.reduce``, every one run
    once before (imports, caches and the allocator's pools warm), then each measured
    ``_ROUNDS`` times in turn."""
    make, floor = next((m, f) for title, m, f in sizes.KINDS if title == kind)
    cases = [(run, sizes._reads(make(n, 7), size))
             for _, run in _runners(floor) for n, size in _CONFIGS]
    for run, reads in cases:
        run(reads)
    gc.disable()  # (a collection would land in whichever measurement it fell in)
    for _ in range(_ROUNDS):
        for run, reads in cases:
            gc.collect()
            functools.reduce(lambda _a, _b, run=run, reads=reads: run(reads), [0, 0])


def _long_cases() -> list[tuple[str, bytes, sizes.Floor]]:
    from . import run, streams

    return [("openai chat, text", streams.openai_chat(5_000), run.floor_openai),
            ("anthropic, thinking+text+tool", streams.anthropic(5_000), run.floor_anthropic),
            ("openai chat, parallel tool calls", streams.openai_tool_calls(8, 600),
             run.floor_openai_tools),  # type: ignore[list-item]  # (its floor gives a dict)
            ("gemini, text + usage per chunk", streams.gemini(5_000), run.floor_gemini),
            ("ollama /api/chat", streams.ollama(5_000), run.floor_ollama)]


def long_child(kind: str) -> None:
    """Under callgrind: a long stream's runners, each measured as in `child`."""
    from . import streams

    _, body, floor = next(case for case in _long_cases() if case[0] == kind)
    cases = [(run, streams.chunked(body)) for _, run in _runners(floor)]
    for run, reads in cases:
        run(reads)
    gc.disable()
    for _ in range(_ROUNDS):
        for run, reads in cases:
            gc.collect()
            functools.reduce(lambda _a, _b, run=run, reads=reads: run(reads), [0, 0])


def _counts(kind: str, long: bool = False) -> list[int]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cg.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             "--collect-atstart=no", "--toggle-collect=functools_reduce",
             "--dump-after=functools_reduce", sys.executable, "-m", "benchmarks.instructions",
             "--long-child" if long else "--child", kind],
            check=True, capture_output=True, cwd=Path(__file__).resolve().parent.parent,
        )
        dumps = sorted(Path(folder).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        counts = [int(re.search(rb"^totals: (\d+)", d.read_bytes(), re.M).group(1))  # type: ignore[union-attr]
                  for d in dumps]
    cases = len(counts) // _ROUNDS  # (the fewest of each case's rounds)
    return [min(counts[case::cases]) for case in range(cases)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", help="only the kinds whose title contains this")
    parser.add_argument("--long", action="store_true", help="the long synthetic streams")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--long-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    if args.long_child:
        long_child(args.long_child)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    if args.long:
        print(f"{'stream':34} {'llm-rx':>8} {'plain':>8}   (x the floor's instructions)")
        for title, _, _ in _long_cases():
            if not args.kind or args.kind in title:
                ours, plain, floor = _counts(title, long=True)
                print(f"{title:34} {ours / floor:7.2f}x {plain / floor:7.2f}x", flush=True)
        return 0
    print(f"{'stream':28} {'run':7} {'per event':>10} {'x floor':>8} {'per reply':>10} "
          f"{'floor ev.':>9} {'per read':>9}", flush=True)
    for title, make, _ in sizes.KINDS:
        if args.kind and args.kind not in title:
            continue
        counts = _counts(title)
        reads = len(sizes._reads(make(_LARGE, 7), _READ))
        rows = {}
        for position, name in enumerate(("llm-rx", "plain", "floor")):
            small, large, cut = counts[3 * position : 3 * position + 3]
            per_event = (large - small) / (_LARGE - _SMALL)
            rows[name] = (per_event, small - _SMALL * per_event, (cut - large) / (reads - 1))
        floor_event = rows["floor"][0]
        for name, (per_event, per_reply, per_read) in rows.items():
            print(f"{title:28} {name:7} {per_event:10,.0f} {per_event / floor_event:7.2f}x "
                  f"{per_reply:10,.0f} {per_reply / floor_event:9.0f} {per_read:9,.0f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
