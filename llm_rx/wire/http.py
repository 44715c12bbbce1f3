"""What an HTTP response says about its provider: the provider a streamed reply comes from
(its content type, then its request path), and the provider's HTTP error body as a
:class:`~llm_rx.errors.ProviderError`.

Pure: it reads the values an HTTP client already has (status, headers, path, body bytes).
"""

from __future__ import annotations

from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import orjson

from ..errors import ProviderError
from .providers import ProviderId

__all__ = [
    "ERROR_BODY_LIMIT",
    "body_error",
    "http_error",
    "in_band_error",
    "is_nonstream_path",
    "provider_from_http",
    "retry_after",
]

#: How much of an error body is read: enough for any provider's JSON error, never unbounded.
ERROR_BODY_LIMIT = 64 * 1024

_CONTENT_TYPES: dict[str, ProviderId] = {
    "application/x-ndjson": "ollama",
    "application/vnd.amazon.eventstream": "bedrock-converse",
}
# The endpoint's last path segment (or its Gemini method), tried in order.
_PATHS: tuple[tuple[str, ProviderId], ...] = (
    ("/chat/completions", "openai-chat"),
    ("/completions", "openai-completions"),
    ("/responses", "openai-responses"),
    ("/messages", "anthropic"),
    (":streamGenerateContent", "gemini"),
    (":generateContent", "gemini"),
    ("/api/chat", "ollama"),
    ("/api/generate", "ollama"),
    ("/converse-stream", "bedrock-converse"),
    ("/converse", "bedrock-converse"),
    ("/v2/chat", "cohere"),
    ("/interactions", "gemini-interactions"),
)
# Endpoints whose reply is one JSON body (the stream endpoints answer ``stream: false`` in the
# same shape, told by their content type instead).
_NONSTREAM_PATHS = (":generateContent", "/converse")
# Statuses after which the same request may succeed (rate limit, timeout, conflict, 5xx).
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
# Error types that say "try again later" whatever the status.
_RETRYABLE_TYPES = frozenset({
    "overloaded_error", "rate_limit_error", "api_error",  # Anthropic
    "server_error", "rate_limit_exceeded",  # OpenAI
    "RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL",  # Gemini
    # Bedrock (its stream spells them with a lower-case first letter)
    "ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException",
    "InternalServerException", "throttlingException", "serviceUnavailableException",
    "internalServerException",
})
# Where each provider puts the request id (lower-case header names), first found wins.
_REQUEST_ID_HEADERS = (
    "x-request-id", "request-id", "x-amzn-requestid", "x-amz-request-id", "x-goog-request-id",
)


def provider_from_http(content_type: str | None, path: str | None) -> ProviderId | None:
    """The provider a response comes from, told by its ``Content-Type`` and then by its
    request's URL path, or ``None`` when neither says (then the bytes tell)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    provider = _CONTENT_TYPES.get(media)
    if provider is not None:
        return provider
    for ending, name in _PATHS:
        if (path or "").rstrip("/").endswith(ending):
            return name
    return None


def is_nonstream_path(path: str | None) -> bool:
    """Whether the request path is an endpoint that never streams (Gemini ``:generateContent``,
    Bedrock ``/converse``)."""
    return (path or "").rstrip("/").endswith(_NONSTREAM_PATHS)


def http_error(
    status: int, body: bytes, headers: Mapping[str, str], provider: str | None = None,
    *, now: float,
) -> ProviderError:
    """The :class:`ProviderError` for an HTTP error reply: the provider's ``type``, ``code``
    and ``message`` read from its error body (OpenAI and Anthropic ``{"error": {...}}``,
    Gemini ``{"error": {"code", "status", "message"}}`` or a list of it, Ollama ``{"error":
    "..."}``, Bedrock ``{"message"}`` with the ``x-amzn-ErrorType`` header), the request id
    header, and whether the same request may succeed later. ``now`` is the current time
    (seconds since the epoch, as ``time.time()``), for a ``Retry-After`` given as a date."""
    header = {key.lower(): value for key, value in headers.items()}
    fields = _error_fields(body)
    wait = retry_after(header, now)
    if wait is None:
        wait = _body_retry_delay(body)
    error_type = fields.get("type") or _amazon_type(header.get("x-amzn-errortype"))
    message = fields.get("message") or body[:200].decode("utf-8", "replace").strip()
    request_id = next((header[name] for name in _REQUEST_ID_HEADERS if header.get(name)), None)
    words = " ".join(part for part in (error_type, message) if part)
    return ProviderError(
        f"{provider or 'the provider'} answered HTTP {status}" + (f": {words}" if words else ""),
        body,
        status=status,
        error_type=error_type,
        code=fields.get("code"),
        request_id=request_id or fields.get("request_id"),
        retryable=_retryable(status, error_type, header.get("x-should-retry")),
        retry_after=wait,
    )


def in_band_error(
    message: str, raw: str | bytes | None, error: object, *, status: int | None = None
) -> ProviderError:
    """The :class:`ProviderError` for an error frame inside a stream (HTTP 200): the
    provider's ``type`` and ``code`` from its error object (or the exception name, for
    Bedrock), and whether it is worth trying again (Anthropic ``overloaded_error``, a rate
    limit, a server error). ``status`` is the HTTP status a frame names for itself (a
    Responses WebSocket ``error`` event's): retryable as that status over HTTP is, with the
    wait its error's ``headers`` give (``retry-after`` in seconds, ``retry-after-ms``)."""
    fields = _fields_of({"error": error}) if isinstance(error, (dict, str)) else {}
    if isinstance(error, str) and error.endswith("Exception"):  # (Bedrock's exception name)
        fields = {"type": error}
    error_type, code = fields.get("type"), fields.get("code")
    retryable = error_type in _RETRYABLE_TYPES or _retryable_code(code)
    wait = None
    if isinstance(error, dict):
        told = error.get("headers")
        headers = ({str(key).lower(): str(value) for key, value in told.items()}
                   if isinstance(told, dict) else {})
        wait = _retry_delay(error)
        wait = _wait_in(headers) if wait is None else wait
        if status is not None:
            retryable = _retryable(status, error_type, headers.get("x-should-retry")) or (
                retryable and headers.get("x-should-retry") != "false")
    return ProviderError(message, raw, status=status, error_type=error_type, code=code,
                         retryable=retryable, retry_after=wait)


def retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait before a retry, as the response's headers (lower-case names) say:
    ``retry-after-ms`` (milliseconds, OpenAI's and Anthropic's), else ``Retry-After`` in
    seconds or as an HTTP date (counted from ``now``: the caller's clock, seconds since the
    epoch; the wire formats read none); never negative; ``None`` when neither is there or
    readable."""
    seconds = _wait_in(headers)
    if seconds is not None:
        return seconds
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # (an HTTP date is GMT)
        return None
    return max(0.0, when.timestamp() - now)


def _wait_in(headers: Mapping[str, str]) -> float | None:
    """The wait ``retry-after-ms`` or a ``retry-after`` in seconds gives (not a date)."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    return _number((headers.get("retry-after") or "").strip() or None)


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    if number is None or number != number or number in (float("inf"), float("-inf")):
        return None
    return max(0.0, number)


def _body_retry_delay(body: bytes) -> float | None:
    try:
        value: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if isinstance(value, list) and value:  # (Gemini's JSON-array stream endpoint)
        value = value[0]
    error = value.get("error") if isinstance(value, dict) else None
    return _retry_delay(error) if isinstance(error, dict) else None


def _retry_delay(error: dict[str, Any]) -> float | None:
    """Gemini's (Google APIs') ``RetryInfo`` detail: ``{"@type": ".../google.rpc.RetryInfo",
    "retryDelay": "30s"}`` (a protobuf ``Duration`` in JSON: seconds with an ``s``)."""
    details = error.get("details")
    if not isinstance(details, list):
        return None
    for detail in details:
        if not isinstance(detail, dict):
            continue
        kind, delay = detail.get("@type"), detail.get("retryDelay")
        if isinstance(kind, str) and kind.endswith("RetryInfo") and isinstance(delay, str):
            return _number(delay[:-1]) if delay.endswith("s") else None
    return None


def body_error(body: dict[str, Any], raw: bytes | None) -> ProviderError:
    """The :class:`ProviderError` of a whole error body (``{"error": {...}}``, Anthropic's
    ``{"type": "error", ...}``) that came where a reply was expected, with no HTTP status:
    the provider's message, type (or Gemini's ``status``) and code, and whether it is worth
    trying again. ``raw`` is the body as it came (``None``: the body re-serialised)."""
    error = body.get("error")
    fields = error if isinstance(error, dict) else {"message": error}
    message = fields.get("message")
    error_type = fields.get("type") or fields.get("status")
    code = fields.get("code")
    told = in_band_error("", None, error if isinstance(error, (dict, str)) else {})
    return ProviderError(
        str(message) if message is not None else "the provider reported an error",
        raw if raw is not None else orjson.dumps(body),
        error_type=error_type if isinstance(error_type, str) else None,
        code=str(code) if code is not None else None,
        retryable=told.retryable,
        retry_after=told.retry_after,
    )


def _retryable_code(code: str | None) -> bool:
    """An in-band error's ``code`` that says what a retryable HTTP status would: the status
    itself (OpenAI's and Gemini's ``{"code": 429}``, ``503``) or a retryable error name
    (Responses' ``response.failed`` gives ``{"code": "server_error"}`` with no type)."""
    if code is None:
        return False
    if code.isdigit():
        status = int(code)
        return status in _RETRYABLE_STATUSES or 500 <= status < 600
    return code in _RETRYABLE_TYPES


def _error_fields(body: bytes) -> dict[str, str]:
    """``type``, ``code``, ``message`` and ``request_id`` from an error body, where present."""
    try:
        value: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    if isinstance(value, list) and value:  # (Gemini's JSON-array stream endpoint)
        value = value[0]
    return _fields_of(value) if isinstance(value, dict) else {}


def _fields_of(value: dict[str, Any]) -> dict[str, str]:
    error = value.get("error", value)
    if isinstance(error, str):  # Ollama
        return {"message": error}
    if not isinstance(error, dict):
        return {}
    fields = {
        "type": error.get("type") or error.get("status") or value.get("__type"),
        "code": error.get("code"),
        "message": error.get("message") or error.get("detail") or value.get("Message"),
        "request_id": value.get("request_id"),
    }
    return {key: str(item) for key, item in fields.items() if item is not None and item != ""}


def _amazon_type(header: str | None) -> str | None:
    """``ThrottlingException`` from ``ThrottlingException:http://internal.amazon.com/...``."""
    return header.split(":", 1)[0] or None if header else None


def _retryable(status: int, error_type: str | None, should_retry: str | None) -> bool:
    if should_retry in ("true", "false"):  # the provider's own advice wins
        return should_retry == "true"
    return status in _RETRYABLE_STATUSES or status >= 500 or error_type in _RETRYABLE_TYPES
