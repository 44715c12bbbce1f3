"""What every native encoder does the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..response import Response, ToolCallBlock, Usage

__all__ = ["arguments_object", "choice_bodies", "url_citation", "usage_body"]


def usage_body(
    usage: Usage,
    same_provider: bool,
    encode: Callable[[Usage], dict[str, Any] | None],
    *,
    required: bool = False,
) -> dict[str, Any] | None:
    """The body's usage object: the provider's own, verbatim, for its own reply; else
    ``encode``'s spelling of the canonical counts, or ``None`` when nobody reported any
    (unless the body ``required`` one)."""
    if same_provider and isinstance(usage.native, dict):  # (unvalidated: check its shape)
        return dict(usage.native)
    if not usage.reported and not required:
        return None
    return encode(usage)


def arguments_object(call: ToolCallBlock) -> Any:
    """A call's arguments as the object a body carries; arguments that never parsed (or are
    not an object) come back as ``{"_raw_arguments": "..."}``, the evidence kept."""
    arguments = call.arguments
    return arguments if isinstance(arguments, dict) else {"_raw_arguments": call.raw_arguments}


def url_citation(citation: Any) -> dict[str, Any] | None:
    """A citation of any provider as an OpenAI chat ``url_citation`` annotation (the shape
    ``ChatCompletion`` accepts): an Anthropic ``web_search_result_location``, a Responses
    (flat) ``url_citation``, a Gemini-style ``uri``; ``None`` for one that names no URL (a
    file citation, a character range of a document)."""
    if not isinstance(citation, dict):
        return None
    if citation.get("type") == "url_citation" and isinstance(citation.get("url_citation"), dict):
        return citation
    url = citation.get("url") or citation.get("uri")
    if not isinstance(url, str):
        return None
    inner = {"url": url, "title": str(citation.get("title") or ""),
             "start_index": int(citation.get("start_index") or 0),
             "end_index": int(citation.get("end_index") or 0)}
    return {"type": "url_citation", "url_citation": inner}


def choice_bodies(response: Response, one: Callable[..., dict[str, Any]]) -> list[dict[str, Any]]:
    """The body's ``choices``: ``one(index, content, stop_reason, native_stop_reason,
    logprobs, extra)`` for each choice of an ``n>1`` reply, else for the reply itself."""
    if response.choices:
        return [one(c.index, c.content, c.stop_reason, c.native_stop_reason, c.logprobs, c.extra)
                for c in response.choices]
    return [one(0, response.content, response.stop_reason, response.native_stop_reason,
                response.logprobs, response.choice_extra)]
