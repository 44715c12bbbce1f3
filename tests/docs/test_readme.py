"""The README is the front page: its example runs, its links lead somewhere, its commands
are what CI runs, and its performance figures are the ones the performance page reports."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .pages import FENCE, ROOT

README = (ROOT / "README.md").read_text("utf-8")
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.M)
RATIO = re.compile(r"\d+\.\d+x")


def _section(heading: str) -> str:
    return README.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _slug(heading: str) -> str:
    """The anchor of a heading, as both the site (Python-Markdown's toc) and a repository host
    make it for the plain headings the pages use."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[\s]+", "-", text)


def test_readme_examples_run(monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    blocks = [code for language, code in FENCE.findall(README) if language == "python"]
    assert blocks
    for code in blocks:
        scope: dict[str, Any] = {"__name__": "__readme__"}
        exec(compile(code, "README.md", "exec"), scope)  # (the example itself)
    assert scope["response"].complete
    assert "anthropic end_turn" in capsys.readouterr().out


def test_readme_links_lead_to_files_and_headings_of_the_checkout() -> None:
    local = [target for target in LINK.findall(README) if "://" not in target]
    assert any(target.startswith("docs/") for target in local)
    for target in local:
        path, _, anchor = target.partition("#")
        assert (ROOT / path).is_file(), target
        if anchor:
            headings = HEADING.findall((ROOT / path).read_text("utf-8"))
            assert anchor in {_slug(heading) for heading in headings}, target


def test_readme_names_five_guarantees_each_linked_to_its_section() -> None:
    bullets = [line for line in _section("What you can rely on").splitlines()
               if line.startswith("- ")]
    assert len(bullets) == 5
    assert all("](docs/guarantees.md#" in line for line in bullets)


def test_readme_links_every_page_of_the_site() -> None:
    linked = {Path(target.partition("#")[0]) for target in LINK.findall(_section("Documentation"))}
    pages = {path.relative_to(ROOT) for path in (ROOT / "docs").rglob("*.md")
             if "hooks" not in path.parts and path.name not in {"index.md", "architecture.md",
                                                               "changelog.md"}}
    assert pages <= linked, sorted(map(str, pages - linked))
    assert {Path("ARCHITECTURE.md"), Path("CHANGELOG.md")} <= linked  # (those two pages' text)


def test_readme_quickstart_commands_are_what_ci_runs() -> None:
    commands = ["\n".join(line for line in code.strip().splitlines()
                           if not line.startswith("# "))  # (see tests/docs/test_shell.py)
                for language, code in FENCE.findall(_section("Quickstart")) if language == "sh"]
    assert commands == ["python3 -m pip install '.[rich]' && llm-rx demo",
                        "python3 -m pip install -c constraints.txt -e '.[dev]' "
                        "&& python3 -m pytest"]
    ci = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    assert any(line.startswith("python3 -m pip install")
               and " -c constraints.txt -e '.[dev]' " in line for line in ci)
    assert "python3 -m pytest" in ci


def test_constraints_pin_every_package_the_dev_extra_names() -> None:
    # bug class: a package added to an extra without .ci/lock run again is resolved anew on
    # every fresh machine, at whatever version is newest that day
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    wanted = {re.split(r"[\[<>=!~ ]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")
              for line in config["options.extras_require"]["dev"].splitlines() if line.strip()}
    wanted |= {re.split(r"[<>=!~ ]", line.strip(), maxsplit=1)[0].lower()
               for line in config["options"]["install_requires"].splitlines() if line.strip()}
    pinned = {line.split("==", 1)[0].lower().replace("_", "-")
              for line in (ROOT / "constraints.txt").read_text("utf-8").splitlines()
              if "==" in line and not line.startswith("#")}
    assert wanted <= pinned, sorted(wanted - pinned)


def test_readme_performance_figures_are_the_performance_pages() -> None:
    summary = _section("Performance")
    page = (ROOT / "docs" / "performance.md").read_text("utf-8")
    figures = RATIO.findall(summary)
    assert len(figures) >= 4
    for figure in figures:
        assert re.search(rf"(?<![\d.]){re.escape(figure)}", page), figure
    assert "](docs/performance.md)" in summary
