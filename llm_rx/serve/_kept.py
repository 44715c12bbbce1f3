"""The replies a client can come back to (``_background.py`` serves them): the background
replies kept by id, and a streamed answer made resumable as its request asks."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import orjson

from ..wire.providers import ProviderId
from ..wire.resume import sequence_number
from ..wire.sse import SSEDecoder
from ._faults import Fault

if TYPE_CHECKING:
    from ._replies import Answer

__all__ = ["RESPONSES", "Background", "event_number", "resumable", "sequence_of"]

RESPONSES: ProviderId = "openai-responses"


class Background:
    """The background replies kept, by id (the frames as the first request got them), and
    which were cancelled."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, list[bytes]] = {}
        self._cancelled: set[str] = set()

    def keep(self, pieces: list[bytes]) -> None:
        reply_id = _reply_id(pieces)
        if reply_id is not None:
            with self._lock:
                self._kept[reply_id] = pieces
                self._cancelled.discard(reply_id)

    def get(self, reply_id: str) -> list[bytes] | None:
        with self._lock:
            return self._kept.get(reply_id)

    def cancel(self, reply_id: str) -> bool:
        with self._lock:
            if reply_id not in self._kept:
                return False
            self._cancelled.add(reply_id)
            return True

    def cancelled(self, reply_id: str) -> bool:
        with self._lock:
            return reply_id in self._cancelled

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._cancelled.clear()


def _reply_id(pieces: list[bytes]) -> str | None:
    for event in SSEDecoder().decode(b"".join(pieces[:2])):
        try:
            frame = orjson.loads(event.data)
        except orjson.JSONDecodeError:
            continue
        response = frame.get("response") if isinstance(frame, dict) else None
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            return str(response["id"])
    return None


def event_number(value: str | None) -> int:
    """A ``Last-Event-ID`` or ``starting_after`` as a count (``0``: none, or not a number)."""
    return int(value) if value is not None and value.strip().isdigit() else 0


def resumable(answer: Answer, body: Mapping[str, Any], fault: Fault, last_event_id: str | None,
              background: Background, *, numbered: bool = True) -> tuple[Answer, Fault]:
    """A streamed answer as the request asks: kept when it is a background reply, numbered
    and resumed after ``Last-Event-ID`` when asked (an SSE body only: ``numbered``), its
    ``drop-after-events`` placed."""
    endpoint, pieces = answer.endpoint, answer.pieces
    if endpoint.provider == RESPONSES and body.get("background") is True:
        background.keep(pieces)
    if numbered and endpoint.form == "sse" and (fault.ids or last_event_id is not None):
        skip = event_number(last_event_id)
        pieces = [b"id: %d\n" % number + piece
                  for number, piece in enumerate(pieces, 1)][skip:]
    if fault.drop_events is not None:
        fault = replace(fault, drop_after=sum(map(len, pieces[: fault.drop_events])))
    return replace(answer, pieces=pieces), fault


def sequence_of(piece: bytes) -> int:
    """The ``sequence_number`` of a Responses event (``-1``: none)."""
    number = sequence_number(piece)
    return -1 if number is None else number
