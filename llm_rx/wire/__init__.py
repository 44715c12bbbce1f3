"""Wire formats: pure, incremental, sans-I/O decoders (``decode(bytes)`` / ``flush()``).

The switch of the speed shortcuts is `llm_rx.speed.fast_paths` (``llm_rx.wire.fast_paths``,
its name before, still finds it: the plain decoders here neither read nor import it).
"""

from importlib import import_module
from typing import Any

from .anthropic import AnthropicDecoder
from .base import ChangedFields, Decoder, SSEPayloadDecoder
from .bedrock import BedrockDecoder
from .citations import Citation, citations
from .cohere import CohereDecoder
from .eventstream import EventStreamDecoder
from .gemini import GeminiDecoder
from .json_array import JSONArrayDecoder
from .ndjson import NDJSONDecoder
from .ollama import OllamaDecoder
from .openai_chat import OpenAIChatDecoder
from .openai_completions import OpenAICompletionsDecoder
from .openai_responses import OpenAIResponsesDecoder
from .providers import ProviderId, ProviderName
from .registry import (
    PROVIDERS,
    CheckedDecoder,
    SniffingDecoder,
    looks_nonstream,
    make_decoder,
    sniff,
)
from .server_tools import ServerTool, server_tool
from .sse import SSEDecoder, SSEEvent

__all__ = [
    "PROVIDERS",
    "AnthropicDecoder",
    "BedrockDecoder",
    "ChangedFields",
    "CheckedDecoder",
    "Citation",
    "CohereDecoder",
    "Decoder",
    "EventStreamDecoder",
    "GeminiDecoder",
    "JSONArrayDecoder",
    "NDJSONDecoder",
    "OllamaDecoder",
    "OpenAIChatDecoder",
    "OpenAICompletionsDecoder",
    "OpenAIResponsesDecoder",
    "ProviderId",
    "ProviderName",
    "SSEDecoder",
    "SSEEvent",
    "SSEPayloadDecoder",
    "ServerTool",
    "SniffingDecoder",
    "citations",
    "looks_nonstream",
    "make_decoder",
    "server_tool",
    "sniff",
]


def __getattr__(name: str) -> Any:
    if name == "fast_paths":  # (the switch's name before it moved to ``llm_rx.speed``)
        return import_module("llm_rx.speed").fast_paths
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
