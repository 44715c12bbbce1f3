"""The static checks are tests too: one command runs everything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)


def test_ruff_clean() -> None:
    folders = [name for name in ("llm_rx", "tests", "benchmarks", "docs", "notebooks")
               if (ROOT / name).exists()]
    result = _run("ruff", "check", *folders)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clean() -> None:
    result = _run("mypy", "--strict", "llm_rx")
    assert result.returncode == 0, result.stdout + result.stderr
