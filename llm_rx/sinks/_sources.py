"""Sources: the citations of an answer, numbered, for a marker where each cited span ends.

A citation comes in the wire layer's neutral shape (:class:`~llm_rx.wire.citations.Citation`:
a URL or a title, a snippet, where its span ends), whoever sent it: one source per URL (or
title, for a document without one), numbered in the order the answer first cites it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..wire.citations import Citation
from ._flow import TextRun
from ._html_text import href

__all__ = ["Source", "Sources", "cited_pieces", "href", "markers", "short_url", "snippet_text"]

#: Characters of a URL shown as a link's text at most (host and the start of the path).
SHORT_URL = 48


@dataclass
class Source:
    number: int
    url: str | None
    title: str | None
    snippets: list[str]
    #: the snippets kept, found at once (a source cited thousands of times)
    known: set[str] = field(default_factory=set, repr=False, compare=False)

    @property
    def name(self) -> str:
        """What the list shows first: the title, else the URL."""
        return self.title or self.url or "?"

    @property
    def link_text(self) -> str:
        """A link's text: the title, else the URL's host and the start of its path."""
        return self.title or (short_url(self.url) if self.url else "?")


def cited_pieces(
    run: TextRun, sources: Sources
) -> list[tuple[str, list[int]]]:
    """The run's text in pieces, each with the numbers of the sources cited where it ends
    (a citation's ``end`` in its block, else the block's end; none for a citation whose
    marker the text already carries); ``sources`` grows."""
    pieces: list[tuple[str, list[int]]] = []
    for position, block in enumerate(run.blocks):
        found = run.citations[position] if position < len(run.citations) else ()
        ends: dict[int, dict[int, None]] = {}  # (each place's numbers, in order, once)
        for citation in found:
            source = _source(citation, sources)
            if source is None or citation.in_text:
                continue
            end = citation.end if citation.end is not None else len(block.text)
            ends.setdefault(min(end, len(block.text)), {})[source.number] = None
        start = 0
        for end in sorted(ends):
            pieces.append((block.text[start:end], list(ends[end])))
            start = end
        pieces.append((block.text[start:], []))
    return pieces


class Sources(list[Source]):
    """The sources of a reply in their numbers' order, found by their URL (or title) at once."""

    def __init__(self) -> None:
        super().__init__()
        self.by_key: dict[str, Source] = {}


def _source(citation: Citation, sources: Sources) -> Source | None:
    key = citation.url or citation.title
    if not key:
        return None
    known = sources.by_key.get(key)
    if known is None:
        known = Source(len(sources) + 1, citation.url, citation.title, [])
        sources.append(known)
        sources.by_key[key] = known
    elif known.title is None and citation.title:
        known.title = citation.title
    snippet = (citation.snippet or "").strip()
    if snippet and snippet not in known.known:
        known.known.add(snippet)
        known.snippets.append(snippet)
    return known


def markers(numbers: Sequence[int]) -> str:
    """``"[1][3]"``: where a cited span ends."""
    return "".join(f"[{number}]" for number in numbers)


def snippet_text(source: Source, limit: int = 160) -> str | None:
    """The first cited snippet, shortened to ``limit`` characters."""
    if not source.snippets:
        return None
    snippet = " ".join(source.snippets[0].split())
    return snippet if len(snippet) <= limit else snippet[: limit - 1].rstrip() + "…"


def short_url(url: str, limit: int = SHORT_URL) -> str:
    """``"britannica.com/place/Mount-Columbia"``: the host (no ``www.``) and the path, no
    query, shortened to ``limit`` characters; a URL that does not parse, as it is, shortened."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
    except ValueError:
        host, parts = "", None
    if host and parts is not None:
        host = host.removeprefix("www.")
        text = host + parts.path.rstrip("/")
    else:
        text = url.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip("/") + "…"
