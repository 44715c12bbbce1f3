"""Look at the displays: execute the notebooks, render them to HTML, screenshot them, and
capture the terminal display in tmux.

    python3 notebooks/render.py [--out DIR] [--no-terminal] [NOTEBOOK ...]

Needs the ``gallery`` extra (``pip install -e '.[gallery]'``: nbclient, ipykernel, nbconvert,
Pillow), headless Chromium for the screenshots (Debian: ``apt-get install -y chromium``; or
set ``CHROMIUM`` to a Chrome binary) and tmux for the terminal captures. Writes to ``DIR``
(default ``build/gallery``):

* ``NAME.ipynb`` and ``NAME.html``: each notebook executed (by nbclient, in a kernel that
  imports this checkout), then rendered by nbconvert;
* ``NAME-NN-SECTION.png``: a screenshot of each section of it (a ``##`` heading and the cells
  under it), 1000 pixels wide;
* ``terminal-CASE.txt`` (the screen, 100x30, as a person sees it when the reply has ended),
  ``terminal-CASE.ansi`` (everything the pane printed, scrollback included, with its colours)
  and ``terminal-CASE.png`` (that, drawn by rich and screenshotted): ``llm-rx demo`` and
  ``llm-rx replay`` of the gallery's captures, in ``tmux new-session -x 100 -y 30``.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CAPTURES = ROOT / "tests" / "captures"

#: Terminal captures: a name, then the ``llm-rx`` arguments (a capture below tests/captures;
#: ``(capture, marker)``: the capture cut before ``marker``, after the first ``after``).
TERMINAL: list[tuple[str, list[str] | tuple[str, bytes, bytes]]] = [
    ("demo", ["demo", "--delay", "0.002"]),
    ("thinking-tool-call", ["replay", "gemini/json-array-function-call.json"]),
    ("anthropic-web-search", ["replay", "anthropic/web-search-citations.sse"]),
    ("responses-web-search", ["replay", "openai/responses-annotations-raw.sse"]),
    ("gemini-grounding", ["replay", "gemini/sse-google-search-grounding.sse"]),
    ("code-execution", ["replay", "anthropic/code-execution-bash.sse"]),
    ("program", ["replay", "anthropic/programmatic-tool-calling.sse"]),
    ("encrypted-reasoning", ["replay", "openai/responses-web-search.sse"]),
    ("cut-in-code-block", ("mistral/magistral-thinking-chunks.sse", b'"```"', b'" traffic"')),
    ("error-midstream", ["replay", "openrouter/error-chunk-finish-length.sse"]),
]
WIDTH, HEIGHT = 100, 30
SHOT_WIDTH = 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, metavar="NOTEBOOK",
                        help="notebooks to render (default: every notebook in notebooks/)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "gallery",
                        help="where to write (default: build/gallery)")
    parser.add_argument("--no-terminal", action="store_true", help="skip the tmux captures")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("headless Chromium is needed for the screenshots: apt-get install -y chromium "
              "(Debian, Ubuntu), or set CHROMIUM to a Chrome or Chromium binary",
              file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["PYTHONPATH"] = os.pathsep.join(  # the kernels and the CLI import this checkout
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    for path in args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb")):
        for shot in render_notebook(path.resolve(), args.out, chromium):
            print(shot)
    if not args.no_terminal:
        if shutil.which("tmux") is None:
            print("tmux is needed for the terminal captures: apt-get install -y tmux "
                  "(or pass --no-terminal)", file=sys.stderr)
            return 2
        for name, command in TERMINAL:
            for written in capture_terminal(name, command, args.out, chromium):
                print(written)
    return 0


def find_chromium() -> str | None:
    """``CHROMIUM``, else the first Chromium or Chrome on the path."""
    given = os.environ.get("CHROMIUM")
    if given:
        return given
    names = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
    return next((found for name in names if (found := shutil.which(name))), None)


def render_notebook(path: Path, out: Path, chromium: str) -> list[Path]:
    """Execute ``path``, write it and its HTML to ``out``, screenshot each section."""
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    class Client(NotebookClient):
        def create_kernel_manager(self) -> AsyncKernelManager:
            """ipykernel's own python3 kernel on this interpreter (no kernel spec needed)."""
            self.km = AsyncKernelManager(kernel_name="python3",
                                         kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
            return self.km

    nb = nbformat.read(path, as_version=4)
    client = Client(nb, timeout=120, resources={"metadata": {"path": str(path.parent)}})
    asyncio.run(client.async_execute())
    stem = path.stem
    nbformat.write(nb, out / f"{stem}.ipynb")
    exporter = HTMLExporter(template_name="lab")
    html, _ = exporter.from_notebook_node(nb)
    (out / f"{stem}.html").write_text(html, encoding="utf-8")
    shots = []
    for number, (title, cells) in enumerate(sections(nb.cells), 1):
        part = nbformat.v4.new_notebook(cells=cells, metadata=nb.metadata)
        page = out / f"{stem}-{number:02d}-{slug(title)}.html"
        page.write_text(exporter.from_notebook_node(part)[0], encoding="utf-8")
        shots.append(screenshot(chromium, page, page.with_suffix(".png")))
        page.unlink()
    return shots


def sections(cells: list[Any]) -> list[tuple[str, list[Any]]]:
    """The cells in sections: each ``#``/``##`` heading cell and the cells up to the next."""
    out: list[tuple[str, list[Any]]] = []
    for cell in cells:
        heading = re.match(r"#{1,2} (.+)", cell.source) if cell.cell_type == "markdown" else None
        if heading is not None or not out:
            out.append((heading.group(1) if heading else "start", []))
        out[-1][1].append(cell)
    return out


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40]


def screenshot(chromium: str, page: Path, png: Path, width: int = SHOT_WIDTH) -> Path:
    """A headless Chromium screenshot of ``page``, cut below its last non-blank row."""
    from PIL import Image, ImageChops

    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={profile}", "--force-device-scale-factor=1",
             f"--window-size={width},6000", "--virtual-time-budget=3000",
             f"--screenshot={png}", page.as_uri()],
            check=True, capture_output=True, timeout=120)
    with Image.open(png) as image:
        rgb = image.convert("RGB")
    background = Image.new("RGB", rgb.size, rgb.getpixel((rgb.width - 1, rgb.height - 1)))
    box = ImageChops.difference(rgb, background).getbbox()
    if box is not None:
        rgb = rgb.crop((0, 0, rgb.width, min(rgb.height, box[3] + 16)))
    rgb.save(png)
    return png


def capture_terminal(
    name: str, command: list[str] | tuple[str, bytes, bytes], out: Path, chromium: str
) -> list[Path]:
    """Run ``llm-rx COMMAND`` in a detached tmux session of 100x30; save what it showed."""
    with tempfile.TemporaryDirectory() as scratch:
        if isinstance(command, tuple):  # a capture cut short: written to a file first
            capture, after, marker = command
            body = (CAPTURES / capture).read_bytes()
            cut = Path(scratch) / Path(capture).name
            cut.write_bytes(body[: body.index(marker, body.index(after))])
            arguments = ["replay", str(cut)]
        else:
            arguments = [str(CAPTURES / part) if part.endswith((".sse", ".json")) else part
                         for part in command]
        socket = f"llm-rx-gallery-{os.getpid()}"
        tmux = ["tmux", "-L", socket, "-f", os.devnull]
        line = " ".join(map(shell_quote, [sys.executable, "-m", "llm_rx", *arguments]))
        script = (f"cd {shell_quote(str(ROOT))} && {line}; "
                  f"tmux -L {socket} wait-for -S {name}; exec sleep 600")
        subprocess.run([*tmux, "new-session", "-d", "-s", name, "-x", str(WIDTH),
                        "-y", str(HEIGHT), script], check=True, timeout=30)
        try:
            subprocess.run([*tmux, "wait-for", name], check=True, timeout=120)
            screen = pane(tmux, name, "-p")
            history = pane(tmux, name, "-p", "-e", "-S", "-")
        finally:
            subprocess.run([*tmux, "kill-server"], check=False, timeout=30)
    text = out / f"terminal-{name}.txt"
    text.write_text(screen, encoding="utf-8")
    ansi = text.with_suffix(".ansi")
    ansi.write_text(history, encoding="utf-8")
    page = text.with_suffix(".html")
    page.write_text(terminal_html(history), encoding="utf-8")
    shot = screenshot(chromium, page, text.with_suffix(".png"), width=WIDTH * 10 + 60)
    page.unlink()
    return [text, ansi, shot]


def pane(tmux: list[str], name: str, *flags: str) -> str:
    return subprocess.run([*tmux, "capture-pane", "-t", name, *flags], check=True,
                          capture_output=True, text=True, timeout=30).stdout


def terminal_html(ansi: str) -> str:
    """The pane's text with its colours, as rich draws it in HTML (a dark terminal)."""
    from rich.console import Console
    from rich.terminal_theme import MONOKAI
    from rich.text import Text

    console = Console(record=True, width=WIDTH, file=io.StringIO())
    console.print(Text.from_ansi(ansi.rstrip("\n")), soft_wrap=True)
    return console.export_html(theme=MONOKAI, inline_styles=True)


def shell_quote(word: str) -> str:
    return word if re.fullmatch(r"[\w./=:-]+", word) else "'" + word.replace("'", "'\\''") + "'"


if __name__ == "__main__":
    sys.exit(main())
