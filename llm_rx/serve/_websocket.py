"""The emulator's WebSocket mode: OpenAI's (and the Open Responses specification's) on
``/v1/responses``.

The client sends ``{"type": "response.create", ...}`` text messages (the fields of a
``POST /v1/responses`` body); each is answered with the events of one response, each event a
JSON text message (what the ``data:`` line of the HTTP stream carries), one response after
another on the same socket. The capture is chosen as over HTTP: the ``x-llm-rx-capture``
header of the upgrade request, else the message's ``model``; another provider's capture is
translated. A request it cannot serve (unknown capture, a message that is no
``response.create``, a binary message) is answered with an ``error`` message
(``WebSocketErrorEvent``: its ``status`` and ``error``) and the socket stays open.

Faults (the ``x-llm-rx-fault`` header of the upgrade request, for every response on the
socket; counts are bytes of the events' JSON sent for the response, whole events only):
``drop-after=N`` closes the socket (code 1011) before the terminal event; ``stall-after=N``
with ``stall=SECONDS`` pauses; ``error-after=N`` sends the in-band ``error`` event in place
of the rest; ``status=CODE`` answers each request with an ``error`` message of that status.
``x-llm-rx-pace`` (or ``--pace``) paces the events as over HTTP. A capture that ends before
the response's terminal event (a cut stream) closes the socket (code 1011) after its last
event, as a dropped connection does.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import orjson
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..wire.messages import MESSAGE_FRAMINGS, MessageFraming
from ._app import CAPTURE_HEADER, Emulator, _target
from ._endpoints import Endpoint, find_endpoint, requested_model
from ._error_bodies import error_frame
from ._faults import FAULT_HEADER, Fault, parse_fault, parse_pace
from ._journal import JournalEntry
from ._limits import Refused as _Refused
from ._queue import scripted_pieces
from ._stats import Counter

__all__ = ["responses_socket"]


def _request(message: str) -> dict[str, Any]:
    try:
        value = orjson.loads(message)
    except orjson.JSONDecodeError:
        raise _Refused(400, "the message is not JSON") from None
    if not isinstance(value, dict) or value.get("type") != "response.create":
        raise _Refused(400, 'the message is no {"type": "response.create", ...} event')
    return value


def _events(emulator: Emulator, endpoint: Endpoint, framing: MessageFraming, name: str | None,
            fault: Fault) -> list[str]:
    reply = emulator.script.take()  # (a scripted reply answers first, as over HTTP)
    capture = emulator.index.get(name) if name and reply is None else None
    if reply is None and capture is None:
        known = ", ".join(emulator.index.ids[:20])
        raise _Refused(404, f"no scripted reply is queued and no capture is {name!r} (the "
                       f"model names one; known: {known})")
    frames = (scripted_pieces(reply, endpoint, True, _target(endpoint)) if reply is not None
              else emulator.frames(capture, endpoint) if capture is not None else [])
    events = [m for frame in frames for m in framing.messages(frame)]
    if fault.error_after is None:
        return events
    kept, sent = [], 0
    for event in events:
        sent += len(event.encode())
        if sent > fault.error_after:
            break
        kept.append(event)
    error = error_frame(endpoint.provider, endpoint.form,
                        f"fault injected: error-after={fault.error_after}", first=not kept)
    return [*kept, *framing.messages(error)]


def _journal(emulator: Emulator, websocket: WebSocket, message: str) -> None:
    """The message in the journal (method ``WEBSOCKET``), its JSON when it is an object."""
    try:
        parsed: Any = orjson.loads(message)
    except orjson.JSONDecodeError:
        parsed = None
    emulator.journal.add(JournalEntry("WEBSOCKET", websocket.url.path, dict(websocket.headers),
                                      parsed if isinstance(parsed, dict) else None,
                                      dict(websocket.query_params)))


async def _pause(stopping: asyncio.Event, seconds: float) -> bool:
    """Waits ``seconds`` (or until the server stops); whether it stops."""
    try:
        await asyncio.wait_for(stopping.wait(), None if math.isinf(seconds) else seconds)
    except TimeoutError:
        return False
    return True


async def _send(websocket: WebSocket, events: list[str], fault: Fault, pace: float,
                stopping: asyncio.Event) -> Counter:
    """Sends one response's events; how it ended (``completed``, ``dropped``, or
    ``disconnected`` when the server stops)."""
    loop = asyncio.get_running_loop()
    start, sent = loop.time(), 0
    stall_at = fault.stall_after
    for number, event in enumerate(events):
        size = len(event.encode())
        if fault.drop_after is not None and sent + size > fault.drop_after:
            await websocket.close(1011, f"fault injected: drop-after={fault.drop_after}")
            return "dropped"
        if stall_at is not None and sent + size > stall_at:
            stall_at, paused = None, loop.time()
            if await _pause(stopping, fault.stall):
                return "disconnected"
            start += loop.time() - paused
        delay = start + number / pace - loop.time() if pace > 0 else 0.0
        if delay > 0 and await _pause(stopping, delay):
            return "disconnected"
        await websocket.send_text(event)
        sent += size
    return "completed"


async def responses_socket(websocket: WebSocket) -> None:
    """The ASGI WebSocket endpoint (any path; only a provider's WebSocket mode answers)."""
    emulator: Emulator = websocket.app.state.emulator
    endpoint = find_endpoint(websocket.url.path, websocket.query_params)
    framing = MESSAGE_FRAMINGS.get(endpoint.provider) if endpoint is not None else None
    if endpoint is None or framing is None:
        await websocket.close(1008, f"no WebSocket mode at {websocket.url.path}")
        return
    try:
        fault = parse_fault(websocket.headers.get(FAULT_HEADER) or emulator.fault)
        pace = parse_pace(websocket.headers, emulator.pacing.pace)
    except ValueError as error:
        await websocket.close(1008, str(error)[:120])
        return
    await websocket.accept()
    stopping = asyncio.Event()
    emulator.live.add(stopping)
    try:
        while not stopping.is_set():
            received = await websocket.receive()
            if received["type"] == "websocket.disconnect":
                return
            emulator.stats.add("requests")
            try:
                if fault.status is not None:
                    raise _Refused(fault.status, f"fault injected: status={fault.status}")
                message = received.get("text")
                if message is None:
                    raise _Refused(400, "binary messages are not supported: send each event "
                                        "as a JSON text message")
                _journal(emulator, websocket, message)
                request = _request(message)
                name = websocket.headers.get(CAPTURE_HEADER) or requested_model(
                    endpoint, request)
                events = _events(emulator, endpoint, framing, name, fault)
            except _Refused as refused:
                emulator.stats.add("errors")
                await websocket.send_text(framing.refusal(refused.status, refused.message))
                continue
            ending = await _send(websocket, events, fault, pace, stopping)
            if ending == "completed" and not (events and framing.last(events[-1])):
                # (a cut capture: no terminal event comes, the client must not wait for one)
                await websocket.close(1011, "the capture ends before the response's end")
                ending = "dropped"
            emulator.stats.add(ending)
            if ending != "completed":
                return
    except WebSocketDisconnect:
        return
    finally:
        emulator.live.discard(stopping)
