"""citations(): every provider's citations in one shape, read from the canonical response."""

from __future__ import annotations

from pathlib import Path

import llm_rx
from llm_rx import Response, TextBlock
from llm_rx.wire.citations import Citation, citations

CAPTURES = Path(__file__).resolve().parents[1] / "captures"


def test_citations_gemini_grounding_supports_end_where_their_segments_end() -> None:
    response = llm_rx.reassemble(CAPTURES / "gemini/sse-google-search-grounding.sse")
    (found,) = citations(response)
    text = response.content[0].text  # type: ignore[union-attr]
    first = found[0]
    assert first.title == "Weather information for San Francisco, CA, US"
    assert first.end is not None
    assert text[: first.end].endswith("approximately 68%.")
    # the segment offsets count UTF-8 bytes ("°" is two): each lands after its sentence
    assert all(text[c.end - 1] == "." for c in found if c.end is not None)
    assert len({c.url for c in found}) == 5


def test_citations_gemini_file_search_names_the_store_and_quotes_the_chunk() -> None:
    response = llm_rx.reassemble(CAPTURES / "gemini/sse-file-search.sse")
    found = [c for group in citations(response) for c in group]
    assert [c.end for c in found] == [30, 107]
    assert found[0].url is None
    assert found[0].title is not None
    assert found[0].snippet == ("Paris is the capital of France. The Eiffel Tower is a famous "
                                "landmark in Paris.")


def test_citations_openrouter_empty_span_is_no_place() -> None:
    response = llm_rx.reassemble(CAPTURES / "openrouter/web-search-annotations.sse")
    (found,) = citations(response)
    assert [c.end for c in found] == [None] * 5
    assert found[0].url == "https://github.com/pydantic/pydantic-ai"
    assert found[0].snippet is not None
    assert found[0].snippet.startswith("# pydantic/pydantic-ai")


def test_citations_perplexity_urls_are_marked_in_the_text() -> None:
    response = llm_rx.reassemble(CAPTURES / "perplexity/citations.sse")
    (found,) = citations(response)
    assert [c.url for c in found] == response.extra["citations"]
    assert all(c.in_text and c.end is None for c in found)


def test_citations_perplexity_search_results_give_titles_and_snippets() -> None:
    # the documented ``search_results`` of a sonar reply, beside (or instead of) ``citations``
    result = {"title": "San Francisco", "url": "https://en.wikipedia.org/wiki/San_Francisco",
              "date": "2025-01-01", "snippet": "San Francisco is a city"}
    reply = Response(provider="openai-chat", content=[TextBlock(text="About 800,000[1].")],
                     extra={"search_results": [result]})
    assert citations(reply) == [(Citation(result["url"], "San Francisco",
                                          "San Francisco is a city", None, True, result),)]


def test_citations_anthropic_document_location_has_a_title_and_no_url() -> None:
    raw = {"type": "char_location", "cited_text": "The grass is green.", "document_index": 0,
           "document_title": "Facts", "start_char_index": 0, "end_char_index": 20}
    reply = Response(provider="anthropic", content=[TextBlock(text="Green.", citations=[raw])])
    assert citations(reply) == [(Citation(None, "Facts", "The grass is green.", None,
                                          raw=raw),)]


def test_citations_responses_url_citation_ends_at_its_end_index() -> None:
    response = llm_rx.reassemble(CAPTURES / "openai/responses-annotations-raw.sse")
    found = [c for group in citations(response) for c in group]
    assert [(c.url, c.end) for c in found] == [
        ("https://www.britannica.com/place/Mount-Columbia?utm_source=openai", 162)]


def test_citations_of_a_block_without_any_are_empty() -> None:
    response = llm_rx.reassemble(CAPTURES / "anthropic/thinking-signature.sse")
    assert all(group == () for group in citations(response))
