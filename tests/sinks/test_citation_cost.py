"""A notebook frame with many citations costs work linear in them, counted (not timed): one
URL cited with thousands of snippets, and tens of thousands of distinct sources, each cited
span ending at a place of its own around code spans, or all cited at one place.

Two counts: the lines of llm-rx's code a frame runs (Python's trace hook, stopped once over
budget, so a quadratic frame fails at once instead of running for minutes); and, for work
done inside one line (a search of a list), the machine instructions callgrind counts around
the frame (``valgrind``; skipped where it is not installed).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import llm_rx
from llm_rx.response import Response
from llm_rx.sinks._jupyter import render_frame

from .citing import CASES, SIZES, distinct_sources

PACKAGE = str(Path(llm_rx.__file__).parent)
ROOT = Path(__file__).resolve().parents[2]


class _OverBudget(Exception):
    pass


def _lines_run(work: Callable[[], object], budget: int | None = None) -> int:
    """How many lines of llm-rx's code ``work`` runs (Python's trace hook counts them);
    past ``budget`` the count stops and the test fails."""
    count = 0

    def local(frame: FrameType, event: str, _: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
            if budget is not None and count > budget:
                raise _OverBudget(count)
        return local

    def calls(frame: FrameType, event: str, _: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    sys.settrace(calls)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


def _ratio_of_lines(small: Response, large: Response, bound: float) -> float:
    first = _lines_run(lambda: render_frame(small, True))
    try:
        second = _lines_run(lambda: render_frame(large, True), budget=int(first * bound))
    except _OverBudget:
        pytest.fail(f"the frame ten times as large ran more than {bound}x the lines")
    return second / first


def test_notebook_frame_lines_are_linear_in_distinct_sources_around_code() -> None:
    # bug: each cited span's marker looked for the code spans before it in a list of all
    # of them made again for each marker (30,000 sources: a frame of 30 s)
    small, large = (distinct_sources(n, at_one_place=False) for n in (3_000, 30_000))
    ratio = _ratio_of_lines(small, large, 12)
    assert ratio < 12, ratio  # 10x the sources: 10x the work


# -- instructions, counted by callgrind -------------------------------------------------


@pytest.fixture(scope="module")
def instructions() -> dict[str, tuple[int, int]]:
    if shutil.which("valgrind") is None:
        reason = "valgrind counts the instructions (apt-get install valgrind)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cg.out"
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             "--collect-atstart=no", "--toggle-collect=functools_reduce",
             "--dump-after=functools_reduce", sys.executable, "-c",
             "from tests.sinks.citing import child; child()"],
            check=True, capture_output=True, cwd=ROOT, env=environment, timeout=900)
        dumps = sorted(Path(folder).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        counts = [int(re.search(rb"^totals: (\d+)", dump.read_bytes(), re.M).group(1))  # type: ignore[union-attr]
                  for dump in dumps]
    assert len(counts) == len(CASES) * len(SIZES)
    return {name: (counts[2 * n], counts[2 * n + 1]) for n, name in enumerate(CASES)}


@pytest.mark.parametrize("case", list(CASES))
def test_notebook_frame_instructions_are_linear_in_the_citations(
    instructions: dict[str, tuple[int, int]], case: str
) -> None:
    # bug: a source's snippets were searched in a list (one URL: 500 -> 5,000 snippets was
    # 60x the time), and so were the numbers of the sources cited at one place
    small, large = instructions[case]
    assert large / small < 12, (case, small, large)  # 10x the citations: 10x the work
