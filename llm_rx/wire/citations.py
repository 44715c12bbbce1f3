"""Citations in one shape, whoever sent them: a derived view of a canonical `Response`.

Where each provider puts its citations, and how it spells them, is wire knowledge, so it is
read here (and nowhere after the wire layer): `citations(response)` gives, for each block
of `response.content`, the `Citation`s of that block. It reads:

- `TextBlock.citations` (kept verbatim, for `to_native` and the encoders): Anthropic
  `web_search_result_location` / document locations, OpenAI Responses `url_citation` and
  `file_citation` annotations, OpenAI chat `url_citation` annotations (OpenRouter),
  Bedrock and Cohere citations.
- The choice's `groundingMetadata` (Gemini, kept verbatim in `choice_extra`): each
  grounding support's chunks, placed where its segment ends (the segment's offsets count
  UTF-8 bytes of the answer's text).
- The message's `citations` / `search_results` (Perplexity, kept in `extra`): the URLs
  the text's own `[n]` markers number.

This is a view, not an event: nothing is added to the stream or to the canonical JSON, so the
round trips stay what they were, and the view can be taken of any snapshot mid-stream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..response import Block, Response, TextBlock

__all__ = ["Citation", "citations"]


@dataclass(frozen=True, slots=True)
class Citation:
    """One citation of a text block, in a provider-neutral shape.

    Args:
        url: The source's URL (`None` for a document with a title and no URL).
        title: The source's title, if the wire gives one.
        snippet: The source's text the citation quotes, where the wire has one.
        end: The character offset in the block's text where the cited span ends (its marker
            goes there); `None` when the wire places it nowhere, and then the marker goes
            where the block ends.
        in_text: The text itself already carries the marker (`[n]`, `n` the source's place
            in the reply's list of citations), so no marker is to be added.
        raw: What the wire sent for it, verbatim.
    """

    url: str | None
    title: str | None = None
    snippet: str | None = None
    end: int | None = None
    in_text: bool = False
    raw: Any = None


def citations(response: Response) -> list[tuple[Citation, ...]]:
    """The citations of each block of `response.content`, whoever sent them.

    A view, not an event: it can be taken of any snapshot's response mid-stream.

    Args:
        response: A reply (or a snapshot's `response`).

    Returns:
        One tuple per block of `response.content`, in order (`()` for a block without).
    """
    content = response.content
    out: list[list[Citation]] = [
        [c for c in (_of(raw, block) for raw in block.citations) if c is not None]
        if isinstance(block, TextBlock) else []
        for block in content
    ]
    grounding = response.choice_extra.get("groundingMetadata")
    if isinstance(grounding, Mapping):
        _grounded(grounding, content, out)
    _listed(response.extra, content, out)
    return [tuple(found) for found in out]


# -- citations kept on a block ---------------------------------------------------------------


def _of(raw: Any, block: TextBlock) -> Citation | None:
    if not isinstance(raw, Mapping):
        return None
    kind = raw.get("type")
    nested = raw.get("url_citation")
    if isinstance(nested, Mapping):  # chat completions (OpenRouter): the fields one deeper
        return Citation(_text(nested.get("url")), _text(nested.get("title")),
                        _text(nested.get("content")), _span_end(nested, block), raw=raw)
    if kind == "url_citation":  # Responses: flat
        return Citation(_text(raw.get("url")), _text(raw.get("title")), None,
                        _span_end(raw, block), raw=raw)
    if kind == "file_citation":  # Responses file search: a file and a place in the text
        index = raw.get("index")
        end = index if isinstance(index, int) and 0 <= index <= len(block.text) else None
        return Citation(None, _text(raw.get("filename")) or _text(raw.get("file_id")), None,
                        end, raw=raw)
    if "cited_text" in raw:  # Anthropic: the whole block is the cited span
        title = _text(raw.get("title")) or _text(raw.get("document_title"))
        return Citation(_text(raw.get("url")) or _text(raw.get("source")), title,
                        _text(raw.get("cited_text")), None, raw=raw)
    if "sources" in raw and "end" in raw:  # Cohere: a span and the documents behind it
        return _cohere(raw, block)
    if "sourceContent" in raw or "location" in raw:  # Bedrock
        return _bedrock(raw)
    return None


def _span_end(fields: Mapping[str, Any], block: TextBlock) -> int | None:
    """An annotation's ``end_index``; ``None`` for a span that is empty (OpenRouter sends
    ``0``/``0`` for "nowhere") or outside the text."""
    start, end = fields.get("start_index"), fields.get("end_index")
    if not isinstance(end, int) or not 0 < end <= len(block.text):
        return None
    return end if not isinstance(start, int) or start < end else None


def _cohere(raw: Mapping[str, Any], block: TextBlock) -> Citation | None:
    documents = [source.get("document") for source in raw.get("sources") or ()
                 if isinstance(source, Mapping)]
    document = next((d for d in documents if isinstance(d, Mapping)), {})
    end = raw.get("end")
    return Citation(
        _text(document.get("url")),
        _text(document.get("title")) or _text(document.get("id")),
        _text(document.get("snippet")) or _text(document.get("text")),
        end if isinstance(end, int) and 0 <= end <= len(block.text) else None,
        raw=raw,
    )


def _bedrock(raw: Mapping[str, Any]) -> Citation | None:
    location = raw.get("location")
    web = location.get("web") if isinstance(location, Mapping) else None
    url = _text(web.get("url")) if isinstance(web, Mapping) else None
    contents = raw.get("sourceContent")
    snippet = next((_text(item.get("text")) for item in contents or ()
                    if isinstance(item, Mapping) and _text(item.get("text"))), None)
    title = _text(raw.get("title")) or _text(raw.get("source"))
    if url is None and title is None:
        return None
    return Citation(url, title, snippet, None, raw=raw)


# -- citations kept on the choice or the message ---------------------------------------------


def _grounded(
    grounding: Mapping[str, Any], content: Sequence[Block], out: list[list[Citation]]
) -> None:
    """Gemini: each support's chunks, at the end of its segment (byte offsets in the text of
    the answer's text blocks, read as one; checked against the segment's own text)."""
    texts = [i for i, block in enumerate(content) if isinstance(block, TextBlock)]
    if not texts:
        return
    chunks = grounding.get("groundingChunks")
    chunks = chunks if isinstance(chunks, list) else []
    blocks = [block.text for block in content if isinstance(block, TextBlock)]
    joined = "".join(blocks)
    encoded = joined.encode()
    cited: set[int] = set()
    for support in grounding.get("groundingSupports") or ():
        if not isinstance(support, Mapping):
            continue
        segment = support.get("segment")
        at = _segment_end(segment, joined, encoded) if isinstance(segment, Mapping) else None
        where, end = _locate(at, blocks, texts)
        for number in support.get("groundingChunkIndices") or ():
            if isinstance(number, int) and 0 <= number < len(chunks):
                citation = _chunk(chunks[number], end)
                if citation is not None:
                    out[where].append(citation)
                    cited.add(number)
    for number, chunk in enumerate(chunks):  # (a chunk no support cites: under the answer)
        if number not in cited:
            citation = _chunk(chunk, None)
            if citation is not None:
                out[texts[-1]].append(citation)


def _segment_end(segment: Mapping[str, Any], joined: str, encoded: bytes) -> int | None:
    """Where a segment ends, in characters of ``joined``; ``None`` if it cannot be found."""
    said = _text(segment.get("text"))
    start, end = segment.get("startIndex", 0), segment.get("endIndex")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(encoded):
        piece = encoded[start:end]
        if said is None or piece == said.encode():
            return len(encoded[:end].decode(errors="ignore"))
    if said:
        found = joined.find(said)
        if found >= 0:
            return found + len(said)
    return None


def _locate(at: int | None, blocks: list[str], texts: list[int]) -> tuple[int, int | None]:
    """The content index of the block where character ``at`` of the joined text falls, and
    the offset in that block (``None``, and the last block, when nowhere)."""
    if at is None:
        return texts[-1], None
    offset = 0
    for index, text in zip(texts, blocks, strict=True):
        if at <= offset + len(text) and (text or at == offset):
            return index, at - offset
        offset += len(text)
    return texts[-1], None


def _chunk(chunk: Any, end: int | None) -> Citation | None:
    if not isinstance(chunk, Mapping):
        return None
    for key in ("web", "retrievedContext", "maps"):
        source = chunk.get(key)
        if isinstance(source, Mapping):
            title = _text(source.get("title")) or _text(source.get("fileSearchStore"))
            return Citation(_text(source.get("uri")), title, _text(source.get("text")), end,
                            raw=chunk)
    return None


def _listed(
    extra: Mapping[str, Any], content: Sequence[Block], out: list[list[Citation]]
) -> None:
    """Perplexity: the message's URLs, which the text's ``[n]`` markers number, with the
    title and snippet of their search result where one was sent."""
    urls = extra.get("citations")
    results = extra.get("search_results")
    results = [r for r in results if isinstance(r, Mapping)] if isinstance(results, list) else []
    if not (isinstance(urls, list) and all(isinstance(url, str) for url in urls)):
        urls = [r["url"] for r in results if isinstance(r.get("url"), str)]
    texts = [i for i, block in enumerate(content) if isinstance(block, TextBlock)]
    if not urls or not texts:
        return
    by_url = {r["url"]: r for r in results if isinstance(r.get("url"), str)}
    for url in urls:
        result = by_url.get(url, {})
        out[texts[-1]].append(Citation(url, _text(result.get("title")),
                                       _text(result.get("snippet")), None, in_text=True,
                                       raw=result or url))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
