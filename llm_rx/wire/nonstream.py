"""Telling a provider's non-stream body (one JSON object, the reply of a request with
``stream: false``) from a stream, and whose body it is, by the fields only it has."""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = [
    "LEADING",
    "error_body",
    "first_line_nonstream",
    "looks_nonstream",
    "nonstream_provider",
]

LEADING = b"\xef\xbb\xbf \t\r\n"  # (a BOM's bytes and blank space, as one set)

# Keys that name a non-stream body when it cannot be parsed whole (too long, or cut short).
_NONSTREAM_MARKERS = (
    (re.compile(rb'"object"\s*:\s*"chat\.completion"'), "openai-chat"),
    (re.compile(rb'"object"\s*:\s*"text_completion"'), "openai-completions"),
    (re.compile(rb'"object"\s*:\s*"response"'), "openai-responses"),
    (re.compile(rb'"candidates"\s*:'), "gemini"),
    (re.compile(rb'"object"\s*:\s*"interaction"'), "gemini-interactions"),
    (re.compile(rb'"output"\s*:\s*\{\s*"message"'), "bedrock-converse"),
    (re.compile(rb'"type"\s*:\s*"message"'), "anthropic"),
    (re.compile(rb'"finish_reason"\s*:\s*"[A-Z_]+"'), "cohere"),
)  # (not Ollama's: a cut first line of its stream has the same keys)


def nonstream_provider(value: dict[str, Any]) -> str | None:
    """The provider whose non-stream body the JSON object ``value`` is, if any."""
    kind = value.get("object")
    if kind == "chat.completion":
        return "openai-chat"
    if kind == "text_completion":
        return "openai-completions"
    if kind == "response":
        return "openai-responses"
    if kind == "interaction" or ("steps" in value and "status" in value):
        return "gemini-interactions"
    if value.get("type") == "message" and "content" in value:
        return "anthropic"
    if "candidates" in value or "usageMetadata" in value or "promptFeedback" in value:
        return "gemini"
    output = value.get("output")
    if isinstance(output, dict) and "message" in output:
        return "bedrock-converse"
    if "finish_reason" in value and isinstance(value.get("message"), dict):
        return "cohere"
    if "done" in value and ("message" in value or "response" in value):
        return "ollama"
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) and (
        "message" in choices[0]
    ):
        return "openai-chat"  # (a compatible host that leaves ``object`` out)
    return None


def error_body(value: Any, *, strict: bool = False) -> bool:
    """Whether the JSON value ``value`` is a provider's error body rather than a reply:
    Anthropic's ``{"type": "error", ...}``, or an ``error`` that is no reply's field (a failed
    Responses ``response`` carries one and is a reply).

    ``strict`` (for a first line that may be one of an NDJSON stream's) asks for an error
    object (``{"error": {...}}``): a first line ``{"error": "words"}`` is Ollama's in-band
    error line, read by its stream reader.
    """
    if not isinstance(value, dict):
        return False
    error = value.get("error")
    if value.get("type") == "error":
        return isinstance(error, dict) or not strict
    if error is None or nonstream_provider(value) is not None:
        return False
    return isinstance(error, dict) or not strict


def first_line_nonstream(value: Any) -> str | None:
    """The provider whose non-stream body a JSON value alone on the first line is, if any.

    An Ollama object is a stream line unless it is the last (``done: true``) and carries a
    reply: a stream's last line has no content (the deltas came before it), the non-stream
    body has all of it.
    """
    if not isinstance(value, dict):
        return None
    provider = nonstream_provider(value)
    if provider == "ollama":
        message = value.get("message")
        message = message if isinstance(message, dict) else {}
        carried = (message.get("content"), message.get("thinking"), message.get("tool_calls"),
                   value.get("response"))
        if value.get("done") is not True or not any(carried):
            return None
    return provider


def looks_nonstream(head: bytes) -> str | None:
    """The provider whose non-stream body (one JSON object, no stream frame) `head` is.

    One line that is a whole object followed by more lines is an NDJSON stream. An Ollama
    `{"done": true, "message": ...}` carrying the reply is the non-stream `/api/chat` (or
    `/api/generate`) body, with or without a final newline.

    Args:
        head: The whole body, or its first part when it is too long to hold (then the keys
            seen tell).

    Returns:
        The provider id, or `None` when it is not one: a stream, or a body of no known shape.
    """
    text = head.lstrip(LEADING)
    if text[:1] != b"{":
        return None
    end = text.find(b"\n")
    try:
        first = orjson.loads(text if end < 0 else text[:end])
    except orjson.JSONDecodeError:
        first = None
    if isinstance(first, dict):
        if end >= 0 and text[end:].strip():
            return None  # NDJSON lines
        return first_line_nonstream(first)
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        for marker, provider in _NONSTREAM_MARKERS:
            if marker.search(text):
                return provider
        return None
    return nonstream_provider(value) if isinstance(value, dict) else None
