"""Where a resumed stream goes on: the `Cursor`, and the `ResumeTap` that keeps it. Sans-I/O.

A provider that can resume a stream after a dropped connection names the place to go on
from in one of two ways: the SSE ``id:`` of the last event received (sent back as
``Last-Event-ID``, the event-stream rules' reconnection), or a counter inside each event
(OpenAI Responses' ``sequence_number``, asked back as ``starting_after``). The tap reads the
same bytes the decoder reads, framed by the same rules, and keeps both for the last *whole*
event: an event cut in half by the drop is not counted (the continuation sends it again).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .sse import DEFAULT_MAX_FRAME, SSEDecoder

__all__ = ["Cursor", "ResumeTap", "sequence_number"]

# The event's own top-level counter: a quote not escaped before it (a string that holds the
# words is escaped, ``\"sequence_number\"``); the last one in the event is the event's.
_SEQUENCE = re.compile(rb'(?<!\\)"sequence_number"\s*:\s*(\d+)')


def sequence_number(data: bytes) -> int | None:
    """The ``sequence_number`` of an event's JSON data (``None``: it has none)."""
    found = _SEQUENCE.findall(data)
    return int(found[-1]) if found else None


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a resumed stream goes on: after the last whole event received.

    ``from_httpx(response, reconnect=fn)`` calls ``fn(cursor)`` with one after a dropped
    connection; ``fn`` asks the provider for the rest (``Last-Event-ID: <last_event_id>``,
    or a Responses ``GET /v1/responses/{reply_id}?stream=true&starting_after=<sequence_number>``).

    Args:
        last_event_id: The SSE ``id:`` of the last whole event.
        sequence_number: The ``sequence_number`` of the last whole event that had one.
        reply_id: The reply's id.
    """

    last_event_id: str | None = None
    """The SSE ``id:`` of the last whole event (``None``: no event carried one)."""
    sequence_number: int | None = None
    """The ``sequence_number`` of the last whole event that had one (OpenAI Responses)."""
    reply_id: str | None = None
    """The reply's id, as its first event gave it (`MessageStart.id`), when known."""


class ResumeTap:
    """Reads a body's bytes beside its decoder and keeps the `Cursor` of its last whole
    event; ``frames`` counts the whole events read so far (a continuation that brings none
    makes no progress)."""

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self._sse = SSEDecoder(max_frame, names=False)  # (the names tell nothing here)
        self.frames = 0
        self._numbered: bytes | None = None  # the data of the last event with a number
        self.reply_id: str | None = None

    def read(self, chunk: bytes) -> None:
        """The next bytes of the body, as the decoder got them."""
        try:  # (a plain event as its data alone: no object per event)
            events = self._sse.decode_payloads(chunk)
        except Exception:  # noqa: BLE001 - the decoder says what is wrong with the bytes
            return
        if not events:
            return
        self.frames += len(events)
        for event in reversed(events):  # (the last that names one: read when asked)
            data = event if event.__class__ is bytes else event.data  # type: ignore[union-attr]
            if b'"sequence_number"' in data:
                self._numbered = data
                break

    def reconnected(self) -> None:
        """A continuation follows: the event cut in half is dropped, as the decoder's."""
        self._sse.reconnected()

    @property
    def retry(self) -> float | None:
        """The reconnection time the stream asked for (its last ``retry:``), in seconds."""
        return None if self._sse.retry is None else self._sse.retry / 1000

    @property
    def cursor(self) -> Cursor:
        """Where the stream goes on: after the last whole event read."""
        number = None if self._numbered is None else sequence_number(self._numbered)
        return Cursor(self._sse.last_event_id, number, self.reply_id)
