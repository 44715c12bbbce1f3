"""What a reply cannot do in a notebook page: hostile replies shown by ``jupyter_display()``
in a real kernel (nbclient), the notebook rendered by nbconvert and loaded in headless
Chromium, whose DOM is read back after the page ran its scripts.

A script of the reply, had it run, would have written the marker into the page's title and
an attribute of its body. A control notebook shows the same payload as a notebook trusts
it (raw, through IPython's ``Markdown``): there the marker must appear, or this check could
not fail.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from .hostile import BODIES, END, EVERYTHING, MARKER
from .test_hostile import Elements

nbconvert = pytest.importorskip("nbconvert", reason="nbconvert (the gallery extra) renders "
                                "the notebook to HTML")
CHROMIUM = os.environ.get("CHROMIUM") or next(
    (found for name in ("chromium", "chromium-browser", "google-chrome")
     if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install -y chromium)")

ROOT = Path(__file__).resolve().parents[2]

SHOW = '''\
import llm_rx
from llm_rx import operators as lxo
from llm_rx import sinks as lxs

async def show(path):
    try:
        await llm_rx.from_file(path).pipe(lxs.jupyter_display(), lxo.to_response())
    except llm_rx.LlmRxError:
        pass  # (the error reply: its display says so)
'''


class Client(NotebookClient):
    def create_kernel_manager(self) -> AsyncKernelManager:
        """ipykernel's own python3 kernel on this interpreter (no kernel spec needed)."""
        self.km = AsyncKernelManager(kernel_name="python3",
                                     kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
        return self.km


def _page(cells: list[str], folder: Path) -> Path:
    """The notebook of ``cells`` executed in a kernel importing this checkout, as HTML."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in cells])
    client = Client(nb, timeout=120, resources={"metadata": {"path": str(folder)}})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
        asyncio.run(client.async_execute())
    html, _ = nbconvert.HTMLExporter(template_name="lab").from_notebook_node(nb)
    page = folder / "page.html"
    page.write_text(html, encoding="utf-8")
    return page


def _dom(page: Path) -> str:
    """The page's DOM after its scripts ran (headless Chromium, offline)."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", "--virtual-time-budget=3000",
             "--dump-dom", page.as_uri()],
            capture_output=True, timeout=120, check=True)
    return done.stdout.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("hostile")
    paths = []
    for name, body in BODIES.items():
        path = folder / name
        path.write_bytes(body())
        paths.append(path)
    (folder / "a").mkdir()
    (folder / "b").mkdir()
    shown = _page([SHOW, *(f"await show({str(path)!r})" for path in paths)], folder / "a")
    control = _page([f"from IPython.display import Markdown\nMarkdown({EVERYTHING!r})"],
                    folder / "b")
    return {"shown": _dom(shown), "control": _dom(control), "html": shown.read_text()}


def _ran(dom: str) -> bool:
    """Whether a script of the payload ran: the marker in the title or the body's attribute."""
    return re.search(f"<title>[^<]*{MARKER}", dom) is not None or f'data-pwned="{MARKER}"' in dom


def test_control_a_trusted_payload_runs_in_this_browser(pages: dict[str, Any]) -> None:
    assert _ran(pages["control"])  # the harness sees a script that ran


def test_hostile_reply_runs_no_script_in_the_rendered_notebook(pages: dict[str, Any]) -> None:
    dom = pages["shown"]
    assert END in dom  # the replies were shown
    assert "Refusal:" in dom
    assert not _ran(dom)  # no script of the reply ran: no title, no attribute
    parser = Elements()
    parser.feed(dom)
    for tag, attrs in parser.found:
        assert tag not in ("img", "svg", "iframe", "object", "embed"), tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name, value)
            if name in ("href", "src"):
                assert not (value or "").strip().lower().startswith(
                    ("javascript:", "data:", "vbscript:")), (tag, name, value)
