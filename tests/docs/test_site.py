"""The site builds strictly (a broken link, a missing reference or a missing included file
fails it), and its API reference renders every public name."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import llm_rx
from llm_rx import operators, sinks, wire

from .pages import DOCS, ROOT

BUILD_DEADLINE = 120  # seconds (a build takes about 10 on a busy 2-core machine)
REFERENCED = re.compile(r"^::: (\S+)\s*$", re.M)


def _mkdocs() -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec(
            "mkdocstrings_handlers") is None:
        if os.environ.get("CI"):
            pytest.fail("mkdocs is missing: the dev extra installs the docs extra")
        pytest.skip("mkdocs not installed (pip install -e '.[docs]')")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=BUILD_DEADLINE,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def test_site_builds_strictly(tmp_path: Path) -> None:
    _mkdocs()
    result = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "reference" / "operators" / "index.html").is_file()
    changelog = (tmp_path / "site" / "changelog" / "index.html").read_text("utf-8")
    assert "Keep a Changelog" in changelog  # (CHANGELOG.md included, not copied)
    linked = tmp_path / "site" / "source" / "tests" / "test_pitfalls.py"
    assert linked.read_bytes() == (ROOT / "tests" / "test_pitfalls.py").read_bytes()


def test_reference_names_every_public_name() -> None:
    referenced = set()
    for page in (DOCS / "reference").glob("*.md"):
        referenced.update(REFERENCED.findall(page.read_text("utf-8")))
    for module in (llm_rx, operators, sinks, wire):
        missing = {f"{module.__name__}.{name}" for name in module.__all__} - referenced
        assert not missing, f"not in docs/reference: {sorted(missing)}"


def test_nav_names_every_page() -> None:
    config = (ROOT / "mkdocs.yml").read_text("utf-8")
    for page in DOCS.rglob("*.md"):
        if "hooks" not in page.parts:
            assert page.relative_to(DOCS).as_posix() in config, page
