"""The exceptions llm-rx raises, all reached through Rx ``on_error`` in a pipeline.

```text
LlmRxError                      base of everything below; ``raw`` is the offending frame
├── WireFormatError             the bytes are not a stream of the expected format
│   ├── FrameTooLargeError      a frame (line / event) grew past the configured limit
│   ├── NonStreamBodyError      the body is a non-stream reply, not a stream
│   └── StructuredOutputError   a block's finished text is no JSON, or fails its schema
├── ProviderError               the provider reported an error: in-band (``event: error``,
│                               an ``{"error": ...}`` chunk) or as an HTTP error status
├── ProtocolError               frames arrived in an order the protocol forbids
│                               (a delta for a block that is already closed)
├── IncompleteStreamError       the stream ended before the provider's terminal frame
│   ├── StreamTimeoutError      no bytes for longer than the source's idle timeout
│   └── SinkWriteError          a sink's store refused a write (it went away mid-reply)
└── CancelledStreamError        the subscriber disposed or an upstream source was cancelled
```

Every error carries ``raw``: the offending frame as text (or ``None`` when no frame is to
blame, as at EOF), so a log line or a bug report has the evidence. Events decoded before the
error was found are never lost: the sources emit them before ``on_error``, and the error
keeps them in ``events``. A ``WireFormatError`` keeps in ``frames`` the frames its framer
completed before it (read by the decoder, which decodes them before it fails).
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = [
    "CancelledStreamError",
    "ErrorKind",
    "FrameTooLargeError",
    "IncompleteStreamError",
    "LlmRxError",
    "NonStreamBodyError",
    "ProtocolError",
    "ProviderError",
    "SinkWriteError",
    "StreamTimeoutError",
    "StructuredOutputError",
    "WireFormatError",
]

ErrorKind = Literal["incomplete", "provider", "wire_format", "protocol", "cancelled"]


class LlmRxError(Exception):
    """Base of every error llm-rx raises; ``raw`` holds the offending frame, if any, and
    ``events`` the events decoded before the error was found (emitted before ``on_error``;
    empty when none were, or when the error did not come from decoding).

    Args:
        message: What went wrong, in words.
        raw: The offending frame (bytes are decoded as UTF-8, with replacements).
    """

    kind: ErrorKind = "wire_format"
    #: The events decoded before the error (from the same read, or the body's end): each an
    #: ``llm_rx.Event``. Typed ``Any`` here because this module sits below the event algebra
    #: (``events`` imports ``response``, which imports this module), and imports neither.
    events: tuple[Any, ...] = ()

    def __init__(self, message: str, raw: str | bytes | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.raw: str | None = (
            raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else raw
        )

    def __str__(self) -> str:
        if self.raw is None:
            return self.message
        frame = self.raw if len(self.raw) <= 200 else self.raw[:200] + "..."
        return f"{self.message} (frame: {frame!r})"


class WireFormatError(LlmRxError):
    """The bytes are not a stream of the expected wire format (bad JSON, wrong shape).

    ``frames`` holds the frames (SSE events, lines, array elements, event-stream messages)
    a framer's ``decode`` call completed before it found the error; empty from a decoder.

    Args:
        message: What went wrong, in words.
        raw: The offending frame (bytes are decoded as UTF-8, with replacements).
    """

    kind: ErrorKind = "wire_format"
    frames: list[Any]

    def __init__(self, message: str, raw: str | bytes | None = None) -> None:
        super().__init__(message, raw)
        self.frames = []


class FrameTooLargeError(WireFormatError):
    """A line or event grew past the framer's limit: refused instead of growing memory.

    ``frames`` holds the frames the same ``decode`` call completed before the limit tripped.
    """


class NonStreamBodyError(WireFormatError):
    """The body is a provider's non-stream reply (one JSON object), not a stream: ``provider``
    names whose. ``reassemble()``, the byte sources and the CLI read such a body as the
    reply it is (see [`llm_rx.from_native()`][llm_rx.from_native]); a stream decoder on its
    own refuses it.

    Args:
        message: What went wrong, in words.
        raw: The offending frame (bytes are decoded as UTF-8, with replacements).
        provider: The provider whose non-stream body it is.
    """

    def __init__(self, message: str, raw: str | bytes | None = None, *, provider: str) -> None:
        super().__init__(message, raw)
        self.provider = provider


class StructuredOutputError(WireFormatError):
    """A block's finished text (a tool call's arguments, a JSON answer) is no JSON, or does not
    validate against the schema it was read with: ``raw`` is the whole text, ``index`` the
    block, ``errors`` pydantic's list of what failed (empty when the text is no JSON).

    Args:
        message: What went wrong, in words.
        raw: The block's whole text (bytes are decoded as UTF-8, with replacements).
        index: The block's index.
        errors: Pydantic's list of what failed validation.
    """

    def __init__(
        self,
        message: str,
        raw: str | bytes | None = None,
        *,
        index: int,
        errors: list[Any] | None = None,
    ) -> None:
        super().__init__(message, raw)
        self.index = index
        self.errors: list[Any] = errors or []


class ProviderError(LlmRxError):
    """The provider reported an error: inside the stream (HTTP 200, then an error frame), or
    as the HTTP response itself (a status of 400 or more with the provider's error body).

    ``status`` is the HTTP status (or the one a Responses WebSocket ``error`` event names;
    ``None`` for an in-band error); ``error_type``, ``code``
    and ``message`` are the provider's own words from its error body, where it gave them;
    ``request_id`` the provider's request id header; ``retryable`` whether the same request
    may succeed later (429, 408, 409, 5xx, an overloaded provider); ``raw`` the error body.

    Args:
        message: What went wrong, in words.
        raw: The error frame or body (bytes are decoded as UTF-8, with replacements).
        status: The HTTP status (a WebSocket error event's); ``None`` for an in-band error.
        error_type: The provider's error type (``rate_limit_error``, ...).
        code: The provider's error code.
        request_id: The provider's request id header.
        retryable: Whether the same request may succeed later.
        retry_after: Seconds the provider asked to wait before a retry (``None``: not said).
    """

    kind: ErrorKind = "provider"
    retry_after: float | None

    def __init__(
        self,
        message: str,
        raw: str | bytes | None = None,
        *,
        status: int | None = None,
        error_type: str | None = None,
        code: str | None = None,
        request_id: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, raw)
        self.status = status
        self.error_type = error_type
        self.code = code
        self.request_id = request_id
        self.retryable = retryable
        self.retry_after = retry_after


class ProtocolError(LlmRxError):
    """Frames arrived in an order the provider's protocol forbids."""

    kind: ErrorKind = "protocol"


class IncompleteStreamError(LlmRxError):
    """The stream ended (EOF or a transport error) before the provider's terminal frame."""

    kind: ErrorKind = "incomplete"


class StreamTimeoutError(IncompleteStreamError):
    """No bytes arrived for longer than the source's ``idle_timeout``: the stream is cut
    there (what arrived is kept; the reply is ``complete: false``, ``interrupted``)."""


class SinkWriteError(IncompleteStreamError):
    """A sink could not write to its store (a Redis server that stopped mid-reply): the
    pipeline stops there, and the reply is cut (``complete: false``, ``interrupted``) with
    everything that arrived kept. ``raw`` is what could not be written."""


class CancelledStreamError(LlmRxError):
    """The stream was cancelled before it finished."""

    kind: ErrorKind = "cancelled"
