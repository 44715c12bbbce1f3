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
``x-llm-rx-pace`` (or ``--pace``) paces the events as over HTTP. A socket whose client
sends nothing for ``--idle-timeout`` seconds (between responses) is closed (code 1001); a
message larger than ``--max-body`` closes it (code 1009, the server's own limit). A
capture that ends before the response's terminal event (a cut stream) closes the socket
(code 1011) after its last event, as a dropped connection does.

What each response sends and when is its plan's (``_plan.py``, with the medium
``_media.SocketMessages``); this module reads the messages and performs the steps: a
``Send`` is one text message, a ``Cut`` closes the socket, a ``Fail`` is the error event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
from starlette.types import Message
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..wire.messages import MESSAGE_FRAMINGS, MessageFraming
from ._app import CAPTURE_HEADER, Emulator
from ._endpoints import find_endpoint
from ._error_bodies import error_body
from ._faults import FAULT_HEADER, parse_fault, parse_pace
from ._journal import JournalEntry
from ._limits import Refused as _Refused
from ._media import SocketMessages
from ._plan import Ask, Cut, End, Fail, Open, Send, Stall, Step, Wait, plan, refusal
from ._stats import Counter
from ._stream import Pacer

__all__ = ["responses_socket"]


def _request(message: str) -> dict[str, Any]:
    try:
        value = orjson.loads(message)
    except orjson.JSONDecodeError:
        raise _Refused(400, "the message is not JSON") from None
    if not isinstance(value, dict) or value.get("type") != "response.create":
        raise _Refused(400, 'the message is no {"type": "response.create", ...} event')
    return value


def _journal(emulator: Emulator, websocket: WebSocket, message: str) -> None:
    """The message in the journal (method ``WEBSOCKET``), its JSON when it is an object."""
    emulator.journal.add(JournalEntry("WEBSOCKET", websocket.url.path, websocket.headers,
                                      query=websocket.query_params, body=message.encode()))


async def _next(websocket: WebSocket, idle: float) -> Message | None:
    """The client's next message or disconnect; ``None`` (the socket closed, code 1001)
    when none came within ``idle`` seconds."""
    try:
        async with asyncio.timeout(idle):
            return await websocket.receive()
    except TimeoutError:
        await websocket.close(1001, f"idle for {idle:g} s (--idle-timeout)")
        return None


def _refusal(framing: MessageFraming, status: int, message: str,
             headers: Mapping[str, str]) -> str:
    """The ``error`` message of a refused request: the error object the same status gets
    over HTTP (a 429's ``rate_limit_exceeded``, a 5xx's ``server_error``; the specification
    requires a ``code``: the type where HTTP gives none), with the headers that would have
    gone with it (``retry-after``)."""
    told, _ = error_body("openai-responses", status, message)
    error = {**told["error"], **({"headers": dict(headers)} if headers else {})}
    error["code"] = error.get("code") or error["type"]
    return framing.refusal(status, error)


async def _respond(websocket: WebSocket, framing: MessageFraming, steps: Iterator[Step],
                   stopping: asyncio.Event) -> Counter:
    """Performs one response's steps; how it ended (``errors`` for a refusal: the socket
    stays open; ``disconnected`` when the server stops)."""
    pacer: Pacer | None = None
    for step in steps:
        match step:
            case Fail(status, message, headers):
                await websocket.send_text(_refusal(framing, status, message, headers))
                return "errors"
            case Open():
                pacer = Pacer(stopping)
            case Send(data):
                await websocket.send_text(data.decode())
            case (Wait() | Stall()) if pacer is not None:
                if await pacer.wait(step):
                    return "disconnected"
            case Cut(reason):
                await websocket.close(1011, reason)
                return "dropped"
            case End():
                return "completed"
            case _:
                raise AssertionError(f"{step!r} before the response began")
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
            received = await _next(websocket, emulator.idle_timeout)
            if received is None or received["type"] == "websocket.disconnect":
                return
            emulator.stats.add("requests")
            try:
                failed = refusal(fault)  # (a status answers every message, read or not)
                if failed is not None:
                    raise _Refused(failed.status, failed.message, dict(failed.headers))
                message = received.get("text")
                if message is None:
                    raise _Refused(400, "binary messages are not supported: send each event "
                                        "as a JSON text message")
                _journal(emulator, websocket, message)
                ask = Ask(endpoint, _request(message), fault, pace,
                          websocket.headers.get(CAPTURE_HEADER))
            except _Refused as refused:
                emulator.stats.add("errors")
                await websocket.send_text(_refusal(framing, refused.status, refused.message,
                                                   refused.headers))
                continue
            ending = await _respond(websocket, framing,
                                    plan(ask, emulator, SocketMessages(framing)), stopping)
            emulator.stats.add(ending)
            if ending not in ("completed", "errors"):
                return
    except WebSocketDisconnect:
        return
    finally:
        emulator.live.discard(stopping)
