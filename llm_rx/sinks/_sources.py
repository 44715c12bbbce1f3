"""Sources: the citations of an answer, numbered, for a marker where each cited span ends.

A citation is read from the canonical ``TextBlock.citations`` by what it says (``url``,
``title``, ``cited_text``), whoever sent it: one source per URL, numbered in the order the
answer first cites it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._flow import TextRun

__all__ = ["Source", "cited_pieces", "markers", "snippet_text"]


@dataclass
class Source:
    number: int
    url: str
    title: str | None
    snippets: list[str]


def cited_pieces(
    run: TextRun, sources: list[Source]
) -> list[tuple[str, list[int]]]:
    """The run's text in pieces, each with the numbers of the sources cited where it ends
    (a citation's ``end_index`` in its block, else the block's end); ``sources`` grows."""
    pieces: list[tuple[str, list[int]]] = []
    for block in run.blocks:
        ends: dict[int, list[int]] = {}
        for citation in block.citations:
            source = _source(citation, sources)
            if source is None:
                continue
            end = _end(citation, len(block.text))
            numbers = ends.setdefault(end, [])
            if source.number not in numbers:
                numbers.append(source.number)
        start = 0
        for end in sorted(ends):
            pieces.append((block.text[start:end], ends[end]))
            start = end
        pieces.append((block.text[start:], []))
    return pieces


def _end(citation: Any, length: int) -> int:
    end = citation.get("end_index") if isinstance(citation, dict) else None
    return end if isinstance(end, int) and 0 <= end <= length else length


def _source(citation: Any, sources: list[Source]) -> Source | None:
    url = _field(citation, "url")
    if not url:
        return None
    known = next((source for source in sources if source.url == url), None)
    if known is None:
        known = Source(len(sources) + 1, url, _field(citation, "title"), [])
        sources.append(known)
    snippet = (_field(citation, "cited_text") or "").strip()
    if snippet and snippet not in known.snippets:
        known.snippets.append(snippet)
    return known


def _field(citation: Any, name: str) -> str | None:
    value = citation.get(name) if isinstance(citation, dict) else getattr(citation, name, None)
    return value if isinstance(value, str) else None


def markers(numbers: Sequence[int]) -> str:
    """``"[1][3]"``: where a cited span ends."""
    return "".join(f"[{number}]" for number in numbers)


def snippet_text(source: Source, limit: int = 160) -> str | None:
    """The first cited snippet, shortened to ``limit`` characters."""
    if not source.snippets:
        return None
    snippet = " ".join(source.snippets[0].split())
    return snippet if len(snippet) <= limit else snippet[: limit - 1].rstrip() + "…"
