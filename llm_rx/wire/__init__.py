"""Wire formats: pure, incremental, sans-I/O decoders (``decode(bytes)`` / ``flush()``)."""

from .anthropic import AnthropicDecoder
from .base import Decoder
from .ndjson import NDJSONDecoder
from .openai_chat import OpenAIChatDecoder
from .registry import PROVIDERS, SniffingDecoder, make_decoder, sniff
from .sse import SSEDecoder, SSEEvent

__all__ = [
    "PROVIDERS",
    "AnthropicDecoder",
    "Decoder",
    "NDJSONDecoder",
    "OpenAIChatDecoder",
    "SSEDecoder",
    "SSEEvent",
    "SniffingDecoder",
    "make_decoder",
    "sniff",
]
