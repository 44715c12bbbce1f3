"""The Gemini Interactions API's own routes besides ``POST /v1beta/interactions`` (which the
endpoint table serves as every provider's create): what ``google-genai``'s interactions
client calls on an interaction it created::

    GET    /{version}/interactions/{id}                  the interaction (its steps)
    GET    /{version}/interactions/{id}?stream=true      its stream again, numbered events;
           &last_event_id=N                              from the event after N (a resume)
    POST   /{version}/interactions/{id}/cancel           the interaction, status "cancelled"
    DELETE /{version}/interactions/{id}                  forgotten

An interaction is remembered when the emulator answers its create (a capture or a scripted
reply, streamed or not) under the id its reply carries (a ``store: false`` reply's empty id
is not kept, as the API keeps none); at most ``KEPT`` are kept, the oldest forgotten first.
The stream of a retrieve is the one the create sent when its events were numbered (a
translated capture, a scripted reply: the ``gemini-interactions`` encoder numbers them
``event_id`` 1, 2, ...), else the reply written by that encoder (a recording without
``event_id``, a non-stream create): a resume sends the events after the one named (an id
that is no event of the stream is a 400), so a stream cut by a fault resumes where it was
cut. An unknown id is a 404 in Gemini's error shape.
Cancelling marks the interaction ``cancelled`` (the emulator's replies are sent whole, so
nothing is left running to stop); its retrieve then says so.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Final

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import LlmRxError
from ..native import to_native
from ..read.reassemble import reassemble
from ..response import Response as Reply
from ._endpoints import Endpoint
from ._error_bodies import error_body
from ._journal import JournalEntry
from ._queue import scripted_pieces

if TYPE_CHECKING:
    from ._replies import Emulator

__all__ = ["KEPT", "Interactions", "interaction_routes"]

#: How many interactions the emulator remembers for retrieval.
KEPT = 256
_PROVIDER: Final = "gemini-interactions"
_ENDPOINT = Endpoint(_PROVIDER, "sse")


class Interactions:
    """The interactions answered so far, by id (the newest ``KEPT``), and those cancelled."""

    def __init__(self) -> None:
        self._replies: OrderedDict[str, Reply] = OrderedDict()
        self._frames: dict[str, list[bytes]] = {}  # the stream sent, where it was numbered
        self._cancelled: set[str] = set()

    def remember(self, pieces: list[bytes], streamed: bool) -> None:
        """Keep the interaction whose reply (a stream's frames, or its body) is ``pieces``:
        a stream sent with numbered events is given again as it was sent (a resume names
        its events), any other is written again by the encoder."""
        try:
            reply = reassemble(b"".join(pieces), _PROVIDER)
        except LlmRxError:
            return  # (a reply that is none: nothing to retrieve)
        if not reply.id:
            return
        self._replies[reply.id] = reply
        self._replies.move_to_end(reply.id)
        self._cancelled.discard(reply.id)
        self._frames.pop(reply.id, None)
        if streamed and pieces and b'"event_id"' in pieces[0]:
            self._frames[reply.id] = pieces
        while len(self._replies) > KEPT:
            gone, _ = self._replies.popitem(last=False)
            self._cancelled.discard(gone)
            self._frames.pop(gone, None)

    def get(self, id: str) -> Reply | None:
        return self._replies.get(id)

    def frames(self, id: str, reply: Reply) -> list[bytes]:
        """The interaction's stream, its events numbered: as it was sent, or as the encoder
        writes it (then the same at each retrieve)."""
        sent = self._frames.get(id)
        if sent is None:
            sent = self._frames[id] = scripted_pieces(reply, _ENDPOINT, True, _PROVIDER)
        return sent

    def body(self, id: str) -> dict[str, object] | None:
        reply = self._replies.get(id)
        if reply is None:
            return None
        body = to_native(reply, _PROVIDER)
        if id in self._cancelled:
            body["status"] = "cancelled"
        return body

    def cancel(self, id: str) -> None:
        if id in self._replies:
            self._cancelled.add(id)

    def forget(self, id: str) -> bool:
        self._cancelled.discard(id)
        self._frames.pop(id, None)
        return self._replies.pop(id, None) is not None

    def clear(self) -> None:
        self._replies.clear()
        self._frames.clear()
        self._cancelled.clear()


def _emulator(request: Request) -> Emulator:
    emulator: Emulator = request.app.state.emulator
    emulator.stats.add("requests")
    emulator.journal.add(JournalEntry(request.method, request.url.path, request.headers,
                                      query=request.query_params))
    return emulator


def _missing(emulator: Emulator, message: str, status: int = 404) -> JSONResponse:
    emulator.stats.add("errors")
    body, headers = error_body(_PROVIDER, status, message)
    return JSONResponse(body, status, headers=headers)


def _after(pieces: list[bytes], last: str) -> list[bytes] | None:
    """The frames after the event whose ``event_id`` is ``last`` (``None``: no such event)."""
    for number, piece in enumerate(pieces):
        data = piece.partition(b"data: ")[2].strip()
        if data.startswith(b"{") and orjson.loads(data).get("event_id") == last:
            return pieces[number + 1:]
    return None


async def _retrieve(request: Request) -> Response:
    emulator = _emulator(request)
    id = request.path_params["id"]
    reply = emulator.interactions.get(id)
    if reply is None:
        return _missing(emulator, f"no interaction {id!r}")
    if request.query_params.get("stream", "").lower() != "true":
        return JSONResponse(emulator.interactions.body(id))
    pieces = emulator.interactions.frames(id, reply)
    last = request.query_params.get("last_event_id")
    if last:
        after = _after(pieces, last)
        if after is None:
            return _missing(emulator, f"no event {last!r} in interaction {id!r}", 400)
        pieces = after
    return Response(b"".join(pieces), media_type="text/event-stream",
                    headers={"cache-control": "no-cache"})


async def _cancel(request: Request) -> Response:
    emulator = _emulator(request)
    id = request.path_params["id"]
    emulator.interactions.cancel(id)
    body = emulator.interactions.body(id)
    if body is None:
        return _missing(emulator, f"no interaction {id!r}")
    return JSONResponse(body)


async def _delete(request: Request) -> Response:
    emulator = _emulator(request)
    id = request.path_params["id"]
    if not emulator.interactions.forget(id):
        return _missing(emulator, f"no interaction {id!r}")
    return JSONResponse({})


def interaction_routes() -> list[Route]:
    """The routes above (before the emulator's catch-all ones)."""
    path = "/{version:str}/interactions/{id:str}"
    return [Route(path, _retrieve, methods=["GET"]),
            Route(path, _delete, methods=["DELETE"]),
            Route(path + "/cancel", _cancel, methods=["POST"])]
