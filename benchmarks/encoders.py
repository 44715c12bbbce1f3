"""Every encoder side by side: each stream of ``benchmarks.run`` decoded and re-encoded as
each target's stream (``encode()`` right after the source), as a ratio to reassembling it.

    python -m benchmarks.encoders            # every target on every stream
    python -m benchmarks.encoders --quick    # smaller streams, fewer rounds
    python -m benchmarks.encoders --quick --targets vercel-ui,ag-ui   # only these targets

All targets run on the same bytes in interleaved rounds (``run.measure``); a target that is
the stream's own provider is a same-provider round trip (its spellings given back). The
ratios are medians over rounds of each target's time over ``reassemble``'s in that round.
"""

from __future__ import annotations

import argparse
import sys

from llm_rx.encoders import ENCODERS

from . import run, streams

__all__ = ["contenders", "main"]


def contenders(targets: list[str] | None = None) -> dict[str, run.Contender]:
    """``reassemble``, then ``encode(target)`` for every target (or those given)."""
    return {"llm_rx.reassemble": run.reassemble,
            **{f"encode({target})": run.encoder(target)
               for target in (targets or sorted(ENCODERS))}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer rounds")
    parser.add_argument("--targets", help="comma-separated targets (default: every one); "
                        f"of {', '.join(sorted(ENCODERS))}")
    args = parser.parse_args(argv)
    n = 4_000 if args.quick else 20_000
    rounds = 5 if args.quick else 11
    every = contenders(args.targets.split(",") if args.targets else None)
    names = [name for name in every if name != "llm_rx.reassemble"]
    print(f"{'stream':34} " + " ".join(f"{name[7:-1]:>17}" for name in names)
          + "   (x reassemble)")
    for title, make_body, _, _ in run._cases(n, sdks=False):
        _, times = run.measure(every, streams.chunked(make_body()), rounds, rounds)
        cells = [f"{run.ratio(times, name, 'llm_rx.reassemble'):17.2f}" for name in names]
        print(f"{title:34} " + " ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
