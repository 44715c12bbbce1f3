"""``GET`` on the emulator: each provider's model list (``_model_lists``) and the
control plane's ``/_llm_rx/requests``; ``POST /_llm_rx/queue`` puts scripted replies in line.

The control endpoints are for clients in other languages and test runners::

    POST /_llm_rx/queue      {"replies": [<a Response's canonical JSON>, ...]}  -> {"queued": N}
    GET  /_llm_rx/requests   {"requests": [{"method", "path", "query", "headers", "json"}, ...]}
    POST /_llm_rx/fault      {"fault": "malformed"} (null: none): every request without its
                             own x-llm-rx-fault header gets it
    DELETE /_llm_rx/requests the journal, the queue and the standing fault cleared
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..response import Response as Reply
from ._error_bodies import error_body
from ._faults import parse_fault
from ._journal import JournalEntry
from ._limits import Refused, read_body
from ._model_lists import find_model_list, model_body, model_list_body

if TYPE_CHECKING:
    from ._app import Emulator

__all__ = ["CONTROL_PREFIX", "control_routes", "model_list"]

CONTROL_PREFIX = "/_llm_rx"


def _emulator(request: Request) -> Emulator:
    emulator: Emulator = request.app.state.emulator
    return emulator


async def model_list(request: Request) -> Response:
    """A provider's model list (or one model of it), in that provider's shape."""
    emulator = _emulator(request)
    emulator.stats.add("requests")
    emulator.journal.add(JournalEntry(request.method, request.url.path, dict(request.headers),
                                      None, dict(request.query_params)))
    found = find_model_list(request.url.path, request.headers)
    if found is None:
        emulator.stats.add("errors")
        return JSONResponse({"error": {"message": f"no model list at {request.url.path}",
                                       "type": "not_found"}}, 404)
    provider, model = found
    ids = emulator.index.ids
    if model is None:
        return JSONResponse(model_list_body(provider, ids))
    if emulator.index.get(model) is None:
        emulator.stats.add("errors")
        body, headers = error_body(provider, 404, f"no model {model!r}")
        return JSONResponse(body, 404, headers=headers)
    return JSONResponse(model_body(provider, emulator.index.get(model).id))  # type: ignore[union-attr]


def _problem(message: str, status: int = 400, headers: dict[str, str] | None = None
             ) -> JSONResponse:
    kind = "request_too_large" if status == 413 else "invalid_request_error"
    return JSONResponse({"error": {"message": message, "type": kind}}, status, headers=headers)


async def _json(request: Request) -> Any:
    """The request's JSON body, read within ``--max-body`` (a ``Refused`` past it)."""
    try:
        return orjson.loads(await read_body(request, _emulator(request).max_body))
    except orjson.JSONDecodeError:
        raise Refused(400, "the body is not JSON") from None


async def _queue(request: Request) -> Response:
    try:
        body = await _json(request)
    except Refused as refused:
        return _problem(refused.message, refused.status, refused.headers)
    replies = body.get("replies") if isinstance(body, dict) else None
    if not isinstance(replies, list):
        return _problem('the body is {"replies": [<a Response\'s canonical JSON>, ...]}')
    try:
        parsed = [Reply.model_validate(item) for item in replies]
    except ValidationError as error:
        return _problem(f"a reply is no canonical Response: {error}")
    emulator = _emulator(request)
    try:
        emulator.script.put(parsed)
    except OverflowError as error:
        return JSONResponse({"error": {"message": str(error), "type": "overflow"}}, 413)
    return JSONResponse({"queued": len(parsed), "waiting": len(emulator.script)})


async def _fault(request: Request) -> Response:
    try:
        body = await _json(request)
    except Refused as refused:
        return _problem(refused.message, refused.status, refused.headers)
    spec = body.get("fault", ...) if isinstance(body, dict) else ...
    if spec is not None and not isinstance(spec, str):
        return _problem('the body is {"fault": "<an x-llm-rx-fault value>"} or {"fault": null}')
    try:
        parse_fault(spec)
    except ValueError as error:
        return _problem(str(error))
    _emulator(request).fault = spec
    return JSONResponse({"fault": spec})


async def _requests(request: Request) -> Response:
    emulator = _emulator(request)
    if request.method == "DELETE":
        emulator.reset()
        return JSONResponse({"cleared": True})
    return JSONResponse({"requests": [entry.to_dict() for entry in emulator.journal.entries()]})


def control_routes() -> list[Route]:
    """The routes under ``/_llm_rx`` (ahead of the provider endpoints)."""
    return [Route(f"{CONTROL_PREFIX}/queue", _queue, methods=["POST"]),
            Route(f"{CONTROL_PREFIX}/fault", _fault, methods=["POST"]),
            Route(f"{CONTROL_PREFIX}/requests", _requests, methods=["GET", "DELETE"])]
