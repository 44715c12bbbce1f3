"""Which provider's format each real endpoint speaks, and what a request to it asks for.

The emulator (``llm-rx serve``) answers on the providers' own paths; this table is the only
place that knows them::

    POST /v1/chat/completions                            openai-chat       body "stream"
    POST /v1/responses                                   openai-responses  body "stream"
    POST /v1/messages                                    anthropic         body "stream"
    POST /v1/completions                                 openai-completions body "stream"
    POST /v2/chat                                        cohere            body "stream"
    POST /v1/interactions (and /v1beta, /v1alpha)        gemini-interactions body "stream"
    POST /v1beta/models/{model}:streamGenerateContent    gemini            stream: SSE with
    POST /v1beta/models/{model}:generateContent          gemini            alt=sse, else an array
    POST /api/chat, /api/generate                        ollama            body "stream" (on)
    POST /model/{modelId}/converse-stream                bedrock-converse  stream
    POST /model/{modelId}/converse                       bedrock-converse  non-stream

A recorded stream has a *form*: the way it is framed and, where a provider has two shapes of
reply, which one (``sse``, ``json-array``, ``chat``, ``generate``, ``eventstream``). A form
the endpoint does not speak is served re-framed where the two forms are one provider's
(Gemini SSE and JSON array), and refused otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..wire.json_array import JSONArrayDecoder
from ..wire.providers import ProviderId
from ..wire.sse import SSEDecoder

__all__ = [
    "Endpoint",
    "capture_form",
    "content_type",
    "find_endpoint",
    "reframe",
    "requested_model",
    "same_body",
    "wants_stream",
]


@dataclass(frozen=True)
class Endpoint:
    """What one request's path says: the provider's format, and the rest of the request."""

    provider: ProviderId
    form: str  # the form of stream this endpoint serves
    stream: bool | None = None  # fixed by the path; ``None``: the body's ``stream`` decides
    stream_default: bool = False  # when the body has no ``stream``
    model: str | None = None  # the model named in the path (Gemini, Bedrock)


_BODY_STREAMED = {
    "/v1/chat/completions": Endpoint("openai-chat", "sse"),
    "/v1/responses": Endpoint("openai-responses", "sse"),
    "/v1/messages": Endpoint("anthropic", "sse"),
    "/v1/completions": Endpoint("openai-completions", "sse"),
    "/v2/chat": Endpoint("cohere", "sse"),
    "/v1beta/interactions": Endpoint("gemini-interactions", "sse"),
    "/v1alpha/interactions": Endpoint("gemini-interactions", "sse"),
    "/v1/interactions": Endpoint("gemini-interactions", "sse"),
    "/api/chat": Endpoint("ollama", "chat", stream_default=True),
    "/api/generate": Endpoint("ollama", "generate", stream_default=True),
}
_GEMINI = re.compile(r"^/v1(?:beta|alpha)?/(?:[^:]*/)?models/([^/:]+):(streamGenerateContent|"
                     r"generateContent)$")
_BEDROCK = re.compile(r"^/model/(.+)/(converse-stream|converse)$")


def find_endpoint(path: str, query: Mapping[str, str]) -> Endpoint | None:
    """The endpoint of a request's (URL-decoded) ``path``, or ``None`` for no known one."""
    known = _BODY_STREAMED.get(path.rstrip("/"))
    if known is not None:
        return known
    match = _GEMINI.match(path)
    if match:
        model, action = match.groups()
        if action == "generateContent":
            return Endpoint("gemini", "json", stream=False, model=model)
        form = "sse" if query.get("alt") == "sse" else "json-array"
        return Endpoint("gemini", form, stream=True, model=model)
    match = _BEDROCK.match(path)
    if match:
        model, action = match.groups()
        streamed = action == "converse-stream"
        return Endpoint("bedrock-converse", "eventstream", stream=streamed, model=model)
    return None


def requested_model(endpoint: Endpoint, body: Mapping[str, Any]) -> str | None:
    """The model a request names: the path's (Gemini, Bedrock), else the body's ``model``."""
    if endpoint.model is not None:
        return endpoint.model
    model = body.get("model")
    return model if isinstance(model, str) else None


def wants_stream(endpoint: Endpoint, body: Mapping[str, Any]) -> bool:
    """Whether the request asks for a streamed reply."""
    if endpoint.stream is not None:
        return endpoint.stream
    stream = body.get("stream")
    return stream if isinstance(stream, bool) else endpoint.stream_default


def content_type(endpoint: Endpoint, streamed: bool) -> str:
    """The ``Content-Type`` the provider answers with."""
    if not streamed or endpoint.form == "json-array":
        return "application/json"
    if endpoint.provider == "ollama":
        return "application/x-ndjson"
    if endpoint.provider == "bedrock-converse":
        return "application/vnd.amazon.eventstream"
    return "text/event-stream; charset=utf-8"


def capture_form(provider: str, data: bytes) -> str:
    """The form of a recorded stream of ``provider`` (see the module docstring)."""
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if provider == "gemini":
        return "json-array" if head[:1] == b"[" else "sse"
    if provider == "ollama":
        first = head.split(b"\n", 1)[0]
        return "generate" if b'"response"' in first and b'"message"' not in first else "chat"
    if provider == "bedrock-converse":
        return "eventstream"
    return "sse"


def same_body(endpoint: Endpoint, provider: str, body: bytes) -> bool:
    """Whether a recorded non-stream ``body`` of ``provider`` is what ``endpoint``'s
    non-stream call returns as it is: the same provider's (and, for Ollama, of the same
    path: ``/api/chat`` answers ``message``, ``/api/generate`` a ``response``)."""
    if provider != endpoint.provider:
        return False
    return provider != "ollama" or capture_form(provider, body) == endpoint.form


def reframe(provider: str, data: bytes, form: str, to: str) -> bytes | None:
    """``data`` (a stream of ``form``) in the form ``to``, or ``None`` when it cannot be.

    Gemini's two stream forms carry the same chunks: SSE ``data:`` lines of compact JSON, or
    one JSON array of (pretty-printed) objects. Each chunk's JSON is kept: re-framed to SSE it
    is made compact (a ``data:`` line holds no newline); to an array, it is taken verbatim.
    """
    if form == to:
        return data
    if provider != "gemini":
        return None
    if (form, to) == ("json-array", "sse"):
        decoder = JSONArrayDecoder(max_frame=len(data) + 1)
        elements = decoder.decode(data) + decoder.flush()
        return b"".join(b"data: " + _compact(element) + b"\r\n\r\n" for element in elements)
    if (form, to) == ("sse", "json-array"):
        sse = SSEDecoder(max_frame=len(data) + 1)
        chunks = [event.data for event in sse.decode(data) + sse.flush()
                  if event.data.lstrip()[:1] == b"{"]
        return b"[" + b",\r\n".join(chunks) + b"]"
    return None


def _compact(element: bytes) -> bytes:
    # (the stdlib keeps every number as written, big integers and float digits included)
    value = json.loads(element)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
