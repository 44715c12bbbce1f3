"""The rich frames of terminal_display(): their structure, on real captures."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

import llm_rx
from llm_rx.sinks._rich import render_reply

from ..captures import capture
from .test_terminal import Writes, _plain, _replay, _terminal


def _rendered(response: llm_rx.Response, final: bool = True, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    console.print(render_reply(response, final))
    return console.export_text()


def test_rich_reads_adjacent_text_blocks_as_one_flow() -> None:
    response = llm_rx.reassemble(capture("anthropic/web-search-citations.sse").data)
    rendered = re.sub(r"\[[0-9]+\]", "", _rendered(response))  # (the markers)
    lines = [line.strip() for line in rendered.split("\n") if line.strip()]
    assert [line for line in lines if not any(c.isalnum() for c in line)] == []
    text = " ".join(lines)
    assert "ahead of Friday's U.S.-Russia summit. The White House lowered" in text


def test_rich_closes_bold_cut_short() -> None:
    out = Writes()
    _replay("anthropic/web-search-citations.sse", _terminal(out), cut=85)  # in **1. Trump…
    final = _plain(out.writes[-1])
    assert "1. Trump-Putin Summit and Ukraine Crisis" in final
    assert "**" not in final



@pytest.mark.parametrize("name", ["anthropic/web-search-citations.sse",
                                  "openai/responses-annotations-raw.sse"])
def test_rich_shows_every_cited_source_with_a_marker(name: str) -> None:
    response = llm_rx.reassemble(capture(name).data)
    urls = {c["url"] for block in response.content if block.type == "text"
            for c in block.citations}
    assert urls
    rendered = _rendered(response, width=200)
    answer, sources, _ = rendered.partition("\nSources\n")
    assert sources
    for url in urls:
        assert url in rendered.partition("\nSources\n")[2]
    assert "[1]" in answer
    assert f"[{len(urls)}]" in answer


@pytest.mark.parametrize(("name", "lines"), [
    ("anthropic/web-search-citations.sse",
     ["▸ web_search: top world news today", "▸ web_search: 10 results",
      "World news - breaking news, video, headlines and opinion | CNN", "… and 7 more"]),
    ("openai/responses-web-search.sse", ["▸ web_search: weather: San Francisco, CA"]),
])
def test_rich_server_tools_show_the_tool_its_input_and_results(
    name: str, lines: list[str]
) -> None:
    rendered = _rendered(llm_rx.reassemble(capture(name).data), width=200)
    shown = [line.strip() for line in rendered.split("\n")]
    for line in lines:
        assert line in shown
    assert "[web_search_call]" not in rendered
