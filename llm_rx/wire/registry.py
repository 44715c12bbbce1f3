"""Which decoder reads which provider's stream, and telling the provider from the first bytes.

Provider ids: ``openai-chat``, ``openai-responses``, ``anthropic``, ``gemini``, ``ollama``,
``bedrock-converse``, all decoded here and recognised by :func:`sniff`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import orjson

from ..errors import LlmRxError, WireFormatError
from ..events import Event
from .anthropic import AnthropicDecoder
from .base import Decoder, attach_events
from .bedrock import BedrockDecoder
from .gemini import GeminiDecoder
from .ollama import OllamaDecoder
from .openai_chat import OpenAIChatDecoder
from .openai_responses import OpenAIResponsesDecoder
from .sse import DEFAULT_MAX_FRAME

__all__ = ["DECODERS", "PROVIDERS", "SniffingDecoder", "make_decoder", "sniff"]

DECODERS: dict[str, Callable[[int], Decoder]] = {
    "openai-chat": OpenAIChatDecoder,
    "anthropic": AnthropicDecoder,
    "ollama": OllamaDecoder,
    "bedrock-converse": BedrockDecoder,
    "openai-responses": OpenAIResponsesDecoder,
    "gemini": GeminiDecoder,
}
#: Every provider id the library knows; those not in ``DECODERS`` are recognised only.
PROVIDERS = (
    "anthropic",
    "bedrock-converse",
    "gemini",
    "ollama",
    "openai-chat",
    "openai-responses",
)
_ALIASES = {"openai": "openai-chat", "claude": "anthropic"}

_SSE_TYPE = re.compile(rb'^(?:event: ?([\w.]+)\r?\n)?data: ?\{.*?"type" ?: ?"([\w.]+)"', re.M)
# How much of the head is read before giving up on telling the provider.
SNIFF_LIMIT = 64 * 1024


def make_decoder(provider: str, max_frame: int = DEFAULT_MAX_FRAME) -> Decoder:
    """A fresh decoder for ``provider`` (an id from ``PROVIDERS``)."""
    name = _ALIASES.get(provider, provider)
    factory = DECODERS.get(name)
    if factory is None:
        if name in PROVIDERS:
            raise WireFormatError(f"the {name!r} wire format is not supported by this release")
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}")
    return factory(max_frame)


def sniff(head: bytes) -> str | None:
    """The provider whose stream starts with ``head``, or ``None`` if not decidable yet."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text:
        return None
    if text[:1] == b"\x00":
        return "bedrock-converse"  # binary event-stream prelude (total length, big-endian)
    if text[:1] == b"[":
        return "gemini"
    if text[:1] == b"{":
        if b'"candidates"' in text[:2048] or b'"usageMetadata"' in text[:2048]:
            return "gemini"
        if b"\n" in text or b'"done"' in text:
            return "ollama"
        return None
    if text.startswith(b"data: {"):  # (the usual first line, told without splitting lines)
        end = text.find(b"\n")
        first = text[:end] if end >= 0 else text
        if b'"choices"' in first or b"chat.completion" in first:
            return "openai-chat"
    lines = text.split(b"\n")
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(b"event:"):
            name = stripped[6:].strip()
            if name.startswith(b"message_") or name.startswith(b"content_block"):
                return "anthropic"
            if name.startswith(b"response."):
                return "openai-responses"
        if stripped.startswith(b"data:"):
            payload = stripped[5:].strip()
            if payload == b"[DONE]":
                continue
            if b'"choices"' in payload or b"chat.completion" in payload:
                return "openai-chat"
            if b'"candidates"' in payload or b'"usageMetadata"' in payload:
                return "gemini"
            match = _SSE_TYPE.search(stripped)
            if match:
                kind = match.group(2)
                if kind.startswith(b"response."):
                    return "openai-responses"
                if kind.startswith((b"message_", b"content_block", b"ping")):
                    return "anthropic"
            if number < len(lines) - 1 and _top_level_type(payload).startswith("response."):
                return "openai-responses"  # "type" after nested ones (Bedrock's key order)
            if b'"error"' in payload and (b"\n\n" in text or text.endswith(b"\n")):
                return "openai-chat"
    return None


def _top_level_type(payload: bytes) -> str:
    """The ``type`` of a whole JSON object payload, or ``""``."""
    try:
        value = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return ""
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else ""


class SniffingDecoder(Decoder):
    """Holds the first bytes until :func:`sniff` names the provider, then decodes as it."""

    provider = "unknown"

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__()
        self._max_frame = max_frame
        self._head: list[bytes] = []
        self._size = 0
        self.inner: Decoder | None = None

    def decode(self, chunk: bytes) -> list[Event]:
        if self.inner is not None:
            return self.inner.decode(chunk)
        self._head.append(chunk)
        self._size += len(chunk)
        head = b"".join(self._head) if len(self._head) > 1 else chunk
        provider = sniff(head)
        if provider is None:
            if self._size > SNIFF_LIMIT:
                raise WireFormatError("could not tell which provider's stream this is", head[:200])
            return []
        self.inner = make_decoder(provider, self._max_frame)
        self._head.clear()
        return self.inner.decode(head)

    def flush(self) -> list[Event]:
        if self.inner is None:
            head = b"".join(self._head)
            provider = sniff(head + b"\n\n")
            if provider is None:
                raise WireFormatError(
                    "could not tell which provider's stream this is" if head.strip()
                    else "the stream is empty",
                    head[:200] or None,
                )
            self.inner = make_decoder(provider, self._max_frame)
            events = self.inner.decode(head)
            try:
                return events + self.inner.flush()
            except LlmRxError as error:
                raise attach_events(error, events + getattr(error, "events", [])) from None
        return self.inner.flush()

    @property
    def started(self) -> bool:
        return self.inner is not None and self.inner.started

    @started.setter
    def started(self, value: bool) -> None:
        pass
