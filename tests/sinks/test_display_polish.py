"""What looking at the gallery showed (the screenshots of the notebook, the terminal in tmux):
each source one whole link that fits the page, a program a server tool ran shown as code
under a one-line title, and the lines about a reply spaced evenly in both displays."""

from __future__ import annotations

import html
import io
import re

import pytest
from markdown_it import MarkdownIt
from rich.console import Console

import llm_rx
from llm_rx.response import OpaqueBlock
from llm_rx.sinks._jupyter import render_frame
from llm_rx.sinks._rich import render_reply
from llm_rx.sinks._sources import href, short_url
from llm_rx.wire import citations, server_tool

from ..captures import capture
from .links import html_targets, same_url, whole

CITING = ("gemini/sse-google-search-grounding.sse", "anthropic/web-search-citations.sse",
          "openai/responses-annotations-raw.sse", "openrouter/web-search-annotations.sse",
          "perplexity/citations.sse")
#: The longest unbroken run of characters the Sources list may show (wider overflows the
#: notebook's column: a redirect URL of 200 characters did).
LONGEST_WORD = 60


def _cited(response: llm_rx.Response) -> list[str]:
    return list(dict.fromkeys(c.url for found in citations(response) for c in found if c.url))


def _sources_html(response: llm_rx.Response) -> str:
    markdown = render_frame(response, final=True).markdown
    rendered: str = MarkdownIt("commonmark", {"html": True}).render(markdown)
    return rendered.partition("<strong>Sources</strong>")[2]


@pytest.mark.parametrize("name", CITING)
def test_each_source_is_one_whole_link_and_nothing_overflows(name: str) -> None:
    response = llm_rx.reassemble(capture(name).data)
    urls = _cited(response)
    sources = _sources_html(response)
    items = re.findall(r"<li>(.*?)</li>", sources, re.S)
    assert len(items) == len(urls)
    for item, url in zip(items, urls, strict=True):
        targets = html_targets(item)
        assert len(targets) == 1, item  # the source is a link, and only one
        assert same_url(targets[0], url), url  # to the whole URL
        line = item.partition("<br")[0]  # (not the snippet: the source's own words)
        shown = html.unescape(re.sub(r"<[^>]+>", " ", line))
        assert "http" not in shown  # no URL typed out as text (to be auto-linked in part)
        longest = max(shown.split(), key=len)
        assert len(longest) <= LONGEST_WORD, longest
    written = re.findall(r"\]\(<([^<>\n]*)>\)", render_frame(response, True).markdown)
    assert written
    assert all(whole(target) for target in written)


def test_a_url_with_spaces_is_linked_whole() -> None:
    # (Gemini grounding's Google search link: a query with spaces, as the wire sent it)
    response = llm_rx.reassemble(capture("gemini/sse-google-search-grounding.sse").data)
    spaced = [url for url in _cited(response) if " " in url]
    assert spaced
    markdown = render_frame(response, final=True).markdown
    for url in spaced:
        assert f"(<{url.replace(' ', '%20')}>)" in markdown


def test_link_targets_are_encoded_only_where_they_must_be() -> None:
    assert href("https://x.org/search?q=a+b c, d") == "https://x.org/search?q=a+b%20c,%20d"
    assert href("https://x.org/a%20b?x=<1>") == "https://x.org/a%20b?x=%3C1%3E"  # kept, once
    assert href("https://x.org/café#top") == "https://x.org/caf%C3%A9#top"
    assert href("https://x.org/a_(b)~c/?k=v&w=;@!'*") == "https://x.org/a_(b)~c/?k=v&w=;@!'*"
    # (a dollar could delimit math for a renderer that reads math before the Markdown)
    assert href("https://x.org/?$filter=a") == "https://x.org/?%24filter=a"


def test_a_source_without_a_title_shows_its_host_and_short_path() -> None:
    assert short_url("https://www.britannica.com/place/Mount-Columbia?utm_source=x") == (
        "britannica.com/place/Mount-Columbia")
    assert short_url("https://example.com/") == "example.com"
    long = short_url("https://vertexaisearch.cloud.google.com/grounding-api-redirect/" + "A" * 99)
    assert len(long) == 48
    assert long.endswith("…")
    response = llm_rx.reassemble(capture("perplexity/citations.sse").data)  # (bare URLs)
    markdown = render_frame(response, final=True).markdown
    url = _cited(response)[0]
    assert f"1. [{short_url(url)}](<{href(url)}>)" in markdown


# -- a server tool's program: a one-line title, the whole input as code in the body


def _program() -> tuple[llm_rx.Response, str]:
    response = llm_rx.reassemble(capture("anthropic/programmatic-tool-calling.sse").data)
    (block,) = [b for b in response.content if isinstance(b, OpaqueBlock)
                and server_tool(b).input and "\n" in (server_tool(b).input or "")]
    program = server_tool(block).input
    assert program is not None
    return response, program


def test_a_program_is_a_one_line_title_and_code_in_the_collapsed_body() -> None:
    response, program = _program()
    markdown = render_frame(response, final=True).markdown
    details = re.search(r"<details[^>]*><summary>(⚙ code_execution: [^<]*)</summary>"
                        r"\n\n(.*?)\n\n</details>", markdown, re.S)
    assert details is not None
    title, body = details.groups()
    assert title == "⚙ code_execution: " + program.strip().splitlines()[0]
    assert "\n" not in title
    assert len(title) <= 100
    code = re.fullmatch(r"(`{3,})\n(.*)\n\1", body, re.S)  # the body: one code block
    assert code is not None, body
    assert code.group(2) == program.strip("\n")  # whole, its indentation as it was
    rendered = MarkdownIt("commonmark", {"html": True}).render(markdown)
    blocks = re.findall(r"<pre><code>(.*?)</code></pre>", rendered, re.S)
    assert program.strip("\n") + "\n" in [html.unescape(block) for block in blocks]


def test_a_program_in_rich_is_a_title_then_indented_code() -> None:
    response, program = _program()
    lines = _rich_lines(response)
    first = program.strip().splitlines()[0]
    at = lines.index(f"▸ code_execution: {first}")
    shown = program.strip("\n").splitlines()
    for offset, line in enumerate(shown[:8], start=1):  # its first lines, indented 4
        assert lines[at + offset] == ("    " + line).rstrip(), offset
    assert lines[at + 9] == f"    … and {len(shown) - 8} more lines"


# -- spacing: the lines about a reply, the Sources, the footer


def test_lines_about_the_reply_are_spaced_alike_and_apart_from_the_answer() -> None:
    # redacted thinking and a tool line without a body (<div>), a search result (<details>)
    for name in ("openai/responses-web-search.sse", "anthropic/web-search-citations.sse"):
        markdown = render_frame(llm_rx.reassemble(capture(name).data), True).markdown
        closed = re.sub(r"(<summary>.*?</summary>)\n\n.*?\n\n</details>", r"\1</details>",
                        markdown, flags=re.S)  # (what shows with every line collapsed)
        parts = closed.split("\n\n")
        lines = [n for n, part in enumerate(parts) if re.match(r"<(div|details)\b", part)]
        assert len(lines) >= 3, name
        for n in lines:
            gap = re.match(r'<(?:div|details) style="margin: 0 0 ([0-9.]+em)">', parts[n])
            assert gap is not None, parts[n]
            expected = "0.35em" if n + 1 in lines else "1em"  # (the answer: a paragraph's gap)
            assert gap.group(1) == expected, (name, parts[n])
        assert "<p>" not in markdown  # (a <p>'s own margin would differ)


def _rich_lines(response: llm_rx.Response, width: int = 100) -> list[str]:
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    console.print(render_reply(response, final=True))
    return [line.rstrip() for line in console.export_text().split("\n")]


@pytest.mark.parametrize("name", ["anthropic/web-search-citations.sse",
                                  "gemini/sse-google-search-grounding.sse"])
def test_rich_sources_and_footer_stand_apart_and_their_lines_are_indented(name: str) -> None:
    response = llm_rx.reassemble(capture(name).data)
    lines = _rich_lines(response)
    heading = lines.index("Sources")
    assert lines[heading - 1] == ""  # a blank line before the list
    footer = next(n for n, line in enumerate(lines) if line.startswith(response.model or "?"))
    assert lines[footer - 1] == ""  # and before the footer
    listed = lines[heading + 1: footer - 1]
    assert listed[0].startswith("[1] ")
    wrapped = [line for line in listed if not re.match(r"\[\d+\] ", line)]
    assert wrapped  # (titles, URLs and snippets wider than the console)
    assert all(line.startswith("    ") and line[4] != " " for line in wrapped), wrapped
