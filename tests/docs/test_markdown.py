"""The pages render as written, on the site (Python-Markdown) and on a repository host (GFM):
every table's rows have the header's number of cells, every list starts after a blank line,
and no page or message installs llm-rx from a package index it is not on."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from .pages import ROOT, pages

MARKDOWN = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "ARCHITECTURE.md", *pages()]
DIVIDER = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)]) ")


def _prose(text: str) -> list[tuple[int, str]]:
    """The page's lines outside fenced code, numbered from 1."""
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append((number, line))
    return out


def _cells(row: str) -> int:
    """A table row's cells as GFM counts them: split at every ``|`` not escaped, inside code
    spans too (a pipe in a cell is written ``\\|``)."""
    inner = re.sub(r"\\\|", "", row.strip())
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return inner.count("|") + 1


def table_problems(text: str) -> list[str]:
    """Each table row whose cells are not the header's, as ``line: header n, row m``."""
    lines = _prose(text)
    found = []
    for at, (number, line) in enumerate(lines[:-1]):
        if "|" not in line or not DIVIDER.match(lines[at + 1][1]):
            continue
        header = _cells(line)
        if _cells(lines[at + 1][1]) != header:
            found.append(f"{lines[at + 1][0]}: header {header}, divider "
                         f"{_cells(lines[at + 1][1])}")
        for row_number, row in lines[at + 2:]:
            if "|" not in row or not row.strip():
                break
            if _cells(row) != header:
                found.append(f"{row_number}: header {header}, row {_cells(row)}")
    return found


def list_problems(text: str) -> list[str]:
    """Each list whose first item follows a line of text with no blank line between (the
    site's Markdown reads it as part of that paragraph: the items run on as text)."""
    lines = _prose(text)
    found = []
    for (_, before), (number, line) in itertools.pairwise(lines):
        if LIST_ITEM.match(line) and before.strip() and not (
                LIST_ITEM.match(before.lstrip()) or before.startswith((" ", "\t", "|", "#"))):
            found.append(f"{number}: {line[:40]!r} follows {before[:40]!r}")
    return found


@pytest.mark.parametrize("page", MARKDOWN, ids=[p.relative_to(ROOT).as_posix() for p in MARKDOWN])
def test_every_table_row_has_the_headers_cells(page: Path) -> None:
    assert table_problems(page.read_text("utf-8")) == []


@pytest.mark.parametrize("page", MARKDOWN, ids=[p.relative_to(ROOT).as_posix() for p in MARKDOWN])
def test_every_list_starts_after_a_blank_line(page: Path) -> None:
    assert list_problems(page.read_text("utf-8")) == []


def test_the_checks_see_a_split_row_and_a_run_on_list() -> None:
    split = ("| stream | reads | x floor |\n| --- | --- | --- |\n| a | whole | 1x |\n"
             "| a | 1 | KiB | 2x |\n| b | `x|y` | 3x |\n| c | `x\\|y` | 3x |\n")
    assert table_problems(split) == ["4: header 3, row 4", "5: header 3, row 4"]
    assert table_problems("```\n| a |\n| --- |\n| b | c |\n```\n") == []
    assert list_problems("Text:\n- one\n- two\n") == ["2: '- one' follows 'Text:'"]
    assert list_problems("Text:\n\n- one\n- two\n  more\n- three\n") == []


# -- installing: llm-rx is on no package index -------------------------------------------------

FROM_INDEX = re.compile(r"""pip install[^\n`]*?['"]?llm-rx\[|['"]llm-rx\[""")
MESSAGES = sorted(path for path in (ROOT / "llm_rx").rglob("*.py")
                  if path.relative_to(ROOT / "llm_rx").parts[0] not in ("sinks", "operators"))


def test_no_page_installs_llm_rx_from_an_index() -> None:
    found = [f"{page.relative_to(ROOT)}:{number}" for page in MARKDOWN
             for number, line in enumerate(page.read_text("utf-8").splitlines(), 1)
             if FROM_INDEX.search(line) and page.name != "CHANGELOG.md"]
    assert found == []


def test_no_message_installs_llm_rx_from_an_index() -> None:
    found = [f"{path.relative_to(ROOT)}:{number}" for path in MESSAGES
             for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
             if FROM_INDEX.search(line)]
    assert found == []


def test_no_message_of_the_sinks_and_operators_installs_llm_rx_from_an_index() -> None:
    paths = [*(ROOT / "llm_rx" / "sinks").rglob("*.py"),
             *(ROOT / "llm_rx" / "operators").rglob("*.py")]
    found = [str(path.relative_to(ROOT)) for path in paths
             if FROM_INDEX.search(path.read_text("utf-8"))]
    assert found == []


def test_the_install_hint_names_this_checkout() -> None:
    from llm_rx._extras import install_hint

    assert install_hint("serve") == f"python3 -m pip install '{ROOT}[serve]'"
