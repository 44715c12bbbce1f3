"""Cases made from a seed, run against the invariants, failures reduced to a small body.

A case is made from its own seed alone (``make_case(seed)``): which capture, which
mutations, which re-chunkings. A run draws case seeds from the run's seed, so a failure
prints the one number that reproduces it (``python3 -m tests.fuzz --case SEED``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from tests.captures import CAPTURES, Capture
from tests.test_properties import _terminal_offset

from .bodies import body_of
from .checks import Failure, check
from .mutators import MUTATORS, Mutation, truncate

__all__ = ["Case", "Report", "fuzz", "make_case", "minimize", "run_case"]


@dataclass(frozen=True)
class Case:
    seed: int
    capture: Capture
    provider: str | None  # None: sniffed
    mutations: tuple[Mutation, ...]
    cuts: tuple[tuple[int, ...], ...]
    terminal: int | None  # a prefix of the capture that ends before its terminal frame

    @property
    def body(self) -> bytes:
        return self.mutations[-1].body if self.mutations else self.capture.data

    def describe(self) -> str:
        steps = "; ".join(f"{m.name}({m.detail})" for m in self.mutations) or "none"
        return f"case {self.seed}: {self.capture.name} provider={self.provider} mutations: {steps}"


@dataclass
class Report:
    cases: int = 0
    elapsed: float = 0.0
    failures: list[tuple[Case, Failure]] = field(default_factory=list)

    def groups(self) -> dict[tuple[str, str], list[tuple[Case, Failure]]]:
        out: dict[tuple[str, str], list[tuple[Case, Failure]]] = {}
        for case, failure in self.failures:
            out.setdefault(failure.signature, []).append((case, failure))
        return out


@cache
def _data(name: str) -> bytes:
    return next(c for c in CAPTURES if c.name == name).data


@cache
def _terminal(name: str) -> int:
    return _terminal_offset(next(c for c in CAPTURES if c.name == name))


def make_case(seed: int) -> Case:
    rng = random.Random(seed)
    capture = rng.choice(CAPTURES)
    data = _data(capture.name)
    provider = None if rng.random() < 0.1 else capture.provider
    others = [_data(c.name) for c in CAPTURES if c.provider != capture.provider]
    mutations: list[Mutation] = []
    terminal = None
    if rng.random() < 0.15:  # a plain prefix: the truncation invariant applies
        mutation = truncate(rng, data, body_of(data, capture.provider), others)
        assert mutation is not None
        mutations.append(mutation)
        cut = len(mutation.body)
        terminal = _terminal(capture.name) if cut < _terminal(capture.name) else None
    else:
        functions = [m for m, _ in MUTATORS]
        weights = [w for _, w in MUTATORS]
        wanted = rng.choice([1, 1, 1, 1, 1, 1, 2, 2, 3])
        tries = 0
        while len(mutations) < wanted and tries < 20:
            tries += 1
            current = mutations[-1].body if mutations else data
            mutator = rng.choices(functions, weights)[0]
            try:
                made = mutator(rng, current, body_of(current, capture.provider), others)
            except RecursionError:  # (a frame an earlier mutation nested too deep to walk)
                made = None
            if made is not None:
                mutations.append(made)
    body = mutations[-1].body if mutations else data
    cuts = tuple(
        tuple(rng.randrange(len(body) + 1) for _ in range(rng.choice([1, 3, 30])))
        for _ in range(2)
    )
    return Case(seed, capture, provider, tuple(mutations), cuts, terminal)


def run_case(case: Case, limit: float | None = None) -> list[Failure]:
    if limit is None:
        return check(case.body, case.provider, case.cuts, case.terminal)
    return check(case.body, case.provider, case.cuts, case.terminal, limit)


def fuzz(
    seed: int,
    *,
    cases: int | None = None,
    seconds: float | None = None,
    on_failure: Callable[[Case, Failure], None] | None = None,
) -> Report:
    """Run cases drawn from ``seed`` until ``cases`` ran or ``seconds`` passed."""
    rng = random.Random(seed)
    report = Report()
    began = time.monotonic()
    while (cases is None or report.cases < cases) and (
        seconds is None or time.monotonic() - began < seconds
    ):
        case = make_case(rng.getrandbits(48))
        report.cases += 1
        for failure in run_case(case):
            report.failures.append((case, failure))
            if on_failure is not None:
                on_failure(case, failure)
    report.elapsed = time.monotonic() - began
    return report


def minimize(case: Case, failure: Failure, budget: float = 10.0) -> bytes:
    """A smaller body that breaks the same invariant at the same place: frames dropped, then
    byte ranges, while the failure stays (within ``budget`` seconds)."""
    stop = time.monotonic() + budget
    provider = case.provider
    limit = 0.5 if failure.invariant == "hang" else 5.0

    def fails(body: bytes) -> bool:
        if time.monotonic() > stop:
            return False
        cuts = tuple(tuple(p for p in points if p <= len(body)) for points in case.cuts)
        found = check(body, provider, cuts, case.terminal, limit)
        return any(f.signature == failure.signature for f in found)

    body = case.body
    frames = body_of(body, case.capture.provider)
    kept = _reduce(frames.frames, lambda parts: fails(type(frames)(frames.kind, parts).join()))
    body = type(frames)(frames.kind, kept).join() if fails(
        type(frames)(frames.kind, kept).join()) else body
    single = [body[i : i + 1] for i in range(len(body))]
    reduced = _reduce(single, lambda parts: fails(b"".join(parts)))
    return b"".join(reduced)


def _reduce(parts: list[bytes], fails: Callable[[list[bytes]], bool]) -> list[bytes]:
    """Drop chunks of ``parts`` (halves, then quarters, ...) while ``fails`` stays true."""
    size = max(len(parts) // 2, 1)
    while size >= 1 and parts:
        position = 0
        while position < len(parts):
            trial = parts[:position] + parts[position + size :]
            if trial != parts and fails(trial):
                parts = trial
            else:
                position += size
        if size == 1:
            break
        size //= 2
    return parts
