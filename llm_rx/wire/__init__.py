"""Wire formats: pure, incremental, sans-I/O decoders (``decode(bytes)`` / ``flush()``)."""

from .ag_ui import AgUIDecoder
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
from .providers import UI_STREAMS, ProviderId, ProviderName, UIStreamId
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
from .vercel_ui import VercelUIDecoder

__all__ = [
    "PROVIDERS",
    "UI_STREAMS",
    "AgUIDecoder",
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
    "UIStreamId",
    "VercelUIDecoder",
    "citations",
    "looks_nonstream",
    "make_decoder",
    "server_tool",
    "sniff",
]

