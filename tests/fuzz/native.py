"""``python3 -m tests.fuzz.native SCAN_SO [--seconds N]``: the compiled core as built with
AddressSanitizer (``.ci/run`` builds it so, and runs this under ``LD_PRELOAD`` of the sanitizer's
runtime), through the equivalence tests, the seeded fuzzer and ``--runs`` inputs of the
entry points' fuzzer (``tests/fuzz/entry.py``, atheris): any read out of bounds, use after
free or double free in the C loop aborts the run with the sanitizer's report."""

from __future__ import annotations

import argparse
import importlib.util
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.fuzz.native")
    parser.add_argument("extension", help="the built _scan extension module to load")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=0, help="inputs of the entry fuzzer")
    # (a fixed seed: a run in CI is the same cases each time, so a commit lands or not on
    # what it changed; ``python3 -m tests.fuzz`` without ``--seed`` explores new ones)
    parser.add_argument("--seed", type=int, default=1796674432)
    args = parser.parse_args(argv)
    spec = importlib.util.spec_from_file_location("llm_rx.speed._scan", args.extension)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["llm_rx.speed._scan"] = module  # (before llm_rx.speed.core imports it)

    import pytest

    tests = pytest.main(["-q", "-p", "no:cacheprovider", "tests/wire/test_compiled_core.py",
                         "tests/wire/test_fast_paths.py", "tests/wire/test_error_any_split.py"])
    core = sys.modules["llm_rx.speed.core"]
    assert core.scan is module.scan, "the sanitized extension is not the one in use"
    from .__main__ import main as fuzz

    fuzzed = fuzz(["--seconds", str(args.seconds), "--no-reduce", "--seed", str(args.seed)])
    if tests != 0 or fuzzed != 0:
        return 1
    if args.runs:
        import atheris

        from .entry import one_input

        atheris.Setup([sys.argv[0], f"-runs={args.runs}"], one_input)
        atheris.Fuzz()  # (exits: 0 when every input passed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
