"""A non-stream JSON body (a request with ``stream: false``) read by a streaming source: the
events that fold to the same ``Response`` as ``from_native(body)``."""

from __future__ import annotations

import orjson

from ..events import Event
from ..wire.http import is_nonstream_path
from ..wire.providers import ProviderName, provider_id
from ..wire.registry import looks_nonstream
from ._engine import decode_all, new_decoder

__all__ = ["nonstream_events", "wants_body"]

_JSON = "application/json"


def wants_body(content_type: str | None, path: str | None) -> bool:
    """Whether a reply is read whole: a JSON body that is no stream (a stream is SSE, NDJSON,
    an event stream, or Gemini's JSON array from ``:streamGenerateContent``)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != _JSON:
        return False
    return is_nonstream_path(path) or "streamGenerateContent" not in (path or "")


def nonstream_events(body: bytes, provider: ProviderName | None) -> list[Event]:
    """The events of a whole JSON body: those of ``from_native(body)``'s ``Response`` (the
    body re-framed as the provider's own stream, for its own decoder) when it is a
    non-stream body; else (a stream after all, under a JSON content type) its decoded events.
    An error body with a success status is the ``ProviderError`` ``from_native`` raises."""
    from ..native.from_native import from_native  # (native reads through the sources)
    from ..wire.restream import restream

    told = looks_nonstream(body)
    if told is None:
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict):  # (an error body, or one of no known shape, raises)
            from_native(body, provider_id(provider) if provider is not None else None)
        return _decoded(body, provider)
    name = provider_id(provider if provider is not None else told)
    return _decoded(restream(orjson.loads(body), name), name)


def _decoded(body: bytes, provider: ProviderName | None) -> list[Event]:
    events: list[Event] = []
    decode_all(new_decoder(provider), (body,), events.extend)
    return events
