"""Encoders: the events of a reply as another (or the same) provider's stream bytes.

``make_encoder(to)`` gives a fresh :class:`Encoder` for the target ``to``; the operator
:func:`llm_rx.operators.encode` and the helper :func:`llm_rx.translate` run one. The
mapping tables (stop reasons, usage, what is dropped, where a target waits) are in
:mod:`llm_rx.encoders._tables`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..events import Dropped
from ._base import Encoder
from .ag_ui import AgUIEncoder
from .anthropic import AnthropicEncoder
from .bedrock import BedrockEncoder
from .cohere import CohereEncoder
from .gemini import GeminiArrayEncoder, GeminiEncoder
from .gemini_interactions import GeminiInteractionsEncoder
from .ollama import OllamaEncoder
from .openai_chat import OpenAIChatEncoder
from .openai_responses import OpenAIResponsesEncoder
from .vercel_ui import HEADERS as VERCEL_HEADERS
from .vercel_ui import VercelUIEncoder

__all__ = ["ENCODERS", "HEADERS", "MEDIA_TYPES", "UI_TARGETS", "Encoder", "make_encoder"]

#: target provider id -> its encoder class
ENCODERS: dict[str, Callable[[list[Dropped] | None], Encoder]] = {
    "ag-ui": AgUIEncoder,
    "anthropic": AnthropicEncoder,
    "bedrock-converse": BedrockEncoder,
    "cohere": CohereEncoder,
    "gemini": GeminiEncoder,
    "gemini-interactions": GeminiInteractionsEncoder,
    "gemini-json-array": GeminiArrayEncoder,
    "ollama": OllamaEncoder,
    "openai-chat": OpenAIChatEncoder,
    "openai-responses": OpenAIResponsesEncoder,
    "vercel-ui": VercelUIEncoder,
}

#: the targets that are no provider's wire but what a browser reads: the AI SDK's UI message
#: stream and AG-UI (read back by `llm_rx.wire.VercelUIDecoder` / `AgUIDecoder`; no
#: non-stream body, so no ``to_native``)
UI_TARGETS = frozenset({"ag-ui", "vercel-ui"})

#: the stream's media type for each target (SSE but Ollama's NDJSON and Bedrock's binary)
MEDIA_TYPES: dict[str, str] = {
    "ag-ui": "text/event-stream",
    "anthropic": "text/event-stream",
    "bedrock-converse": "application/vnd.amazon.eventstream",
    "cohere": "text/event-stream",
    "gemini": "text/event-stream",
    "gemini-interactions": "text/event-stream",
    "gemini-json-array": "application/json",
    "ollama": "application/x-ndjson",
    "openai-chat": "text/event-stream",
    "openai-responses": "text/event-stream",
    "vercel-ui": "text/event-stream",
}

#: what every SSE stream asks of caches and proxies: no caching, no buffering
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}

#: the headers a target's stream needs besides its media type (the AI SDK's client checks
#: ``x-vercel-ai-ui-message-stream``); every SSE stream (``text/event-stream``) asks caches
#: and proxies not to keep or buffer it
HEADERS: dict[str, dict[str, str]] = {
    to: {**(_SSE_HEADERS if media == "text/event-stream" else {}),
         **(VERCEL_HEADERS if to == "vercel-ui" else {})}
    for to, media in MEDIA_TYPES.items()
}


def make_encoder(to: str, dropped: list[Dropped] | None = None) -> Encoder:
    """A fresh encoder for the target provider ``to``; what it cannot carry is appended to
    ``dropped`` (its own list when none is given)."""
    factory = ENCODERS.get(to)
    if factory is None:
        raise ValueError(f"no stream encoder for {to!r}; available: {', '.join(sorted(ENCODERS))}")
    return factory(dropped)
