"""Whether a provider's non-stream body is a finished reply, and its reading when it is not
(PITFALLS 50): the one rule ``from_native`` and the streaming sources share.

A body is not always the end of a reply: a Responses ``response`` retrieved while it runs in
the background is ``queued`` or ``in_progress``, one stopped is ``cancelled``; a body whose
stop field is missing or ``null`` (Anthropic's ``stop_reason``, Bedrock's ``stopReason``,
Cohere's ``finish_reason``, each always set on a finished non-stream reply) says nothing
ended it. `restream` re-frames such a body without the frames that end its stream, so its
own decoder reads it as cut; `SoFar` reads that stream as the reply so far, ended by the
error given here (a ``cancelled`` body by a ``CancelledStreamError``), with the usage the
body holds where only the end of its stream would carry it (Responses, Cohere).

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
from ..events import Event, UsageUpdate
from ..response import Usage
from ._boundary import attach_events
from ._interactions_tables import usage_from_interactions
from ._responses_items import usage_from_responses
from .base import Decoder, TextFold
from .cohere import usage_from_cohere

__all__ = ["RESPONSES_FINISHED", "SoFar", "so_far", "unfinished"]

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


def _interactions(body: Mapping[str, Any]) -> LlmRxError | None:
    status = body.get("status")
    raw = _raw("status", status)
    if status == "cancelled":
        return CancelledStreamError("the interaction was cancelled (status 'cancelled')", raw)
    if status in ("queued", "in_progress") or not isinstance(status, str):
        return IncompleteStreamError(
            f"the interaction has not finished (status {status!r}): retrieve it again later",
            raw)
    return None


_CHECKS: dict[str, Callable[[Mapping[str, Any]], LlmRxError | None]] = {
    "openai-responses": _responses,
    "gemini-interactions": _interactions,
    "anthropic": _stop_field("stop_reason"),
    "bedrock-converse": _stop_field("stopReason"),
    "cohere": _stop_field("finish_reason"),
}

#: The usage of a body whose stream gives it only in the frame that ends it.
_END_USAGE: dict[str, Callable[[dict[str, Any]], Usage]] = {
    "openai-responses": usage_from_responses,
    "cohere": usage_from_cohere,
    "gemini-interactions": usage_from_interactions,
}


def unfinished(body: Mapping[str, Any], provider: str) -> LlmRxError | None:
    """Why ``provider``'s non-stream ``body`` is not a finished reply (the error its
    ``Response`` carries), or ``None`` for a finished one."""
    check = _CHECKS.get(provider)
    return check(body) if check is not None else None


class SoFar(Decoder):
    """The decoder of a body's re-framed stream (`restream`), ``inner``, read as the reply so
    far when the body is not finished: at EOF, where ``inner`` says the stream was cut (its
    end left out), the reading ends with ``reason`` instead, after the usage the body holds
    where only that end would carry it. Reads go to ``inner`` (`settled`)."""

    provider = "unknown"

    def __init__(self, inner: Decoder, body: Mapping[str, Any], reason: LlmRxError,
                 provider: str) -> None:
        self.inner = inner
        self._reason = reason
        usage = body.get("usage")
        read = _END_USAGE.get(provider)
        self._end_usage: list[Event] = (
            [UsageUpdate(read(usage))] if read is not None and isinstance(usage, dict) else []
        )
        super().__init__()

    @property
    def started(self) -> bool:
        return self.inner.started

    @started.setter
    def started(self, value: bool) -> None:
        pass

    @property
    def finished(self) -> bool:
        return self.inner.finished

    @finished.setter
    def finished(self, value: bool) -> None:
        if value:  # (finished from outside: an error the decoder did not raise itself)
            self.inner.finished = True

    def settled(self) -> Decoder:
        return self.inner.settled()

    def fold_into(self, fold: TextFold | None) -> None:
        self.inner.fold_into(fold)

    def decode(self, chunk: bytes) -> list[Event]:
        return self.inner.decode(chunk)

    def flush(self) -> list[Event]:
        try:
            events = self.inner.flush()
        except IncompleteStreamError as cut:  # (the end `restream` left out)
            events = list(cut.events)
        raise attach_events(self._reason, [*events, *self._end_usage])


def so_far(decoder: Decoder, body: Mapping[str, Any], provider: str) -> Decoder:
    """``decoder`` (``provider``'s, for ``body`` re-framed by `restream`), read as the reply
    so far when ``body`` is not a finished reply (`SoFar`), else as it is."""
    reason = unfinished(body, provider)
    return decoder if reason is None else SoFar(decoder, body, reason, provider)
