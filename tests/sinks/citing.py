"""Replies with many citations, for counting what a frame costs (``test_citation_cost``);
``child()`` is what runs under callgrind (this module imports no test framework, so that
the instrumented interpreter starts as fast as it can)."""

from __future__ import annotations

import functools
import gc
from typing import Any

from llm_rx.response import Response, TextBlock
from llm_rx.sinks._jupyter import render_frame


def one_url(snippets: int, blocks: bool) -> Response:
    """A reply citing one URL ``snippets`` times, each with a snippet of its own (Anthropic's
    shape): all on one text block, or one citation on each of ``snippets`` blocks."""
    def cited(n: int) -> dict[str, Any]:
        return {"type": "web_search_result_location", "cited_text": f"snippet number {n}",
                "url": "https://example.com/one", "title": "One page", "encrypted_index": "x"}

    if blocks:
        content = [TextBlock(text=f"Sentence {n} says **so**. ", citations=[cited(n)])
                   for n in range(snippets)]
    else:
        content = [TextBlock(text="The answer. " * 20,
                             citations=[cited(n) for n in range(snippets)])]
    return Response(provider="anthropic", content=content)


def distinct_sources(sources: int, at_one_place: bool) -> Response:
    """A reply of one text block citing ``sources`` distinct URLs (the Responses API's
    ``url_citation`` annotations): each span ending where its sentence does, between code
    spans (a marker never goes inside code), or all of them at the block's end."""
    sentences = [f"Sentence {n} uses `code {n}` and says so. " for n in range(sources)]
    text = "".join(sentences)
    annotations = []
    end = 0
    for n, sentence in enumerate(sentences):
        start, end = end, end + len(sentence)
        annotations.append({"type": "url_citation", "url": f"https://example.com/{n}",
                            "title": f"Title {n}", "start_index": 0 if at_one_place else start,
                            "end_index": len(text) if at_one_place else end})
    return Response(provider="openai-responses",
                    content=[TextBlock(text=text, citations=annotations)])


#: The replies callgrind measures, each at ``SIZES`` citations: the work a search of a list
#: would do inside one line, which Python's trace hook does not see.
CASES = {
    "one URL, its snippets on one block": lambda n: one_url(n, blocks=False),
    "one URL, a snippet on each block": lambda n: one_url(n, blocks=True),
    "distinct sources, all at one place": lambda n: distinct_sources(n, at_one_place=True),
}
SIZES = (500, 5_000)


def child() -> None:
    """Under callgrind: a small frame rendered first (what runs once: compiled patterns, the
    allocator's pools), then each frame inside its own ``functools.reduce`` (callgrind
    counts inside it and dumps a count as it returns)."""
    render_frame(one_url(10, blocks=False), True)
    render_frame(distinct_sources(10, at_one_place=True), True)
    replies = [make(n) for make in CASES.values() for n in SIZES]
    gc.disable()
    for reply in replies:
        gc.collect()
        functools.reduce(lambda _a, _b, reply=reply: render_frame(reply, True), [0, 0])
