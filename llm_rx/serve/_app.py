"""The emulator as an ASGI app: recorded captures on each provider's real endpoints.

The endpoint decides the format (``_endpoints``); the request's model names the capture
(``x-llm-rx-capture`` overrides), a scripted reply waiting in the queue answers before any
capture (``_replies.py`` chooses); what is sent and when, faults and pace included, is the
plan's (``_plan.py``), which ``_stream.ReplayResponse`` performs as the body. Errors are
answered in the endpoint's own error shape.

Every request goes to the journal (``_journal.py``, credentials redacted); ``GET`` answers
model lists and the ``/_llm_rx`` routes control the queue and the journal (``_models.py``).
A request a web page could have made (a foreign ``Host`` or ``Origin``) is refused before
any route sees it (``_guard.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute

from ._defaults import IDLE_TIMEOUT, JOURNAL_BUDGET, MAX_BODY
from ._endpoints import Endpoint, find_endpoint
from ._error_bodies import error_body
from ._faults import FAULT_HEADER, parse_fault, parse_pace
from ._guard import HostGuard
from ._index import CaptureIndex
from ._interactions import interaction_routes
from ._journal import JournalEntry
from ._limits import Refused as _Refused
from ._limits import read_body
from ._media import HttpBody, Pacing
from ._models import control_routes, model_list
from ._plan import Ask, Fail, Open, plan
from ._replies import Emulator
from ._stats import Stats
from ._stream import ReplayResponse

__all__ = ["CAPTURE_HEADER", "Emulator", "create_app"]

CAPTURE_HEADER = "x-llm-rx-capture"


def _refusal(endpoint: Endpoint | None, refused: _Refused, stats: Stats) -> Response:
    stats.add("errors")
    status, message = refused.status, refused.message
    if endpoint is None:
        return JSONResponse({"error": {"message": message, "type": "not_found"}}, status,
                            headers=refused.headers)
    body, headers = error_body(endpoint.provider, status, message)
    return JSONResponse(body, status, headers={**headers, **refused.headers})


def _parsed(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise _Refused(400, "the request body is not JSON") from None
    if not isinstance(body, dict):
        raise _Refused(400, "the request body is not a JSON object")
    return body


def _journal(emulator: Emulator, request: Request, raw: bytes | None) -> None:
    emulator.journal.add(JournalEntry(request.method, request.url.path, request.headers,
                                      query=request.query_params, body=raw))


async def _handle(request: Request) -> Response:
    emulator: Emulator = request.app.state.emulator
    emulator.stats.add("requests")
    endpoint = find_endpoint(request.url.path, request.query_params)
    try:
        if endpoint is None:
            raise _Refused(404, f"no provider endpoint at {request.url.path}")
        raw: bytes | None = None
        try:
            raw = await read_body(request, emulator.max_body)
        finally:
            _journal(emulator, request, raw)
        body = _parsed(raw)
        try:
            fault = parse_fault(request.headers.get(FAULT_HEADER) or emulator.fault)
            pace = parse_pace(request.headers, emulator.pacing.pace)
        except ValueError as error:
            raise _Refused(400, str(error)) from None
        ask = Ask(endpoint, body, fault, pace, request.headers.get(CAPTURE_HEADER),
                  emulator.replay_speed, request.headers.get("last-event-id"))
    except _Refused as refused:
        return _refusal(endpoint, refused, emulator.stats)
    steps = plan(ask, emulator, HttpBody(emulator.pacing.read_size))
    match next(steps):
        case Fail(status, message, headers):
            return _refusal(endpoint, _Refused(status, message, dict(headers)), emulator.stats)
        case Open() as opened:
            return ReplayResponse(opened, steps, stats=emulator.stats, live=emulator.live)
        case step:
            raise AssertionError(f"a plan begins with {step!r}")


def create_app(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    *,
    pace: float = 0.0,
    read_size: int = 16 * 1024,
    replay_speed: float | None = None,
    max_body: int = MAX_BODY,
    allow_hosts: Iterable[str] = (),
    keep_credentials: bool = False,
    journal_budget: int = JOURNAL_BUDGET,
    idle_timeout: float = IDLE_TIMEOUT,
) -> Starlette:
    """The emulator app over the captures under ``paths`` (default: the bundled ones);
    ``app.state.emulator`` is its :class:`Emulator` (its ``stats`` among others). With
    ``replay_speed``, a capture recorded with its timing is sent at its recorded pace times
    that speed (``--timing recorded``). A request body larger than ``max_body`` bytes is
    answered 413 in the endpoint's error shape.

    A request whose ``Host`` or ``Origin`` names neither a loopback name or address nor one
    of ``allow_hosts`` (give the host served; ``"*"``: any) is answered 403. The journal
    redacts credentials unless ``keep_credentials``, and keeps at most ``journal_budget``
    bytes of requests; a WebSocket idle for ``idle_timeout`` seconds is closed."""
    if paths is None:
        from ..data import bundled_folder

        paths = [bundled_folder()]
    from ._background import background_routes
    from ._websocket import responses_socket  # (it builds on this module)

    index = CaptureIndex.load(paths)
    app = Starlette(routes=[*control_routes(), *background_routes(), *interaction_routes(),
                            Route("/{path:path}", _handle, methods=["POST"]),
                            Route("/{path:path}", model_list, methods=["GET"]),
                            WebSocketRoute("/{path:path}", responses_socket)],
                    middleware=[Middleware(HostGuard, allowed=list(allow_hosts))])
    app.state.emulator = Emulator(index, Pacing(pace, read_size), max_body,
                                  keep_credentials=keep_credentials,
                                  journal_budget=journal_budget, idle_timeout=idle_timeout)
    app.state.emulator.replay_speed = replay_speed
    return app
