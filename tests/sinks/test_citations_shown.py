"""Sources and server tools in both displays, on every citing capture (item 2 and 3 of the
live-display issue): each citation URL in the rendered notebook HTML and in the rich output,
the markers numbered, the server tools named with their input, and no provider field name
in the sinks."""

from __future__ import annotations

import html
import io
import re
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from rich.console import Console

import llm_rx
from llm_rx.sinks._jupyter import render_frame
from llm_rx.sinks._rich import render_reply

from ..captures import capture
from .links import html_targets, same_url

CAPTURES = Path(__file__).resolve().parents[1] / "captures"


def _reply(name: str) -> llm_rx.Response:
    """A capture's reply (a stream, or a non-stream body: ``from_native``'s response)."""
    return llm_rx.reassemble(CAPTURES / name)

#: The citing captures, with how many numbered markers the display adds to the answer
#: (none for Perplexity: its text carries its own ``[n]``).
CITING = {
    "anthropic/web-search-citations.sse": True,
    "anthropic/web-search-citations.nonstream.json": True,
    "anthropic/web-search-llm.sse": True,
    "openai/responses-annotations-raw.sse": True,
    "openai/responses-annotations-raw.nonstream.json": True,
    "gemini/sse-google-search-grounding.sse": True,
    "gemini/sse-google-search-grounding.nonstream.json": True,
    "openrouter/web-search-annotations.sse": True,
    "openrouter/web-search-annotations.nonstream.json": True,
    "perplexity/citations.sse": False,
}


def _wire_urls(response: llm_rx.Response) -> list[str]:
    """The cited URLs, read straight from where each wire put them (not through the view)."""
    urls: list[str] = []
    for block in response.content:
        for raw in getattr(block, "citations", ()):
            inner: Any = raw.get("url_citation", raw)
            urls.append(inner["url"])
    grounding = response.choice_extra.get("groundingMetadata", {})
    urls += [chunk["web"]["uri"] for chunk in grounding.get("groundingChunks", ())]
    urls += response.extra.get("citations", [])
    return list(dict.fromkeys(urls))


def _html(response: llm_rx.Response) -> str:
    markdown = render_frame(response, final=True).markdown
    return MarkdownIt("commonmark", {"html": True}).render(markdown)


def _rich(response: llm_rx.Response) -> str:
    console = Console(file=io.StringIO(), width=120, record=True, color_system=None)
    console.print(render_reply(response, final=True))
    return console.export_text()


@pytest.mark.parametrize("name", sorted(CITING))
def test_every_cited_url_is_in_the_notebook_html_with_numbered_markers(name: str) -> None:
    response = _reply(name)
    urls = _wire_urls(response)
    assert urls
    answer, heading, sources = _html(response).partition("<strong>Sources</strong>")
    assert heading
    targets = html_targets(sources)  # (as the browser has them)
    for url in urls:
        assert any(same_url(target, url) for target in targets), url
    listed = re.findall(r"<li>", sources)
    assert len(listed) == len(urls)  # one numbered entry per source
    added = [int(n) for n in re.findall(r"<sup>\[(\d+)\]", answer)]
    if CITING[name]:
        marks = {int(n) for group in re.findall(r"<sup>((?:\[\d+\])+)</sup>", answer)
                 for n in re.findall(r"\d+", group)}
        assert marks == set(range(1, len(urls) + 1))  # every source marked, numbered 1…n
        assert added[0] == 1
    else:
        assert added == []
        assert "[2][3]" in answer  # (the text's own markers, numbering the same list)


@pytest.mark.parametrize("name", sorted(CITING))
def test_every_cited_url_is_in_the_rich_output_with_numbered_markers(name: str) -> None:
    response = _reply(name)
    urls = _wire_urls(response)
    rendered = _rich(response)
    answer, heading, sources = rendered.partition("\nSources\n")
    assert heading
    flat = re.sub(r"\n", "", sources)  # (a URL wider than the console is folded)
    for number, url in enumerate(urls, start=1):
        assert url.replace(" ", "") in flat.replace(" ", ""), url
        assert f"[{number}] " in sources
    assert f"[{len(urls) + 1}] " not in sources
    assert ("[1]" in answer) or not CITING[name]


def test_gemini_grounding_marker_goes_where_its_segment_ends() -> None:
    response = _reply("gemini/sse-google-search-grounding.sse")
    markdown = render_frame(response, final=True).markdown
    # the first support (chunk 0) ends after "...68%."; the second (chunk 1) after "clouds."
    assert "humidity at approximately 68%.<sup>[1]</sup>" in markdown
    assert "with passing clouds.<sup>[2]</sup>" in markdown
    assert "evening.<sup>[5][2]</sup>" in markdown  # (a support citing two chunks)


def test_live_frames_show_sources_as_they_arrive() -> None:
    # a Perplexity reply lists its sources from its first chunk: the first frame has them
    data = capture("perplexity/citations.sse").data
    first = data[: data.index(b"\n\n") + 2]
    response = llm_rx.reassemble(first, "openai-chat")
    assert "populationstat.com" in render_frame(response, final=False).markdown


@pytest.mark.parametrize(("name", "shown"), [
    ("anthropic/web-search-citations.sse",
     ["⚙ web_search: top world news today", "⚙ web_search: 10 results"]),
    ("anthropic/code-execution-bash.sse",
     ['⚙ bash_code_execution: echo \"65465-6544 * 65464-6+1.02255\" | bc -l',
      "⚙ bash_code_execution: exit code 0"]),
    ("openai/responses-web-search.sse", ["⚙ web_search: weather: San Francisco, CA"]),
    ("openai/responses-code-interpreter-reasoning.sse",
     ["⚙ code_interpreter: n = pow(123456, 123)"]),
    ("openai/responses-file-search.sse", ["⚙ file_search: What is the capital of France?"]),
    ("gemini/sse-code-execution.sse",
     ["⚙ code_execution: result = 65465 - 6544 * 65464 - 6 + 1.02255",
      "⚙ code_execution: OUTCOME_OK"]),
    ("groq/web-search-executed-tools.sse",
     ["⚙ search: What is the weather in San Francisco today?"]),
    ("bedrock/converse-stream-server-tool-result.eventstream",
     ["⚙ nova_code_interpreter: 1234 * 5678", "⚙ nova_code_interpreter: exit code 0"]),
])
def test_server_tools_are_named_with_their_input_and_result(
    name: str, shown: list[str]
) -> None:
    response = _reply(name)
    # (a tool with details under it is collapsed; one with nothing more is a line)
    summaries = re.findall(r"<(summary|div)[^>]*>(.*?)</\1>",
                           render_frame(response, True).markdown)
    summaries = [summary for _, summary in summaries]
    for line in shown:
        assert line in summaries
    rendered = _rich(response)
    for line in shown:
        assert html.unescape(line).replace("⚙", "▸") in rendered


#: Field names only a provider's wire spells; a sink that reads one knows a provider.
PROVIDER_FIELDS = (
    "cited_text", "url_citation", "end_index", "start_index", "groundingMetadata",
    "groundingChunks", "groundingSupports", "search_results", "return_code", '"stdout"',
    "stdOut", "executableCode", "codeExecutionResult", "executed_tools", "toolUse",
    "toolResult", "web_search", "server_tool_use", '"action"', '"content"',
    '"uri"', '"annotations"',
)


def test_sinks_read_no_provider_field_by_name() -> None:
    root = Path(llm_rx.__file__).parent / "sinks"
    for path in root.glob("*.py"):
        text = path.read_text()
        for field in PROVIDER_FIELDS:
            assert field not in text, f"{path.name} reads {field}"
