"""What the emulator sends for one request, and when: decided once, with no I/O and no clock.

``plan(ask, emulator, medium)`` yields the steps of one reply; a transport performs each in
its own medium and decides nothing (the HTTP body in ``_stream.py``, the WebSocket messages
in ``_websocket.py``)::

    plan ─► Fail(status, message, headers)   refused (a status fault, no such capture, ...):
                                             the endpoint's error, or the socket's error event
       ─► Open(media_type, headers)          the reply is chosen and begins (its timeline's 0)
          Wait(until)                        until ``until`` seconds on the reply's timeline
          Stall(seconds)                     hold (a fault); the timeline moves on by the hold
          Send(data)                         these bytes (a socket: one event, one message)
          ...
       ─► End()                              the reply ended
        | Cut(reason)                        cut before its end (a drop fault, a cut capture)

The reply is chosen as ``_replies.choose`` says (the queue first, else the capture the
request names); the medium (``_media.py``) says what a write is, when each goes out and where
a fault's count falls. The steps hold no time of their own: a ``Wait`` names a moment on the
reply's timeline, which a ``Stall`` shifts, so a pace goes on after a stall where it stopped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._endpoints import Endpoint, content_type, requested_model
from ._faults import Fault
from ._kept import resumable
from ._limits import Refused
from ._media import HttpBody, Writes
from ._replies import Answer, Emulator, choose

__all__ = [
    "Ask",
    "Cut",
    "End",
    "Fail",
    "Medium",
    "Open",
    "Send",
    "Stall",
    "Step",
    "Wait",
    "plan",
    "performed",
    "refusal",
]


@dataclass(frozen=True)
class Fail:
    """Answer with an error: ``status``, in the endpoint's (or the socket's) error shape."""

    status: int
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Open:
    """The reply begins (an HTTP head with ``media_type`` and ``headers``)."""

    media_type: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Wait:
    """Send nothing until ``until`` seconds after the reply began (less any stall)."""

    until: float


@dataclass(frozen=True)
class Stall:
    """Send nothing for ``seconds`` (``inf``: until the client or the server goes)."""

    seconds: float


@dataclass(frozen=True)
class Send:
    """Send ``data``: a slice of an HTTP body, or one event's JSON as a socket message."""

    data: bytes


@dataclass(frozen=True)
class Cut:
    """End without the reply's end: the connection cut (a socket closed with ``reason``)."""

    reason: str


@dataclass(frozen=True)
class End:
    """The reply is whole."""


Step = Fail | Open | Wait | Stall | Send | Cut | End


@dataclass(frozen=True)
class Ask:
    """What one request asks: its ``endpoint`` and JSON ``body``, the capture its header
    names (``capture``; else the body's model does), its ``fault`` and ``pace``, and the
    replay speed of recorded timings (``None``: no recorded timing)."""

    endpoint: Endpoint
    body: Mapping[str, Any]
    fault: Fault = field(default_factory=Fault)
    pace: float = 0.0
    capture: str | None = None
    replay_speed: float | None = None
    last_event_id: str | None = None


class Medium(Protocol):
    """What a medium makes of a chosen reply (``_media.HttpBody``, ``SocketMessages``)."""

    def streams(self, endpoint: Endpoint, body: Mapping[str, Any]) -> bool:
        """Whether the request gets a stream (else a non-stream body)."""
        ...

    def writes(self, answer: Answer, fault: Fault, pace: float,
               replay_speed: float | None) -> Writes:
        """Each write of the reply and when it goes out (the faults that change bytes in)."""
        ...

    def faults_at(self, sizes: Sequence[int], fault: Fault) -> tuple[int | None, int | None]:
        """Before which write the stall and the drop fall (``len(sizes)``: before the end)."""
        ...

    def unfinished(self, last: bytes | None) -> str | None:
        """Why a reply whose last write is ``last`` is cut at its end (``None``: it is not)."""
        ...


def refusal(fault: Fault) -> Fail | None:
    """The answer a ``status`` fault gives every request (a 429 or 503 with its
    ``Retry-After``); ``None`` without one."""
    if fault.status is None:
        return None
    wait = {"retry-after": f"{fault.retry_after:g}"} if fault.status in (429, 503) else {}
    return Fail(fault.status, f"fault injected: status={fault.status}", wait)


def plan(ask: Ask, emulator: Emulator, medium: Medium) -> Iterator[Step]:
    """The steps of the reply to ``ask``: ``Fail``, or ``Open`` then waits, stalls and sends,
    then ``End`` or ``Cut``. The reply is chosen (the queue's next taken) at the first step."""
    failed = refusal(ask.fault)
    if failed is not None:
        yield failed
        return
    endpoint, fault = ask.endpoint, ask.fault
    streamed = medium.streams(endpoint, ask.body)
    name = ask.capture or requested_model(endpoint, ask.body)
    try:
        answer = choose(emulator, endpoint, name, streamed, ask.replay_speed is not None)
    except Refused as refused:
        yield Fail(refused.status, refused.message, refused.headers)
        return
    if streamed and isinstance(medium, HttpBody):  # (a socket's messages are no SSE)
        answer, fault = resumable(answer, ask.body, fault, ask.last_event_id,
                                  emulator.background)
    elif streamed:
        answer, fault = resumable(answer, ask.body, fault, None, emulator.background,
                                  numbered=False)
    elif (answer.capture is not None and ask.body.get("background") is True
          and endpoint.provider == "openai-responses"):  # (kept as its stream, to resume)
        emulator.background.keep(emulator.frames(answer.capture, endpoint))
    timeline = medium.writes(answer, fault, ask.pace, ask.replay_speed)
    length = {} if streamed else {"content-length": str(sum(len(d) for _, d in timeline))}
    yield Open(content_type(endpoint, streamed), length)
    yield from performed(timeline, medium, fault)


def performed(timeline: Writes, medium: Medium, fault: Fault) -> Iterator[Step]:
    """The writes in order, each after its moment, with the stall and the drop where the
    medium places them, then the end."""
    stall, drop = medium.faults_at([len(data) for _, data in timeline], fault)
    dropped = Cut(f"fault injected: drop-after={fault.drop_after}")
    at = 0.0
    for index, (when, data) in enumerate(timeline):
        if index == stall:
            yield Stall(fault.stall)
        if index == drop:
            yield dropped
            return
        if when != at:
            at = when
            yield Wait(when)
        yield Send(data)
    if stall == len(timeline):
        yield Stall(fault.stall)
    if drop == len(timeline):
        yield dropped
        return
    reason = medium.unfinished(timeline[-1][1] if timeline else None)
    yield End() if reason is None else Cut(reason)
