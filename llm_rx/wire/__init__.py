"""Wire formats: pure, incremental, sans-I/O decoders (``decode(bytes)`` / ``flush()``)."""

from .anthropic import AnthropicDecoder
from .base import ChangedFields, Decoder, SSEPayloadDecoder
from .bedrock import BedrockDecoder
from .eventstream import EventStreamDecoder
from .fast import fast_paths
from .gemini import GeminiDecoder
from .json_array import JSONArrayDecoder
from .ndjson import NDJSONDecoder
from .ollama import OllamaDecoder
from .openai_chat import OpenAIChatDecoder
from .openai_responses import OpenAIResponsesDecoder
from .registry import PROVIDERS, SniffingDecoder, make_decoder, sniff
from .sse import SSEDecoder, SSEEvent

__all__ = [
    "PROVIDERS",
    "AnthropicDecoder",
    "BedrockDecoder",
    "ChangedFields",
    "Decoder",
    "EventStreamDecoder",
    "GeminiDecoder",
    "JSONArrayDecoder",
    "NDJSONDecoder",
    "OllamaDecoder",
    "OpenAIChatDecoder",
    "OpenAIResponsesDecoder",
    "SSEDecoder",
    "SSEEvent",
    "SSEPayloadDecoder",
    "SniffingDecoder",
    "fast_paths",
    "make_decoder",
    "sniff",
]
