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
from .anthropic import AnthropicEncoder
from .bedrock import BedrockEncoder
from .cohere import CohereEncoder
from .gemini import GeminiArrayEncoder, GeminiEncoder
from .ollama import OllamaEncoder
from .openai_chat import OpenAIChatEncoder
from .openai_responses import OpenAIResponsesEncoder

__all__ = ["ENCODERS", "MEDIA_TYPES", "Encoder", "make_encoder"]

#: target provider id -> its encoder class
ENCODERS: dict[str, Callable[[list[Dropped] | None], Encoder]] = {
    "anthropic": AnthropicEncoder,
    "bedrock-converse": BedrockEncoder,
    "cohere": CohereEncoder,
    "gemini": GeminiEncoder,
    "gemini-json-array": GeminiArrayEncoder,
    "ollama": OllamaEncoder,
    "openai-chat": OpenAIChatEncoder,
    "openai-responses": OpenAIResponsesEncoder,
}

#: the stream's media type for each target (SSE but Ollama's NDJSON and Bedrock's binary)
MEDIA_TYPES: dict[str, str] = {
    "anthropic": "text/event-stream",
    "bedrock-converse": "application/vnd.amazon.eventstream",
    "cohere": "text/event-stream",
    "gemini": "text/event-stream",
    "gemini-json-array": "application/json",
    "ollama": "application/x-ndjson",
    "openai-chat": "text/event-stream",
    "openai-responses": "text/event-stream",
}


def make_encoder(to: str, dropped: list[Dropped] | None = None) -> Encoder:
    """A fresh encoder for the target provider ``to``; what it cannot carry is appended to
    ``dropped`` (its own list when none is given)."""
    factory = ENCODERS.get(to)
    if factory is None:
        raise ValueError(f"no stream encoder for {to!r}; available: {', '.join(sorted(ENCODERS))}")
    return factory(dropped)
