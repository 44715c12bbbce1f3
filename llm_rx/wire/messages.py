"""Streams whose events arrive as WebSocket messages (one JSON event a text message), as the
SSE body the same provider's decoder reads.

OpenAI's WebSocket mode on ``/v1/responses`` (and the Open Responses specification's) sends
each event of a response as one JSON text message, the same object the ``data:`` line of
the HTTP stream carries; several responses follow one another on one socket. A response
ends at its terminal event (``response.completed``, ``response.incomplete``,
``response.failed``) or at an ``error`` event (the specification's ``WebSocketErrorEvent``
for a request it refused, or an in-band error): what :meth:`MessageFraming.last` says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["MESSAGE_FRAMINGS", "MessageFraming"]

_RESPONSES_END = frozenset({"response.completed", "response.incomplete", "response.failed",
                            "error"})


class MessageFraming:
    """How one provider's WebSocket messages become its SSE body, and back."""

    def __init__(self, ends: frozenset[str]) -> None:
        self._ends = ends

    def messages(self, event: bytes) -> list[str]:
        """The messages of one SSE event of the HTTP stream: its ``data:`` JSON (none for
        a comment, a keep-alive or the ``[DONE]`` sentinel some hosts send)."""
        lines = event.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        data = b"\n".join(line[5:].removeprefix(b" ") for line in lines
                          if line.startswith(b"data:"))
        if not data.strip() or data.strip() == b"[DONE]":
            return []
        return [data.decode("utf-8", "replace")]

    def refusal(self, status: int, error: Mapping[str, Any]) -> str:
        """The error message of a request the server refused (the specification's
        ``WebSocketErrorEvent``): its HTTP ``status`` and ``error`` object (``type``,
        ``code``, ``message``, ``param``; the ``headers`` that would have gone with the
        status, such as ``retry-after``); the socket stays open."""
        return orjson.dumps({"type": "error", "status": status, "error": dict(error)}).decode()

    def frame(self, message: str | bytes) -> bytes:
        """The SSE event of one message (its JSON as the ``data:`` line)."""
        data = message.encode() if isinstance(message, str) else bytes(message)
        return b"data: " + data.replace(b"\r", b"").replace(b"\n", b"") + b"\n\n"

    def last(self, message: str | bytes) -> bool:
        """Whether ``message`` ends a response (the next one on the socket is another's)."""
        try:
            value = orjson.loads(message)
        except orjson.JSONDecodeError:
            return False
        return isinstance(value, dict) and value.get("type") in self._ends


#: provider -> how its WebSocket messages are framed
MESSAGE_FRAMINGS = {"openai-responses": MessageFraming(_RESPONSES_END)}
