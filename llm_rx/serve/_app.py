"""The emulator as an ASGI app: recorded captures on each provider's real endpoints.

The endpoint decides the format (``_endpoints``); the request's model names the
capture (``x-llm-rx-capture`` overrides); a streamed request gets the recording, re-framed
where the provider has two forms of one stream, or translated (``llm_rx.translate``) when it
is another provider's, and a non-stream request gets
``to_native(reassemble(capture))``. Errors are answered in the endpoint's own error shape.

A scripted reply waiting in the queue (``_queue.py``) answers before any capture, in the
endpoint's wire; every request goes to the journal (``_journal.py``); ``GET`` answers model
lists and the ``/_llm_rx`` routes control the queue and the journal (``_models.py``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute

from ..encoders import ENCODERS as STREAM_ENCODERS
from ..errors import LlmRxError
from ..native import to_native
from ..read.reassemble import reassemble
from ..read.translate import translate
from ..response import Response as Reply
from ._endpoints import (
    Endpoint,
    content_type,
    find_endpoint,
    reframe,
    requested_model,
    wants_stream,
)
from ._error_bodies import error_body, error_frame
from ._faults import FAULT_HEADER, MIDDLE, Fault, parse_fault, parse_pace
from ._frames import cut_after, split_frames
from ._index import Capture, CaptureIndex
from ._journal import Journal, JournalEntry
from ._limits import Refused as _Refused
from ._limits import read_body
from ._malformed import BROKEN_JSON, malformed_frame
from ._models import control_routes, model_list
from ._queue import ScriptQueue, scripted_pieces
from ._stats import Stats
from ._stream import Pacing, ReplayResponse
from ._timing import timing_of

__all__ = ["CAPTURE_HEADER", "Emulator", "create_app"]

CAPTURE_HEADER = "x-llm-rx-capture"

#: The largest request body read by default (``--max-body``); a larger one is answered 413.
MAX_BODY = 16 * 1024 * 1024
class Emulator:
    """What the app serves and how (``app.state.emulator``): the captures, the default pacing,
    the ``stats`` of what it sent, and the streams still being sent; the scripted replies
    waiting (``script``), the ``journal`` of requests, and the standing ``fault`` (the
    ``x-llm-rx-fault`` of every request that has none of its own)."""

    def __init__(self, index: CaptureIndex, pacing: Pacing, max_body: int = MAX_BODY) -> None:
        self.index = index
        self.pacing = pacing
        self.max_body = max_body
        self.stats = Stats()
        self.live: set[asyncio.Event] = set()
        self._framed: dict[tuple[str, str], list[bytes]] = {}
        self._native: dict[tuple[str, str], bytes] = {}
        self.script = ScriptQueue()
        self.journal = Journal()
        self.fault: str | None = None
        self.replay_speed: float | None = None  # (a number: captures with a timing keep it)

    def reset(self) -> None:
        """Forgets the scripted replies, the journal and the standing fault."""
        self.script.clear()
        self.journal.clear()
        self.fault = None

    def stop_streams(self) -> None:
        """Ends every stream being sent (the server is stopping); call on the app's loop."""
        for gone in list(self.live):
            gone.set()

    def frames(self, capture: Capture, endpoint: Endpoint) -> list[bytes]:
        key = (capture.id, f"{endpoint.provider}/{endpoint.form}")
        if key not in self._framed:
            if capture.provider == endpoint.provider:
                data = reframe(capture.provider, capture.data, capture.form, endpoint.form)
            else:  # another provider's capture, translated to this endpoint's stream
                data = _translated(capture, endpoint)
            if data is None:
                raise _Refused(400, f"capture {capture.id!r} is a {capture.form} stream of "
                               f"{capture.provider}; this endpoint serves {endpoint.form}")
            self._framed[key] = split_frames(data, endpoint.form)
        return self._framed[key]

    def native(self, capture: Capture, endpoint: Endpoint) -> bytes:
        if endpoint.form != "json" and capture.form != endpoint.form:
            self.frames(capture, endpoint)  # (refuses what it cannot serve)
        key = (capture.id, endpoint.provider)
        if key not in self._native:
            try:
                response = reassemble(capture.data, capture.provider)
            except LlmRxError as error:
                raise _Refused(500, f"capture {capture.id!r} is no reply: {error}") from None
            self._native[key] = orjson.dumps(to_native(response, endpoint.provider))
        return self._native[key]


def _target(endpoint: Endpoint) -> str | None:
    """The stream encoder for an endpoint's form (``None``: no translation to it)."""
    target = {("gemini", "json-array"): "gemini-json-array",
              ("ollama", "generate"): None}.get((endpoint.provider, endpoint.form),
                                                endpoint.provider)
    return target if target in STREAM_ENCODERS else None


def _translated(capture: Capture, endpoint: Endpoint) -> bytes | None:
    target = _target(endpoint)
    if target is None:
        return None
    try:
        return translate(capture.data, target, capture.provider)
    except LlmRxError as error:
        raise _Refused(500, f"capture {capture.id!r} is no reply: {error}") from None


def _refusal(endpoint: Endpoint | None, refused: _Refused, stats: Stats) -> Response:
    stats.add("errors")
    status, message = refused.status, refused.message
    if endpoint is None:
        return JSONResponse({"error": {"message": message, "type": "not_found"}}, status,
                            headers=refused.headers)
    body, headers = error_body(endpoint.provider, status, message)
    return JSONResponse(body, status, headers={**headers, **refused.headers})


async def _body(request: Request, limit: int) -> dict[str, Any]:
    raw = await read_body(request, limit)
    if not raw.strip():
        return {}
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise _Refused(400, "the request body is not JSON") from None
    if not isinstance(body, dict):
        raise _Refused(400, "the request body is not a JSON object")
    return body


def _capture(emulator: Emulator, request: Request, endpoint: Endpoint,
             body: dict[str, Any]) -> Capture:
    name = request.headers.get(CAPTURE_HEADER) or requested_model(endpoint, body)
    capture = emulator.index.get(name) if name else None
    if capture is None:
        known = ", ".join(emulator.index.ids[:20])
        raise _Refused(404, f"no scripted reply is queued and no capture is {name!r} (the "
                       f"model names one; known: {known})")
    if capture.provider != endpoint.provider and _target(endpoint) is None:
        raise _Refused(400, f"capture {capture.id!r} is a {capture.provider} stream; this "
                       f"endpoint serves {endpoint.provider} {endpoint.form} (no translation "
                       "to it)")
    return capture


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


def _scripted(reply: Reply, endpoint: Endpoint, streamed: bool, fault: Fault) -> list[bytes]:
    try:
        pieces = scripted_pieces(reply, endpoint, streamed, _target(endpoint))
    except (ValueError, LlmRxError) as error:
        raise _Refused(400, f"scripted reply: {error}") from None
    if not streamed:
        return [BROKEN_JSON] if fault.malformed is not None else pieces
    return _faulted(pieces, endpoint, fault)


def _recorded(emulator: Emulator, capture: Capture, endpoint: Endpoint,
              fault: Fault) -> tuple[list[bytes], Pacing] | None:
    """A capture sent read by read at its recorded times (``--timing recorded``), when it has
    a timing and goes out as it was recorded (same wire, no fault that changes frames)."""
    speed = emulator.replay_speed
    if (speed is None or capture.provider != endpoint.provider or capture.form != endpoint.form
            or fault.error_after is not None or fault.malformed is not None):
        return None
    timing = timing_of(capture.path)
    pieces = timing.split(capture.data) if timing is not None else None
    if timing is None or pieces is None:
        return None
    return pieces, Pacing(0.0, emulator.pacing.read_size, timing.schedule(speed))


def _journal(emulator: Emulator, request: Request, body: dict[str, Any] | None) -> None:
    emulator.journal.add(JournalEntry(request.method, request.url.path, dict(request.headers),
                                      body, dict(request.query_params)))


async def _handle(request: Request) -> Response:
    emulator: Emulator = request.app.state.emulator
    emulator.stats.add("requests")
    endpoint = find_endpoint(request.url.path, request.query_params)
    try:
        if endpoint is None:
            raise _Refused(404, f"no provider endpoint at {request.url.path}")
        body: dict[str, Any] | None = None
        try:
            body = await _body(request, emulator.max_body)
        finally:
            _journal(emulator, request, body)
        try:
            fault = parse_fault(request.headers.get(FAULT_HEADER) or emulator.fault)
            pace = parse_pace(request.headers, emulator.pacing.pace)
        except ValueError as error:
            raise _Refused(400, str(error)) from None
        if fault.status is not None:
            wait = {"retry-after": f"{fault.retry_after:g}"} if fault.status in (429, 503) else {}
            raise _Refused(fault.status, f"fault injected: status={fault.status}", wait)
        streamed = wants_stream(endpoint, body)
        pacing = Pacing(pace, emulator.pacing.read_size)
        reply = emulator.script.take()
        if reply is not None:
            pieces = _scripted(reply, endpoint, streamed, fault)
        elif streamed:
            capture = _capture(emulator, request, endpoint, body)
            pieces = _faulted(emulator.frames(capture, endpoint), endpoint, fault)
            pieces, pacing = _recorded(emulator, capture, endpoint, fault) or (pieces, pacing)
        else:
            capture = _capture(emulator, request, endpoint, body)
            pieces = [emulator.native(capture, endpoint)]
            pieces = [BROKEN_JSON] if fault.malformed is not None else pieces
        headers = {} if streamed else {"content-length": str(len(pieces[0]))}
    except _Refused as refused:
        return _refusal(endpoint, refused, emulator.stats)
    return ReplayResponse(pieces, media_type=content_type(endpoint, streamed), pacing=pacing,
                          fault=fault, stats=emulator.stats, live=emulator.live,
                          headers=headers)


def create_app(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    *,
    pace: float = 0.0,
    read_size: int = 16 * 1024,
    replay_speed: float | None = None,
    max_body: int = MAX_BODY,
) -> Starlette:
    """The emulator app over the captures under ``paths`` (default: the bundled ones);
    ``app.state.emulator`` is its :class:`Emulator` (its ``stats`` among others). With
    ``replay_speed``, a capture recorded with its timing is sent at its recorded pace times
    that speed (``--timing recorded``). A request body larger than ``max_body`` bytes is
    answered 413 in the endpoint's error shape."""
    if paths is None:
        from ..data import bundled_folder

        paths = [bundled_folder()]
    from ._websocket import responses_socket  # (it builds on this module)

    index = CaptureIndex.load(paths)
    app = Starlette(routes=[*control_routes(),
                            Route("/{path:path}", _handle, methods=["POST"]),
                            Route("/{path:path}", model_list, methods=["GET"]),
                            WebSocketRoute("/{path:path}", responses_socket)])
    app.state.emulator = Emulator(index, Pacing(pace, read_size), max_body)
    app.state.emulator.replay_speed = replay_speed
    return app
