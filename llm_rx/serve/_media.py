"""What one medium makes of a chosen reply: its writes, when each goes out, where a fault
falls. The plan (``_plan.py``) asks these questions the same way for both media; the answers
differ where the media do:

============  ===============================================  ==============================
              ``HttpBody`` (a chunked HTTP body)                ``SocketMessages`` (WebSocket)
============  ===============================================  ==============================
a write       a slice of the body (at most ``read_size``;       one event's JSON (a message)
              at pace 0 the frames joined, then sliced)
its time      its frame's tick (``index / pace``), or the       its event's tick
              recorded read's time (``--timing recorded``)
error-after   after the frame that holds byte N                 after the last event within N
malformed     the frame that holds byte N (else the middle)     (not offered)
a count N     bytes of the body; a write is cut at N; the end   bytes of whole events; the
              of the body counts (N past it holds the end)      response's end does not
the end       the body's end                                    a response's terminal event
                                                                (a capture without one: cut)
============  ===============================================  ==============================
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..wire.messages import MessageFraming
from ._endpoints import Endpoint, wants_stream
from ._error_bodies import error_frame
from ._faults import MIDDLE, Fault
from ._frames import cut_after
from ._malformed import BROKEN_JSON, malformed_frame

if TYPE_CHECKING:
    from ._replies import Answer

__all__ = ["HttpBody", "Pacing", "SocketMessages", "Writes", "writes"]

#: ``(seconds after the reply began, bytes)`` of each write, in order
Writes = list[tuple[float, bytes]]

#: Why a socket is closed when a capture ends before its response does.
UNFINISHED = "the capture ends before the response's end"


@dataclass(frozen=True)
class Pacing:
    """How fast a body goes out: ``pace`` frames (about one token each) per second, ``0`` as
    fast as it can; no write carries more than ``read_size`` bytes. ``schedule``: the time
    of each piece instead (a recorded timing), in seconds after the first."""

    pace: float = 0.0
    read_size: int = 16 * 1024
    schedule: tuple[float, ...] | None = None


def writes(pieces: Iterable[bytes], pacing: Pacing) -> Iterator[tuple[float, bytes]]:
    """``(seconds after the first byte, bytes)`` of each write of a body cut into frames."""
    size = max(1, pacing.read_size)
    if pacing.schedule is not None:
        for when, piece in zip(pacing.schedule, pieces, strict=False):
            for at in range(0, len(piece), size):
                yield when, piece[at : at + size]
        return
    if pacing.pace <= 0:
        body = b"".join(pieces)
        for at in range(0, len(body), size):
            yield 0.0, body[at : at + size]
        return
    for index, piece in enumerate(pieces):
        for at in range(0, len(piece), size):
            yield index / pacing.pace, piece[at : at + size]


def _split(
    items: Iterable[tuple[float, bytes]], offsets: set[int]
) -> Iterator[tuple[float, bytes]]:
    """The same writes, a write that spans one of ``offsets`` split there."""
    sent = 0
    for when, data in items:
        cuts = sorted(at - sent for at in offsets if sent < at < sent + len(data))
        start = 0
        for cut in [*cuts, len(data)]:
            yield when, data[start:cut]
            start = cut
        sent += len(data)


def _passing(sizes: Sequence[int], count: int | None, end: int | None) -> int | None:
    """The index of the first write that takes what was sent past ``count`` bytes (``end``
    when none does; ``None`` when nothing counts)."""
    if count is None:
        return None
    sent = 0
    for index, size in enumerate(sizes):
        if sent + size > count:
            return index
        sent += size
    return end


def _faulted(pieces: list[bytes], endpoint: Endpoint, fault: Fault) -> list[bytes]:
    """A stream's frames with the request's ``malformed`` and ``error-after`` faults."""
    if fault.malformed is not None and pieces:
        at = (len(pieces) // 2 if fault.malformed == MIDDLE
              else len(cut_after(pieces, fault.malformed + 1)) - 1)
        pieces = [*pieces[:at], malformed_frame(endpoint.form, pieces[at]), *pieces[at + 1 :]]
    if fault.error_after is None:
        return pieces
    kept = cut_after(pieces, fault.error_after) if fault.error_after else []
    message = f"fault injected: error-after={fault.error_after}"
    return [*kept, error_frame(endpoint.provider, endpoint.form, message, first=not kept)]


@dataclass(frozen=True)
class HttpBody:
    """A reply as an HTTP body (streamed when the request asks; see the module's table)."""

    read_size: int = 16 * 1024

    def streams(self, endpoint: Endpoint, body: Mapping[str, Any]) -> bool:
        return wants_stream(endpoint, body)

    def writes(self, answer: Answer, fault: Fault, pace: float,
               replay_speed: float | None) -> Writes:
        pacing = Pacing(pace, self.read_size)
        if not answer.streamed:
            pieces = [BROKEN_JSON] if fault.malformed is not None else answer.pieces
        else:
            pieces = _faulted(answer.pieces, answer.endpoint, fault)
            recorded = _recorded(answer, fault, replay_speed)
            if recorded is not None:
                pieces, schedule = recorded
                pacing = Pacing(0.0, self.read_size, schedule)
        offsets = {at for at in (fault.drop_after, fault.stall_after) if at is not None}
        return list(_split(writes(pieces, pacing), offsets))

    def faults_at(self, sizes: Sequence[int], fault: Fault) -> tuple[int | None, int | None]:
        """Before which write the stall and the drop fall (``len(sizes)``: the body's end)."""
        end = len(sizes)
        return _passing(sizes, fault.stall_after, end), _passing(sizes, fault.drop_after, end)

    def unfinished(self, last: bytes | None) -> str | None:
        return None  # (a body ends where its bytes do)


def _recorded(answer: Answer, fault: Fault,
              replay_speed: float | None) -> tuple[list[bytes], tuple[float, ...]] | None:
    """A capture read by read with its recorded times (``--timing recorded``), when it has a
    timing and goes out as it was recorded (same wire, no fault that changes frames)."""
    capture, timing = answer.capture, answer.timing
    if (replay_speed is None or capture is None or timing is None
            or capture.provider != answer.endpoint.provider
            or capture.form != answer.endpoint.form
            or fault.error_after is not None or fault.malformed is not None):
        return None
    pieces = timing.split(capture.data)
    return None if pieces is None else (pieces, timing.schedule(replay_speed))


@dataclass(frozen=True)
class SocketMessages:
    """A reply as WebSocket messages, one event each (always a stream; recorded timings and
    the ``malformed`` fault are the HTTP body's; see the module's table)."""

    framing: MessageFraming

    def streams(self, endpoint: Endpoint, body: Mapping[str, Any]) -> bool:
        return True

    def writes(self, answer: Answer, fault: Fault, pace: float,
               replay_speed: float | None) -> Writes:
        messages = [m.encode() for frame in answer.pieces for m in self.framing.messages(frame)]
        if fault.error_after is not None:
            messages = self._error_after(messages, answer.endpoint, fault.error_after)
        return [(index / pace if pace > 0 else 0.0, message)
                for index, message in enumerate(messages)]

    def _error_after(self, messages: list[bytes], endpoint: Endpoint,
                     count: int) -> list[bytes]:
        kept, sent = [], 0
        for message in messages:
            sent += len(message)
            if sent > count:
                break
            kept.append(message)
        error = error_frame(endpoint.provider, endpoint.form,
                            f"fault injected: error-after={count}", first=not kept)
        return [*kept, *(m.encode() for m in self.framing.messages(error))]

    def faults_at(self, sizes: Sequence[int], fault: Fault) -> tuple[int | None, int | None]:
        """Before which event the stall and the drop fall (whole events; a drop there comes
        first: the socket closes without the stall)."""
        stall = _passing(sizes, fault.stall_after, None)
        drop = _passing(sizes, fault.drop_after, None)
        if stall is not None and drop is not None and stall >= drop:
            stall = None
        return stall, drop

    def unfinished(self, last: bytes | None) -> str | None:
        """Why the socket closes after the last event (``None``: it ended the response)."""
        return None if last is not None and self.framing.last(last) else UNFINISHED

