"""Replies a client can come back to: OpenAI Responses' background mode, and ``Last-Event-ID``
on every SSE endpoint.

```text
POST /v1/responses {"background": true, "stream": true}   the reply is kept, by its id
GET  /v1/responses/{id}?stream=true&starting_after=N       its events after sequence_number N
GET  /v1/responses/{id}                                    the reply's body (status: completed,
                                                           or cancelled once cancelled)
POST /v1/responses/{id}/cancel                             marks it cancelled (the journal
                                                           records the call), answers its body
any SSE stream, fault ``ids`` or a ``Last-Event-ID``       events numbered ``id: 1``, ``id: 2``…;
                                                           with ``Last-Event-ID: K``, those after K
```

A ``drop-after-events=N`` fault cuts any of these streams after N whole events, so a test
proves a client resumes; a resume's own request may carry one too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..native import to_native
from ..read.reassemble import reassemble
from ._endpoints import content_type, find_endpoint
from ._error_bodies import error_body
from ._faults import FAULT_HEADER, parse_fault, parse_pace
from ._journal import JournalEntry
from ._kept import RESPONSES, event_number, resumable, sequence_of
from ._media import HttpBody
from ._plan import Open, performed, refusal
from ._replies import Answer
from ._stream import ReplayResponse

if TYPE_CHECKING:
    from ._replies import Emulator

__all__ = ["background_routes"]


def _journal(emulator: Emulator, request: Request) -> None:
    emulator.stats.add("requests")
    emulator.journal.add(JournalEntry(request.method, request.url.path, request.headers,
                                      query=request.query_params))


def _missing(emulator: Emulator, reply_id: str) -> Response:
    emulator.stats.add("errors")
    body, headers = error_body(RESPONSES, 404, f"No response found with id '{reply_id}'.")
    return JSONResponse(body, 404, headers=headers)


def _body(pieces: list[bytes], cancelled: bool) -> dict[str, Any]:
    native = to_native(reassemble(b"".join(pieces), RESPONSES), RESPONSES)
    native["background"] = True
    if cancelled:
        native["status"] = "cancelled"
    return native


async def _retrieve(request: Request) -> Response:
    emulator: Emulator = request.app.state.emulator
    _journal(emulator, request)
    reply_id = request.path_params["reply_id"]
    pieces = emulator.background.get(reply_id)
    if pieces is None:
        return _missing(emulator, reply_id)
    if request.query_params.get("stream", "").lower() != "true":
        return JSONResponse(_body(pieces, emulator.background.cancelled(reply_id)))
    try:
        fault = parse_fault(request.headers.get(FAULT_HEADER) or emulator.fault)
        pace = parse_pace(request.headers, emulator.pacing.pace)
    except ValueError as error:
        emulator.stats.add("errors")
        body, headers = error_body(RESPONSES, 400, str(error))
        return JSONResponse(body, 400, headers=headers)
    refused = refusal(fault)
    if refused is not None:  # (a status fault: the continuation refused, as any request)
        emulator.stats.add("errors")
        body, headers = error_body(RESPONSES, refused.status, refused.message)
        return JSONResponse(body, refused.status, headers={**headers, **refused.headers})
    after = event_number(request.query_params.get("starting_after"))
    if "starting_after" not in request.query_params:
        after = -1
    rest = [piece for piece in pieces if sequence_of(piece) > after]
    endpoint = find_endpoint("/v1/responses", {})
    assert endpoint is not None

    answer, fault = resumable(Answer(endpoint, rest, True), {}, fault,
                              request.headers.get("last-event-id"), emulator.background)
    medium = HttpBody(emulator.pacing.read_size)
    steps = performed(medium.writes(answer, fault, pace, None), medium, fault)
    return ReplayResponse(Open(content_type(endpoint, True)), steps, stats=emulator.stats,
                          live=emulator.live)


async def _cancel(request: Request) -> Response:
    emulator: Emulator = request.app.state.emulator
    _journal(emulator, request)
    reply_id = request.path_params["reply_id"]
    if not emulator.background.cancel(reply_id):
        return _missing(emulator, reply_id)
    pieces = emulator.background.get(reply_id)
    assert pieces is not None
    return JSONResponse(_body(pieces, True))


def background_routes() -> list[Route]:
    """The routes of background replies (ahead of the provider endpoints)."""
    return [Route("/v1/responses/{reply_id}", _retrieve, methods=["GET"]),
            Route("/v1/responses/{reply_id}/cancel", _cancel, methods=["POST"])]

