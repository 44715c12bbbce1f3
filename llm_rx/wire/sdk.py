"""How each official SDK's stream object holds its reply: the raw HTTP response it wraps
(openai, anthropic: exact bytes), the raw event-stream body (boto3), or parsed chunks to put
back into their wire form (google-genai, ollama: the same decoder reads them).

No SDK is imported: objects are told by their attributes and their type's module.
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Callable
from datetime import datetime
from typing import Any

import orjson

from .providers import ProviderId

__all__ = ["already_read", "boto_event_stream", "chunk_framer", "wrapped_http_response"]

# Attributes that lead from an SDK stream object to the HTTP response it reads, in order:
# openai / anthropic ``Stream`` and ``AsyncStream`` and anthropic ``MessageStream``
# (``response``), the ``with_streaming_response`` context's value (``http_response``), the
# ``.stream()`` helpers' wrapped low-level stream (``_raw_stream``).
_TO_RESPONSE = ("response", "http_response", "_raw_stream")
# Fields of a google-genai response that the SDK adds and the wire never carried.
_GENAI_ADDED = {"sdk_http_response", "automatic_function_calling_history", "parsed"}


def wrapped_http_response(obj: object) -> Any | None:
    """The httpx / httpx2 response an SDK stream object reads its bytes from, or ``None``."""
    for _ in range(3):  # (a helper around a stream around a response, at most)
        if _is_http_response(obj):
            return obj
        if not type(obj).__module__.startswith(("openai", "anthropic")):
            return None
        for name in _TO_RESPONSE:
            inner = getattr(obj, name, None)
            if inner is not None:
                obj = inner
                break
        else:
            return None
    return obj if _is_http_response(obj) else None


def _is_http_response(obj: object) -> bool:
    return hasattr(obj, "status_code") and hasattr(obj, "headers") and (
        hasattr(obj, "iter_bytes") or hasattr(obj, "aiter_bytes")
    )


def boto_event_stream(obj: object) -> tuple[Any, ProviderId] | None:
    """For a boto3 ``converse_stream`` reply (a dict whose ``stream`` is botocore's
    ``EventStream``): that stream and the provider; else ``None``."""
    if not isinstance(obj, dict):
        return None
    stream = obj.get("stream")
    if stream is None or not type(stream).__module__.startswith("botocore"):
        return None
    return stream, "bedrock-converse"


def already_read(obj: object) -> bool:
    """Whether an SDK stream (its HTTP response, its generator, botocore's event stream)
    has been read from already."""
    if getattr(obj, "is_stream_consumed", False):
        return True
    events = getattr(obj, "_event_generator", None)  # botocore EventStream
    if events is not None:
        obj = events
    if inspect.isgenerator(obj):
        return inspect.getgeneratorstate(obj) != inspect.GEN_CREATED
    return False  # (an async generator may have been started by its SDK: not told)


def chunk_framer(chunk: object) -> tuple[ProviderId, Callable[[Any], bytes]] | None:
    """For a parsed chunk of an SDK that exposes no raw bytes: its provider and how a chunk
    of its kind is written back in the wire form (google-genai: SSE ``data:`` frames of the
    chunk's camelCase JSON; ollama: NDJSON lines), or ``None`` for a chunk of no known SDK."""
    module = type(chunk).__module__
    if module.startswith("google.genai"):
        return "gemini", _genai_frame
    if module.startswith("ollama"):
        return "ollama", _ollama_line
    return None


def _genai_frame(chunk: Any) -> bytes:
    data = chunk.model_dump(by_alias=True, exclude_none=True, exclude=_GENAI_ADDED)
    json = orjson.dumps(data, default=_as_wire, option=orjson.OPT_PASSTHROUGH_DATETIME)
    return b"data: " + json + b"\r\n\r\n"


def _as_wire(value: object) -> str:
    """Bytes (a ``thoughtSignature``) and times as the wire spells them: standard base64
    (the SDK's own JSON dump gives the URL-safe alphabet: a signature that no longer
    matches), and UTC as ``Z``."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _ollama_line(chunk: Any) -> bytes:
    return orjson.dumps(chunk.model_dump(mode="json", exclude_none=True)) + b"\n"
