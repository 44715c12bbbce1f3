"""``python3 -m tests.fuzz --seconds N [--seed S]``: fuzz for a while, print what broke.

Each distinct failure (invariant and where it was raised) is printed once, with the case
that found it, its seed and a reduced body; then a summary line. ``--case SEED`` runs one
case again. The exit status is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import sys
import time

from .checks import Failure
from .run import Case, fuzz, make_case, minimize, run_case


def _show(case: Case, failure: Failure, reduce: bool) -> None:
    print(f"FAIL {case.capture.provider} {failure.invariant} [{failure.where}] {failure.detail}")
    print(f"  {case.describe()[:600]}")
    if reduce:
        body = minimize(case, failure)
        print(f"  reduced body ({len(body)} bytes): {body[:600]!r}")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.fuzz")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--case", type=int, default=None, help="run this one case again")
    parser.add_argument("--no-reduce", action="store_true", help="print failures unreduced")
    args = parser.parse_args(argv)
    if args.case is not None:
        case = make_case(args.case)
        failures = run_case(case)
        for failure in failures:
            _show(case, failure, not args.no_reduce)
        print(f"case {args.case}: {len(failures)} failure(s)")
        return 1 if failures else 0

    seen: set[tuple[str, str, str]] = set()

    def report(case: Case, failure: Failure) -> None:
        key = (*failure.signature, case.capture.provider)
        if key not in seen:
            seen.add(key)
            _show(case, failure, not args.no_reduce)

    result = fuzz(args.seed, seconds=args.seconds, on_failure=report)
    rate = result.cases / result.elapsed if result.elapsed else 0.0
    print(f"seed {args.seed}: {result.cases} cases in {result.elapsed:.1f} s "
          f"({rate:.1f} cases/s), {len(result.failures)} failures in {len(seen)} classes")
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
