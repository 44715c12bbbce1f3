"""The gallery notebook's frames, from a real kernel (nbclient), and the same replies drawn by
rich on an injected console: their structure, as a person reading them would check it.

No lone punctuation paragraphs, code fences balanced before the notice and the footer,
every cited URL under Sources, server tools named with their input, a cut or failed reply
marked as such, nothing wider than 100 columns on the terminal.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
from typing import Any

import nbformat
import pytest
from rich.console import Console

import llm_rx
from llm_rx.sinks._rich import render_reply
from llm_rx.wire import citations

from ..captures import capture
from .links import markdown_targets, same_url, whole
from .test_notebooks import NOTEBOOKS, ROOT, FrameCountingClient, Run

GALLERY = "04-gallery.ipynb"

#: The capture each gallery cell replays, and what it must show: lines of its final frame.
CASES: dict[str, list[str]] = {
    "gemini/json-array-function-call.json": [
        "<summary>Thinking (236 characters)</summary>",
        "**Tool call** `pelican_name_generator`\n```json\n{}\n```"],
    "anthropic/web-search-citations.sse": [
        "⚙ web_search: top world news today", "⚙ web_search: 10 results"],
    "openai/responses-annotations-raw.sse": [
        "⚙ web_search: tallest mountain in Alberta highest peak Alberta Mount Columbia"],
    "gemini/sse-google-search-grounding.sse": ["stop: end_turn"],
    "anthropic/code-execution-bash.sse": [
        "⚙ bash_code_execution: echo \"65465-6544 * 65464-6+1.02255\" | bc -l",
        "⚙ bash_code_execution: exit code 0"],
    "anthropic/programmatic-tool-calling.sse": [
        "<summary>⚙ code_execution: import asyncio</summary>\n\n```\nimport asyncio\n\n"
        "async def main():\n    player1_wins = 0\n"],
    "openai/responses-web-search.sse": [
        ">Thinking (redacted: 2,616 bytes of encrypted data)</div>",
        ">⚙ web_search: weather: San Francisco, CA</div>"],
    "mistral/magistral-thinking-chunks.sse": [
        "> **⚠ Interrupted: the stream ended inside a frame**", "stop: interrupted"],
    "openrouter/error-chunk-finish-length.sse": [
        "> **⚠ Error (provider): Token limit reached**", "stop: error"],
}
CITING = ("anthropic/web-search-citations.sse", "openai/responses-annotations-raw.sse",
          "gemini/sse-google-search-grounding.sse")


@pytest.fixture(scope="module")
def gallery() -> Run:
    nb = nbformat.read(NOTEBOOKS / GALLERY, as_version=4)
    client = FrameCountingClient(nb, timeout=60, resources={"metadata": {"path": str(NOTEBOOKS)}})
    with pytest.MonkeyPatch.context() as patch:  # the kernel imports this checkout
        patch.setenv("PYTHONPATH", os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
        asyncio.run(client.async_execute())
    return Run(client.nb, client)


def _final(run: Run, name: str) -> tuple[str, list[tuple[str, int, dict[str, Any]]]]:
    (frames,) = run.displays_of(run.cell_index(f'capture("{name}")'))
    markdown: str = frames[-1][2]["text/markdown"]
    return markdown, frames


def _paragraphs(markdown: str) -> list[str]:
    shown = re.sub(r"<sup>[^<]*</sup>", "", markdown)  # (the citation markers)
    return [part.strip() for part in shown.split("\n\n") if part.strip()]


def _lone(text: str) -> bool:
    """Punctuation alone: what a sentence's "." becomes when split off its text."""
    return set(text) <= set(".,;:!?'\"()-\u2013\u2014\u2026 \n")  # (and dashes, ellipsis)


def _fences_balanced(markdown: str) -> bool:
    """Every code fence opened in ``markdown`` is closed (by a fence as long, or longer)."""
    opened: str | None = None
    for line in markdown.split("\n"):
        match = re.match(r" {0,3}(`{3,}|~{3,})(.*)$", line)
        if match is None:
            continue
        if opened is None:
            opened = match.group(1)
        elif match.group(1)[0] == opened[0] and len(match.group(1)) >= len(opened) \
                and not match.group(2).strip():
            opened = None
    return opened is None


def _cited_urls(name: str) -> set[str]:
    return {citation.url for cited in citations(llm_rx.reassemble(capture(name).data))
            for citation in cited if citation.url is not None}


def test_gallery_replays_each_case_live(gallery: Run) -> None:
    for name in CASES:
        _, frames = _final(gallery, name)
        kinds = [kind for kind, _, _ in frames]
        assert kinds[0] == "display_data", name
        assert "update_display_data" in kinds, name  # updated as the reply arrived


@pytest.mark.parametrize("name", list(CASES))
def test_gallery_frame_structure(gallery: Run, name: str) -> None:
    final, _ = _final(gallery, name)
    for line in CASES[name]:
        assert line in final, name
    lone = [part for part in _paragraphs(final) if _lone(part)]
    assert lone == [], name
    body = re.split(r"\n\n(?:> \*\*⚠|<sub>)", final)[0]  # before the notice and footer
    assert _fences_balanced(body), name
    assert _fences_balanced(final), name
    assert "</summary>\n\n\n\n</details>" not in final  # no <details> opening on nothing
    answer, _, sources = final.partition("**Sources**")
    targets = markdown_targets(sources)
    for url in _cited_urls(name):  # each source a link, its target the whole URL
        assert any(same_url(target, url) for target in targets), url
    assert all(whole(target) for target in targets), name
    if name in CITING:
        assert _cited_urls(name)
        assert "<sup>[1]</sup>" in answer


def test_gallery_cut_case_is_cut_inside_a_code_block(gallery: Run) -> None:
    final, _ = _final(gallery, "mistral/magistral-thinking-chunks.sse")
    cell = gallery.cell_index('capture("mistral/magistral-thinking-chunks.sse")')
    assert gallery.stdout(cell) == "interrupted False 'incomplete'\n"
    body = final.split("\n\n> **⚠")[0]
    assert body.endswith("1. Look both ways to check for oncoming\n```")  # closed for display
    error = gallery.stdout(gallery.cell_index('capture("openrouter/error-chunk-finish-length'))
    assert error == "error 'provider' Token limit reached\n"


# -- the same replies drawn by rich (terminal_display's frames) on an injected console


def _cut_in_fence() -> llm_rx.Response:
    data = capture("mistral/magistral-thinking-chunks.sse").data
    cut = data[: data.index(b'" traffic"', data.index(b'"```"'))]  # as the gallery cuts it
    return llm_rx.reassemble(cut)


def _rich_text(response: llm_rx.Response, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    console.print(render_reply(response, final=True))
    return console.export_text()


@pytest.mark.parametrize("name", list(CASES))
def test_gallery_rich_structure(name: str) -> None:
    response = (_cut_in_fence() if name.startswith("mistral/")
                else llm_rx.reassemble(capture(name).data))
    rendered = _rich_text(response)
    lines = [line.rstrip() for line in rendered.split("\n")]
    urls = _cited_urls(name)
    assert all(len(line) <= 100 for line in lines), name
    shown = [re.sub(r"\[[0-9]+\]", "", line).strip() for line in lines]
    assert [line for line in shown if line and _lone(line)] == [], name
    assert "```" not in rendered, name
    assert "**" not in rendered, name
    sources = rendered.partition("\nSources\n")[2]
    for url in urls:  # (folded at the console's width, if wider, and indented)
        assert re.sub(r"\s", "", url) in re.sub(r"\s", "", sources), url
    for line in CASES[name]:
        if line.startswith("⚙ "):  # a server tool: named, with its input
            assert "▸ " + line[2:].replace("&quot;", '"') in rendered, name
    if urls:  # each one link to its whole URL, where the terminal has links
        console = Console(file=io.StringIO(), width=100, force_terminal=True)
        console.print(render_reply(response, final=True))
        for url in urls:
            assert "\x1b]8;id=" in console.file.getvalue()  # type: ignore[attr-defined]
            assert f";{url}\x1b\\" in console.file.getvalue(), url  # type: ignore[attr-defined]
    if name.startswith("mistral/"):
        assert "⚠ Interrupted: the stream ended inside a frame" in rendered
        assert "1. Look both ways to check for oncoming" in rendered
    if name.startswith("openrouter/"):
        assert "⚠ Error (provider): Token limit reached" in rendered
