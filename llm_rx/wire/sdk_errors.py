"""An official SDK's own HTTP error (or an HTTP client's) as the
:class:`~llm_rx.errors.ProviderError` the same reply read from the wire gives.

The SDKs that hand out parsed chunks raise their own exception inside their iterators when the
server answers an error status (google-genai ``ClientError`` / ``ServerError``, ollama
``ResponseError``), and the others raise one when a request is made (openai and anthropic
``APIStatusError``, botocore ``ClientError``, cohere ``ApiError``; httpx's
``HTTPStatusError`` from ``raise_for_status()``). Each keeps the status, and somewhere the
response's headers (``Retry-After``) and body: read here by their attributes, no SDK
imported. An error the SDK raised for an error frame inside a stream that answered 200
(google-genai's ``{"error": ...}`` chunk, ollama's ``{"error": ...}`` line) is that in-band
error, with no status.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import ProviderError
from .http import ERROR_BODY_LIMIT, body_error, http_error

__all__ = ["sdk_error"]

# The SDK a module belongs to -> the provider named in the error's message.
_NAMES = {
    "google": "gemini", "ollama": "ollama", "openai": "openai", "anthropic": "anthropic",
    "botocore": "bedrock", "cohere": "cohere", "mistralai": "mistral",
}
# How far along ``__cause__`` / ``__context__`` the HTTP response is looked for (ollama raises
# its ``ResponseError`` ``from None`` inside the handler of httpx's ``HTTPStatusError``).
_DEPTH = 3


def sdk_error(error: BaseException, *, now: float) -> ProviderError | None:
    """The :class:`ProviderError` for ``error`` when it is an SDK's or an HTTP client's own
    error for an HTTP error status (status, ``Retry-After`` from the response headers, the
    provider's words from the error body), or for an error frame its iterator raised on;
    ``None`` for anything else (a socket that failed, a timeout, a bug). ``now`` is the
    current time (``time.time()``), for a ``Retry-After`` given as a date."""
    if isinstance(error, ProviderError):
        return error
    in_band = _in_band_body(error)
    if in_band is not None:
        return body_error(in_band, None)
    boto = _boto(error)
    if boto is not None:
        status, headers, body = boto
    else:
        response = _response(error)
        status = _status(error, response)
        headers, body = _headers(error, response), _body(error, response)
    if status is None or not 400 <= status <= 599:
        return None
    return http_error(status, body, headers, _name(error), now=now)


def _module(error: BaseException) -> str:
    return type(error).__module__.split(".", 1)[0]


def _name(error: BaseException) -> str | None:
    return _NAMES.get(_module(error))


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _attribute(value: object, name: str) -> Any:
    """``value.name``, or ``None`` when it has none or reading it fails (a property of a
    response not read yet)."""
    try:
        return getattr(value, name, None)
    except Exception:  # noqa: BLE001 - a property that raised: the value does not say
        return None


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and the exceptions it was raised from or while handling, nearest first."""
    found = [error]
    for _ in range(_DEPTH):
        nearest = found[-1]
        nxt = nearest.__cause__ or nearest.__context__
        if nxt is None or nxt in found:
            break
        found.append(nxt)
    return found


def _response(error: BaseException) -> Any:
    """The HTTP response the error (or one it came from) holds: anything with an integer
    ``status_code`` (or ``status``) and ``headers``."""
    for link in _chain(error):
        response = _attribute(link, "response")
        if response is None or _attribute(response, "headers") is None:
            continue
        if _integer(_attribute(response, "status_code") or _attribute(response, "status")):
            return response
    return None


def _status(error: BaseException, response: Any) -> int | None:
    for name in ("status_code", "status"):
        value = _integer(_attribute(error, name))
        if value is not None:
            return value
    if _module(error) == "google":  # (google-genai's ``APIError.code``)
        value = _integer(_attribute(error, "code"))
        if value is not None:
            return value
    if response is not None:
        return _integer(_attribute(response, "status_code") or _attribute(response, "status"))
    return None


def _in_band_body(error: BaseException) -> dict[str, Any] | None:
    """The error frame an SDK's stream iterator raised on, inside a reply that answered 200:
    google-genai's ``APIError`` over a response whose status is no error, ollama's
    ``ResponseError`` with no status (``-1``)."""
    module = type(error).__module__
    if module.startswith("google.genai"):
        status = _integer(_attribute(_attribute(error, "response"), "status_code"))
        details = _attribute(error, "details")
        if status is not None and status < 400 and isinstance(details, dict):
            return details
    if module.startswith("ollama") and _attribute(error, "status_code") == -1:
        return {"error": str(_attribute(error, "error") or error)}
    return None


def _boto(error: BaseException) -> tuple[int | None, dict[str, str], bytes] | None:
    """botocore's ``ClientError``: its response is a dict with the status and headers in
    ``ResponseMetadata`` and the error's code and message in ``Error``; the status, the
    headers and an error body in Bedrock's shape (``{"message"}``, the type as ``__type``)."""
    response = _attribute(error, "response")
    if not isinstance(response, dict) or not isinstance(response.get("ResponseMetadata"), dict):
        return None
    metadata, told = response["ResponseMetadata"], response.get("Error")
    headers = metadata.get("HTTPHeaders")
    fields = told if isinstance(told, dict) else {}
    body = {"__type": fields.get("Code"), "message": fields.get("Message")}
    return (
        _integer(metadata.get("HTTPStatusCode")),
        {str(key): str(value) for key, value in headers.items()} if isinstance(headers, dict)
        else {},
        orjson.dumps({key: value for key, value in body.items() if value}),
    )


def _headers(error: BaseException, response: Any) -> dict[str, str]:
    for holder in (response, error):  # (cohere's ``ApiError`` keeps them itself)
        headers = _attribute(holder, "headers") if holder is not None else None
        items = _attribute(headers, "items") if headers is not None else None
        if callable(items):
            try:
                return {str(key): str(value) for key, value in items()}
            except Exception:  # noqa: BLE001 - unreadable headers: none
                return {}
    return {}


def _body(error: BaseException, response: Any) -> bytes:
    """The error body: what the response read (openai, anthropic, ollama's httpx response),
    else the parsed body the error keeps (``details``, ``body``), else its words."""
    content = _attribute(response, "content") if response is not None else None
    if isinstance(content, (bytes, bytearray)) and content:
        return bytes(content[:ERROR_BODY_LIMIT])
    for name in ("details", "body"):
        kept = _attribute(error, name)
        if isinstance(kept, (dict, list)):
            try:
                return orjson.dumps(kept)[:ERROR_BODY_LIMIT]
            except TypeError:
                continue
        if isinstance(kept, (str, bytes)) and kept:
            return (kept.encode() if isinstance(kept, str) else kept)[:ERROR_BODY_LIMIT]
    return str(error).encode("utf-8", "replace")[:ERROR_BODY_LIMIT]
