"""``GET`` on the emulator: each provider's model list (``_model_lists``) and the
control plane's ``/_llm_rx/requests``; ``POST /_llm_rx/queue`` puts scripted replies in line.

The control endpoints are for clients in other languages and test runners::

    POST /_llm_rx/queue      {"replies": [<a Response's canonical JSON>, ...]}  -> {"queued": N}
    GET  /_llm_rx/requests   {"requests": [{"method", "path", "query", "headers", "json"}, ...]}
    POST /_llm_rx/fault      {"fault": "malformed"} (null: none): every request without its
                             own x-llm-rx-fault header gets it
    DELETE /_llm_rx/requests the journal, the queue and the standing fault cleared

A body sent to them must say ``Content-Type: application/json`` (else 415): a web form
cannot send that, and a page's ``fetch`` that does needs a CORS preflight, which no answer
here grants. (A foreign ``Host`` or ``Origin`` was refused before: ``_guard.py``.) The
journal they serve has its credentials redacted (``_redact.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
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
    emulator.journal.add(JournalEntry(request.method, request.url.path, request.headers,
                                      query=request.query_params))
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
    kind = {413: "request_too_large", 415: "unsupported_media_type"}.get(
        status, "invalid_request_error")
    return JSONResponse({"error": {"message": message, "type": kind}}, status, headers=headers)


async def _json(request: Request) -> Any:
    """The request's JSON body, read within ``--max-body`` (a ``Refused`` past it, or when
    it is not sent as ``application/json``)."""
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != "application/json":
        raise Refused(415, "a control route takes a JSON body sent with Content-Type: "
                      f"application/json (got {media or 'none'!r}); a web form cannot send it",
                      {"connection": "close"})
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
    entries = emulator.journal.entries()

    def pieces() -> Iterator[bytes]:  # (one entry in memory at a time, its body as it came)
        yield b'{"requests":['
        for number, entry in enumerate(entries):
            yield (b"," if number else b"") + entry.dumps()
        yield b"]}"

    return StreamingResponse(pieces(), media_type="application/json")


def control_routes() -> list[Route]:
    """The routes under ``/_llm_rx`` (ahead of the provider endpoints)."""
    return [Route(f"{CONTROL_PREFIX}/queue", _queue, methods=["POST"]),
            Route(f"{CONTROL_PREFIX}/fault", _fault, methods=["POST"]),
            Route(f"{CONTROL_PREFIX}/requests", _requests, methods=["GET", "DELETE"])]
