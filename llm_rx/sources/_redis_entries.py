"""How a reply is laid out in a Redis Stream: shared by ``sinks.to_redis`` (which writes it)
and ``sources.from_redis`` (which follows it). Pure: no Redis client is imported here, so the
core never imports ``redis``.

One stream entry per event, field ``e`` = the event's JSON (:func:`~llm_rx.events.event_to_dict`),
then one end entry, field ``end`` = ``{"error": null}`` for a reply whose source completed, or
the error that ended it (its class, kind, message, raw frame and, for a provider's error, its
details): a follower ends with the same error, so it folds the same ``Response`` as the
producer. Entries with field ``h`` are the producer's heartbeats and carry nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

from ..errors import (
    CancelledStreamError,
    FrameTooLargeError,
    IncompleteStreamError,
    LlmRxError,
    ProtocolError,
    ProviderError,
    SinkWriteError,
    StreamTimeoutError,
    WireFormatError,
)
from ..events import Event, event_from_dict, event_to_dict

__all__ = [
    "END_FIELD",
    "EVENT_FIELD",
    "HEARTBEAT_FIELD",
    "Ended",
    "end_entry",
    "event_entry",
    "read_entry",
    "read_item",
    "typed",
]

EVENT_FIELD = "e"
END_FIELD = "end"
HEARTBEAT_FIELD = "h"

# The classes an end entry may name (any other name falls back to its kind's base class).
_CLASSES: dict[str, type[LlmRxError]] = {
    cls.__name__: cls
    for cls in (
        CancelledStreamError, FrameTooLargeError, IncompleteStreamError, LlmRxError,
        ProtocolError, ProviderError, SinkWriteError, StreamTimeoutError, WireFormatError,
    )
}
_BY_KIND: dict[str, type[LlmRxError]] = {
    "incomplete": IncompleteStreamError, "provider": ProviderError,
    "wire_format": WireFormatError, "protocol": ProtocolError, "cancelled": CancelledStreamError,
}
_PROVIDER_FIELDS = ("status", "error_type", "code", "request_id", "retryable", "retry_after")


class Ended(NamedTuple):
    """The end entry: ``error`` is what ended the reply (``None``: its source completed)."""

    error: LlmRxError | None


def typed(error: BaseException) -> LlmRxError:
    """``error`` as the typed error a reply folds with (what ``ResponseBuilder`` makes of an
    untyped one), so the end entry and the producer's own ``Response`` agree."""
    if isinstance(error, LlmRxError):
        return error
    return IncompleteStreamError(f"the stream failed: {type(error).__name__}: {error}")


def event_entry(event: Event) -> dict[str, bytes]:
    """The stream entry of one event."""
    return {EVENT_FIELD: orjson.dumps(event_to_dict(event))}


def end_entry(error: BaseException | None) -> dict[str, bytes]:
    """The end entry of a reply that ended with ``error`` (``None``: normally)."""
    if error is None:
        return {END_FIELD: b'{"error":null}'}
    failure = typed(error)
    body: dict[str, Any] = {
        "type": type(failure).__name__, "kind": failure.kind,
        "message": failure.message, "raw": failure.raw,
    }
    if isinstance(failure, ProviderError):
        body.update({name: getattr(failure, name) for name in _PROVIDER_FIELDS})
    return {END_FIELD: orjson.dumps({"error": body}, default=str)}


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)


def read_entry(entry_id: str, fields: Mapping[Any, Any]) -> Event | Ended | None:
    """The event or end an entry holds (``None`` for a heartbeat); a ``WireFormatError``
    carrying the entry when it is none of these (not written by ``to_redis``)."""
    named = {_text(key): value for key, value in fields.items()}
    try:
        if EVENT_FIELD in named:
            return event_from_dict(orjson.loads(named[EVENT_FIELD]))
        if END_FIELD in named:
            return Ended(_error_of(orjson.loads(named[END_FIELD])["error"]))
        if HEARTBEAT_FIELD in named:
            return None
    except (ValueError, TypeError, KeyError) as failure:
        raise _bad(entry_id, named, f"{type(failure).__name__}: {failure}") from failure
    raise _bad(entry_id, named, "it has no event, end or heartbeat field")


def read_item(where: str, item: Any) -> Event | Ended | None:
    """The event or end one JSON item holds, the same fields as an entry, parsed (a
    Durable Stream's JSON items); a ``WireFormatError`` carrying it when it is none."""
    try:
        if isinstance(item, dict):
            if EVENT_FIELD in item:
                return event_from_dict(item[EVENT_FIELD])
            if END_FIELD in item:
                return Ended(_error_of(item[END_FIELD]["error"]))
            if HEARTBEAT_FIELD in item:
                return None
    except (ValueError, TypeError, KeyError) as failure:
        why = f"{type(failure).__name__}: {failure}"
        raise WireFormatError(f"{where} is not an llm-rx item ({why})",
                              orjson.dumps(item, default=str).decode()) from failure
    raise WireFormatError(f"{where} is not an llm-rx item (it has no event, end or heartbeat "
                          "field)", orjson.dumps(item, default=str).decode())


def _bad(entry_id: str, named: Mapping[str, Any], why: str) -> WireFormatError:
    raw = orjson.dumps({key: _text(value) for key, value in named.items()}).decode()
    return WireFormatError(f"stream entry {entry_id} is not an llm-rx entry ({why})", raw)


def _error_of(body: Any) -> LlmRxError | None:
    if body is None:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("message"), str):
        raise TypeError("the end entry's error is not an object with a message")
    raw = body.get("raw")
    raw = raw if isinstance(raw, str) else None
    cls = _CLASSES.get(str(body.get("type"))) or _BY_KIND.get(str(body.get("kind")), LlmRxError)
    if issubclass(cls, ProviderError):
        details = {name: body.get(name) for name in _PROVIDER_FIELDS}
        return ProviderError(
            body["message"], raw, status=_int(details["status"]),
            error_type=_str(details["error_type"]), code=_str(details["code"]),
            request_id=_str(details["request_id"]), retryable=details["retryable"] is True,
            retry_after=_seconds(details["retry_after"]),
        )
    return cls(body["message"], raw)


def _seconds(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
