"""Each provider's error, as its API sends it: the JSON body of an HTTP error status, and the
frame that reports an error inside a stream that already started (HTTP 200).

::

    openai-chat, -responses, ...   {"error": {"message", "type", "param", "code"}}
    anthropic                      {"type": "error", "error": {"type", "message"}, "request_id"}
    gemini, gemini-interactions    {"error": {"code", "message", "status"}}
    ollama                         {"error": "message"}
    cohere                         {"id", "message"}
    bedrock-converse               {"message"} with the type in the x-amzn-ErrorType header

The official SDKs read these to build their own exceptions (``openai.RateLimitError``,
``anthropic.RateLimitError``, ``google.genai.errors.ClientError``, ``ollama.ResponseError``,
botocore's ``ClientError`` with its ``Error.Code``), so the shapes follow the APIs exactly.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..wire.eventstream import encode_message

__all__ = ["error_body", "error_frame"]

# status -> (type, code) of OpenAI's error object
_OPENAI = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_GEMINI = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_BEDROCK = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    503: "ServiceUnavailableException",
}
_REQUEST_ID = "req_llmrxserve0000000000000"


def error_body(provider: str, status: int, message: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON body of an HTTP error ``status`` from ``provider``, and the headers that go
    with it (the request id, and for Bedrock the error type)."""
    client = status < 500
    if provider in ("openai-chat", "openai-responses", "openai-completions"):
        kind, code = _OPENAI.get(status, ("invalid_request_error" if client else "server_error",
                                          None))
        error = {"message": message, "type": kind, "param": None, "code": code}
        return {"error": error}, {"x-request-id": _REQUEST_ID}
    if provider == "anthropic":
        kind = _ANTHROPIC.get(status, "invalid_request_error" if client else "api_error")
        body = {"type": "error", "error": {"type": kind, "message": message},
                "request_id": _REQUEST_ID}
        return body, {"request-id": _REQUEST_ID}
    if provider in ("gemini", "gemini-interactions"):
        state = _GEMINI.get(status, "INVALID_ARGUMENT" if client else "INTERNAL")
        return {"error": {"code": status, "message": message, "status": state}}, {}
    if provider == "cohere":
        return {"id": _REQUEST_ID, "message": message}, {"x-request-id": _REQUEST_ID}
    if provider == "bedrock-converse":
        kind = _BEDROCK.get(status, "ValidationException" if client else "InternalServerException")
        headers = {"x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/",
                   "x-amzn-RequestId": _REQUEST_ID}
        return {"message": message}, headers
    return {"error": message}, {}  # ollama (and any endpoint not known to be another's)


def error_frame(provider: str, form: str, message: str, *, first: bool = False) -> bytes:
    """The frame ``provider`` sends when a stream of ``form`` fails after it started.

    ``first`` says no frame came before it (a JSON array then opens with this one).
    """
    if provider in ("openai-chat", "openai-completions"):
        error = {"message": message, "type": "server_error", "param": None, "code": None}
        return _sse(None, {"error": error})
    if provider == "openai-responses":  # (OpenAI's flat fields and the specification's
        nested = {"type": "server_error", "code": "server_error", "message": message,
                  "param": None}  # ``error`` object: each reader finds its own)
        return _sse("error", {"type": "error", "code": "server_error", "message": message,
                              "param": None, "error": nested, "sequence_number": 0})
    if provider == "anthropic":
        return _sse("error", {"type": "error",
                              "error": {"type": "overloaded_error", "message": message}})
    if provider == "cohere":  # a reply that ends in error says so in its message-end
        return _sse("message-end", {"type": "message-end",
                                    "delta": {"finish_reason": "ERROR", "error": message}})
    if provider == "gemini":
        body = {"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}}
        if form == "json-array":
            return (b"[" if first else b",\r\n") + orjson.dumps(body) + b"]"
        return b"data: " + orjson.dumps(body) + b"\r\n\r\n"
    if provider == "gemini-interactions":
        return _sse("error", {"error": {"message": message, "code": "unavailable"},
                              "event_type": "error"})
    if provider == "bedrock-converse":
        headers = {":message-type": "exception", ":exception-type": "internalServerException",
                   ":content-type": "application/json"}
        return encode_message(headers, orjson.dumps({"message": message}))
    return orjson.dumps({"error": message}) + b"\n"  # ollama


def _sse(event: str | None, data: dict[str, Any]) -> bytes:
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"
