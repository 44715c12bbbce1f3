"""Whether a provider's non-stream body is a finished reply (PITFALLS 50).

A body is not always the end of a reply: a Responses ``response`` retrieved while it runs in
the background is ``queued`` or ``in_progress``, one stopped is ``cancelled``; a body whose
stop field is missing or ``null`` (Anthropic's ``stop_reason``, Bedrock's ``stopReason``,
Cohere's ``finish_reason``, each always set on a finished non-stream reply) says nothing
ended it. Reading such a body as a complete ``end_turn`` reply hides work still running, so
``from_native`` reads it as the reply so far, not complete, with the error given here.

Bodies whose own decoder already tells (a Gemini candidate without ``finishReason``, an
Ollama body with ``done: false``, a Responses body ``failed`` or ``incomplete``) and OpenAI
chat bodies (a missing ``finish_reason`` is inferred, as the stream's ``[DONE]`` without
one is, and says so in ``stop_details``) are left to it. An unknown stop value is a stop
all the same (kept as the native stop reason): only an absent one is no stop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from ..errors import CancelledStreamError, IncompleteStreamError, LlmRxError

__all__ = ["RESPONSES_FINISHED", "unfinished"]

#: the Responses statuses of a reply that ended (``failed`` and ``incomplete`` are ends too)
RESPONSES_FINISHED = frozenset({"completed", "incomplete", "failed"})


def _raw(field: str, value: Any) -> str:
    """The evidence: the one field that says so, as JSON."""
    return orjson.dumps({field: value}).decode()


def _responses(body: Mapping[str, Any]) -> LlmRxError | None:
    status = body.get("status")
    if status in RESPONSES_FINISHED:
        return None
    raw = _raw("status", status)
    if status == "cancelled":
        return CancelledStreamError("the response was cancelled (status 'cancelled')", raw)
    if status in ("queued", "in_progress"):
        return IncompleteStreamError(
            f"the response has not finished (status {status!r}): retrieve it again later", raw)
    return IncompleteStreamError(
        f"the response's status {status!r} is no finished one (completed, incomplete, failed)",
        raw)


def _stop_field(field: str, where: Callable[[Mapping[str, Any]], Any] = lambda body: body
                ) -> Callable[[Mapping[str, Any]], LlmRxError | None]:
    def check(body: Mapping[str, Any]) -> LlmRxError | None:
        holder = where(body)
        value = holder.get(field) if isinstance(holder, Mapping) else None
        if isinstance(value, str) and value:
            return None
        return IncompleteStreamError(
            f"the body has no {field}: nothing says the reply ended", _raw(field, value))
    return check


_CHECKS: dict[str, Callable[[Mapping[str, Any]], LlmRxError | None]] = {
    "openai-responses": _responses,
    "anthropic": _stop_field("stop_reason"),
    "bedrock-converse": _stop_field("stopReason"),
    "cohere": _stop_field("finish_reason"),
}


def unfinished(body: Mapping[str, Any], provider: str) -> LlmRxError | None:
    """Why ``provider``'s non-stream ``body`` is not a finished reply (the error its
    ``Response`` carries), or ``None`` for a finished one."""
    check = _CHECKS.get(provider)
    return check(body) if check is not None else None
