"""A non-stream JSON body (a request with ``stream: false``) read by a streaming source: the
events that fold to the same ``Response`` as ``from_native(body)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..errors import WireFormatError
from ..events import Event
from ..wire.http import is_nonstream_path
from ..wire.providers import ProviderId, ProviderName, provider_id
from ..wire.registry import looks_nonstream
from ..wire.sse import DEFAULT_MAX_FRAME
from ._engine import decode_all, new_decoder

__all__ = ["read_nonstream", "restreamed", "wants_body"]

_JSON = "application/json"


def wants_body(content_type: str | None, path: str | None) -> bool:
    """Whether a reply is read whole: a JSON body that is no stream (a stream is SSE, NDJSON,
    an event stream, or Gemini's JSON array from ``:streamGenerateContent``)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != _JSON:
        return False
    return is_nonstream_path(path) or "streamGenerateContent" not in (path or "")


def read_nonstream(
    body: bytes, provider: ProviderName | None, emit: Callable[[list[Event]], None]
) -> None:
    """The events of a whole JSON body, to ``emit``: those of ``from_native(body)``'s
    ``Response`` (the body re-framed as the provider's own stream, for its own decoder, read
    as the reply so far when the body says it did not finish) when it is a non-stream body;
    else (a stream after all, under a JSON content type) its decoded events. An error body
    with a success status is the ``ProviderError`` ``from_native`` raises; a decoding error is
    raised after the events decoded before it went to ``emit``."""
    from ..wire.finished import so_far
    from ..wire.restream import restream

    told = looks_nonstream(body)
    if told is None:
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict):  # (an error body, or one of no known shape, raises)
            restreamed(body, provider_id(provider) if provider is not None else None)
        decode_all(new_decoder(provider), (body,), emit)
        return
    name = provider_id(provider if provider is not None else told)
    parsed = orjson.loads(body)
    stream = restream(parsed, name)
    decoder = new_decoder(name, max(len(stream), DEFAULT_MAX_FRAME))
    decode_all(so_far(decoder, parsed, name), (stream,), emit)


def restreamed(
    body: bytes | bytearray | dict[str, Any], provider: ProviderId | None = None
) -> tuple[bytes, ProviderId]:
    """A provider's non-stream body (its bytes or the parsed object) re-framed as that
    provider's own stream, with the provider (``provider``, else told from the body's
    fields): what ``from_native`` decodes. Raises what ``from_native`` documents: the
    ``ProviderError`` of an error body, a ``WireFormatError`` for a body that is no
    provider's reply."""
    from ..wire.base import shape_error
    from ..wire.http import body_error
    from ..wire.nonstream import error_body
    from ..wire.restream import RESTREAMERS, nonstream_provider, restream

    if isinstance(body, (bytes, bytearray, memoryview)):
        raw = bytes(body)
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise WireFormatError("a non-stream body is not valid JSON", raw[:200]) from None
    elif isinstance(body, dict):
        parsed, raw = body, None
    else:
        raise TypeError(
            f"from_native() takes the body as bytes or a parsed dict, not {type(body).__name__}"
        )
    if not isinstance(parsed, dict):
        raise WireFormatError("a non-stream body is not a JSON object", raw)
    if error_body(parsed):
        raise body_error(parsed, raw)
    name = provider if provider is not None else nonstream_provider(parsed)
    if name is None:
        raise WireFormatError(
            "could not tell which provider's non-stream body this is",
            raw if raw is not None else orjson.dumps(parsed)[:200],
        )
    if name not in RESTREAMERS:
        raise ValueError(
            f"no non-stream reader for {name!r}; available: {', '.join(sorted(RESTREAMERS))}"
        )
    try:
        stream = restream(parsed, name)
    except Exception as error:
        raise shape_error(error, raw if raw is not None else orjson.dumps(parsed)) from error
    return stream, provider_id(name)
