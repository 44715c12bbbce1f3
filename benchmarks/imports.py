"""What importing llm-rx costs, beside what importing reactivex costs.

    python -m benchmarks.imports              # best of 7 fresh interpreters per line
    python -m benchmarks.imports --runs 15
    python -m benchmarks.imports --root ../other-checkout   # (the same lines, another tree)

Each line is measured in fresh interpreters with ``-X importtime`` (the cumulative time of
the statement's own imports, in microseconds, as Python reports it; the interpreter's start
is not counted), and the best of the runs is kept: the machine is shared and noisy, and the
best run is the one the least disturbed. ``llm-rx --version`` is timed as a whole process
(wall clock, interpreter start included), beside ``python -c pass``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: label -> the statement measured.
STATEMENTS: dict[str, str] = {
    "import reactivex": "import reactivex",
    "import llm_rx": "import llm_rx",
    "the pytest plugin": (  # (the module the entry point names; before it was split off,
        "import importlib, importlib.util; importlib.import_module("  # llm_rx.testing)
        "'llm_rx._pytest_plugin' if importlib.util.find_spec('llm_rx._pytest_plugin') "
        "else 'llm_rx.testing')"
    ),
    "from_bytes + to_response": (
        "import llm_rx; from llm_rx import operators as lxo; "
        "llm_rx.from_bytes; lxo.to_response"
    ),
    "import llm_rx.cli": "import llm_rx.cli",
}

_LINE = re.compile(r"import time:\s+\d+\s+\|\s+(\d+)\s+\| (.*)$")


def imports_us(statement: str, root: Path = ROOT) -> int:
    """The cumulative import time of every top-level import ``statement`` makes (µs)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement], cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True,
        check=True, timeout=120,
    )
    total = 0
    for line in result.stderr.splitlines():
        found = _LINE.match(line)
        if found and not found.group(2).startswith(" "):  # (a top-level import: no indent)
            total += int(found.group(1))
    return total


def modules(statement: str, root: Path = ROOT) -> int:
    """How many modules ``statement`` imports (the same on every run, however busy the
    machine: the figure to compare when the times are noisy)."""
    probe = (f"import sys\nbefore = set(sys.modules)\n{statement}\n"
             "print(len(set(sys.modules) - before))")
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True, text=True, check=True, timeout=120,
    )
    return int(result.stdout.strip().splitlines()[-1])


def wall_ms(argv: list[str], root: Path = ROOT) -> float:
    """The wall-clock time of one process (ms)."""
    start = time.perf_counter()
    subprocess.run(argv, cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                   capture_output=True, check=True, timeout=120)
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per line")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout measured")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    best = {label: min(imports_us(code, root) for _ in range(args.runs))
            for label, code in STATEMENTS.items()}
    base = best["import reactivex"]
    print(f"{'statement':28} {'best µs':>10} {'x reactivex':>12} {'modules':>8}")
    for label, value in best.items():
        count = modules(STATEMENTS[label], root)
        print(f"{label:28} {value:>10} {value / base:>12.2f} {count:>8}")
    empty = min(wall_ms([sys.executable, "-c", "pass"], root) for _ in range(args.runs))
    version = min(wall_ms([sys.executable, "-m", "llm_rx", "--version"], root)
                  for _ in range(args.runs))
    print(f"{'python -c pass':28} {empty:>9.1f}ms")
    print(f"{'llm-rx --version':28} {version:>9.1f}ms")


if __name__ == "__main__":
    main()
