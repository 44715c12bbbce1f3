"""What a reply cannot do in a notebook exported by ``jupyter nbconvert --to html``: a
notebook whose outputs are every frame ``jupyter_display()`` showed of the hostile replies
(tests/sinks/hostile.py: HTML, Markdown links, math with ``$$``, ``$``, ``\\(``,
``\\begin``, TeX's ``\\href``, backticks; in the answer, thinking, tool names and arguments,
citations' titles, URLs and snippets, errors, the model id), exported by the real command
line, then loaded in headless Chromium, whose DOM is read back after the page ran.

nbconvert reads math before the Markdown (``$$ ... $$`` may span a code block's end), and
MathJax reads the page's text after it: neither may find anything of the reply's to make
markup of. A control export of the same payload, trusted as Markdown, shows the checks can
fail: there a ``javascript:`` link exists and math is read.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from .hostile import BODIES, END, EVERYTHING, MARKER
from .test_hostile import ELEMENTS, Elements, _frames, math_read
from .test_hostile_browser import CHROMIUM, _dom, _ran

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install -y chromium)")


def _exported(outputs: list[dict[str, str]], folder: Path) -> str:
    """A notebook of one cell per output (each a display of it), exported to HTML by
    ``jupyter nbconvert --to html`` and loaded in Chromium: the page's DOM."""
    cells = []
    for number, bundle in enumerate(outputs):
        cell = nbformat.v4.new_code_cell(f"show({number})", execution_count=number + 1)
        cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
        cells.append(cell)
    path = folder / "hostile.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(path)],
                   check=True, capture_output=True, timeout=300, cwd=folder)
    return _dom(folder / "hostile.html")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    frames = [{"text/markdown": markdown, "text/plain": "frame"}
              for body in BODIES.values() for markdown in _frames(body())]
    shown = tmp_path_factory.mktemp("shown")
    control = tmp_path_factory.mktemp("control")
    return {"shown": _exported(frames, shown),
            "control": _exported([{"text/markdown": EVERYTHING}], control)}


def _outputs(dom: str) -> str:
    """The page's cells (what they displayed), not its template's head."""
    return dom[dom.index("<main>") + len("<main>"):dom.rindex("</main>")]


def _live_links(dom: str) -> list[tuple[str, Any]]:
    parser = Elements()
    parser.feed(dom)
    return [(tag, value) for tag, attrs in parser.found for name, value in attrs
            if name in ("href", "src") and (value or "").strip().lower().startswith(
                ("javascript:", "data:", "vbscript:"))]


def test_control_the_payload_trusted_as_markdown_makes_links_and_math(
    pages: dict[str, str]
) -> None:
    dom = pages["control"]
    assert _live_links(_outputs(dom))  # a javascript: link exists: the check can fail
    assert math_read(_outputs(dom))  # and math is there for MathJax to read


def test_hostile_replies_exported_by_nbconvert_make_no_link_script_or_markup(
    pages: dict[str, str]
) -> None:
    dom = pages["shown"]
    outputs = _outputs(dom)
    assert END in outputs  # the replies were shown
    assert outputs.count("jp-OutputArea-output") > 40  # every frame
    assert not _ran(dom), MARKER  # no script of the reply ran
    assert _live_links(dom) == []
    parser = Elements()
    parser.feed(outputs)
    for tag, attrs in parser.found:  # only Markdown's elements, the display's, nbconvert's
        assert tag in ELEMENTS or tag == "span", tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name, value)
            if name == "href":
                assert (value or "").lower().startswith(("https:", "http:", "mailto:", "#"))
    assert math_read(outputs) == [], math_read(outputs)[:3]  # nothing for MathJax to read
