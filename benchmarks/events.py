"""What an event's kind-aware comparison costs: llm-rx's ``TextDelta`` against a plain
``NamedTuple`` with the same fields (tuple equality and hash, kind-blind), in one process,
interleaved rounds, medians.

    python -m benchmarks.events            # the table
    python -m benchmarks.events --quick    # fewer rounds

Construction (the hot path: one event per wire frame) is the same code for both, a tuple's
``__new__``; equality and hash are Python-level for the kind-aware class, and are used by
tests and by consumers comparing events, never by the decoders or the builder.
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from typing import NamedTuple

from llm_rx.events import TextDelta
from llm_rx.wire._boundary import new_event


class PlainDelta(NamedTuple):
    """``TextDelta``'s fields, compared and hashed as a bare tuple."""

    index: int  # type: ignore[assignment]  # as TextDelta's
    text: str


CASES = {
    "construct K(0, 'a')": "K(0, 'a')",
    "new_event(K, (0, 'a'))": "new_event(K, args)",
    "a == b (same kind)": "a == b",
    "hash(a)": "hash(a)",
    "100 events == 100 events": "many == others",
}


def measure(rounds: int, number: int) -> dict[str, tuple[float, float]]:
    """Nanoseconds per operation, plain and kind-aware (medians over interleaved rounds)."""
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in CASES}
    for _ in range(rounds):
        for name, statement in CASES.items():
            for column, kind in enumerate((PlainDelta, TextDelta)):
                names = {
                    "K": kind, "new_event": new_event, "args": (0, "a"),
                    "a": kind(0, "a"), "b": kind(0, "a"),
                    "many": [kind(i, "a") for i in range(100)],
                    "others": [kind(i, "a") for i in range(100)],
                }
                seconds = timeit.timeit(statement, globals=names, number=number)
                times[name][column].append(seconds / number * 1e9)
    return {name: (statistics.median(plain), statistics.median(kinded))
            for name, (plain, kinded) in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    quick = parser.parse_args().quick
    results = measure(rounds=3 if quick else 9, number=20_000 if quick else 200_000)
    print(f"{'operation':28s} {'plain tuple':>12s} {'kind-aware':>12s} {'ratio':>6s}  (ns)")
    for name, (plain, kinded) in results.items():
        print(f"{name:28s} {plain:12.1f} {kinded:12.1f} {kinded / plain:6.2f}")


if __name__ == "__main__":
    main()
