"""Whose frame it is: an SSE event name, or a payload's keys and ``type``, that only one
provider sends (what `HeadScanner` and each decoder's look at a foreign first frame read)."""

from __future__ import annotations

import re

import orjson

from ..errors import WireFormatError

__all__ = ["foreign_frame", "of_event_name", "of_payload"]

_PAYLOAD_TYPE = re.compile(rb'^\{.*?"type" ?: ?"([\w.-]+)"')
# Keys, not words: a reply's text may say "choices", but in a payload its quotes are escaped
# and no string is followed by a colon.
_TEXT_COMPLETION = re.compile(rb'"object"\s*:\s*"text_completion"')
_CHAT = re.compile(rb'"choices"\s*:|"object"\s*:\s*"chat\.completion')
_GEMINI = re.compile(rb'"(?:candidates|usageMetadata)"\s*:')
_ERROR = re.compile(rb'"error"\s*:\s*[{"]')  # (an error object or message, not ``null``)
_COHERE = (b"message-", b"content-", b"tool-plan-", b"tool-call-", b"citation-")
_ANTHROPIC = (b"message_", b"content_block")
# Gemini Interactions: the event names (``content.`` is the early-2026 schema's) and the
# ``event_type`` every payload carries.
_INTERACTIONS = (b"interaction.", b"step.", b"content.")
_INTERACTIONS_TYPE = re.compile(
    rb'"event_type"\s*:\s*"(?:interaction\.|step\.|content\.|error")')
# The browser protocols: AG-UI's event types (capitals) and the AI SDK UI stream's chunks.
_AG_UI = (b"RUN_", b"TEXT_MESSAGE_", b"TOOL_CALL_", b"REASONING_", b"STATE_", b"STEP_",
          b"MESSAGES_SNAPSHOT", b"ACTIVITY_", b"CUSTOM", b"RAW")
_VERCEL_UI = (b"text-", b"reasoning-", b"tool-", b"data-", b"source-")
_VERCEL_UI_ONLY = frozenset({b"start", b"start-step", b"finish", b"finish-step", b"abort",
                             b"message-metadata", b"file"})


def of_event_name(name: bytes) -> str | None:
    if name.startswith(_ANTHROPIC):
        return "anthropic"
    if name.startswith(b"response."):
        return "openai-responses"
    if name.startswith(_COHERE):
        return "cohere"
    if name.startswith(_INTERACTIONS):
        return "gemini-interactions"
    return None


def of_payload(payload: bytes) -> tuple[str, bool] | None:
    """The provider a whole ``data:`` payload belongs to (and whether that is sure)."""
    if payload == b"[DONE]" or not payload:
        return None
    if _TEXT_COMPLETION.search(payload):
        return "openai-completions", True
    if _CHAT.search(payload):
        return "openai-chat", True
    if _GEMINI.search(payload):
        return "gemini", True
    if _INTERACTIONS_TYPE.search(payload):
        return "gemini-interactions", True
    match = _PAYLOAD_TYPE.search(payload)
    if match:
        kind = match.group(1)
        if kind.startswith(b"response."):
            return "openai-responses", True
        if kind.startswith(_ANTHROPIC) or kind == b"ping":
            return "anthropic", True
        if kind.startswith(_COHERE):
            return "cohere", True
        if kind.startswith(_AG_UI):
            return "ag-ui", True
        if kind in _VERCEL_UI_ONLY or kind.startswith(_VERCEL_UI) or (
                kind == b"error" and b'"errorText"' in payload):
            return "vercel-ui", True
    if _top_level_type(payload).startswith("response."):
        return "openai-responses", True  # "type" after nested ones (Bedrock's key order)
    if _ERROR.search(payload):
        return "openai-chat", False  # an error frame: several providers send one
    return None


def foreign_frame(payload: bytes, own: str) -> WireFormatError | None:
    """A decoder's look at a frame that came before any of its own: the error to raise if
    the payload is one only another provider sends (``None`` if it may be ``own``'s)."""
    found = of_payload(payload.strip())
    if found is None or not found[1] or found[0] == own:
        return None
    return WireFormatError(
        f"the body is not a {own} stream (its first frame is {found[0]}'s)", payload
    )


def _top_level_type(payload: bytes) -> str:
    """The ``type`` of a whole JSON object payload, or ``""``."""
    try:
        value = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return ""
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else ""
