"""What the emulator answers with: its captures (framed for each endpoint, translated when
another provider's), its queue of scripted replies, and the choice of one reply for a request.

A scripted reply waiting in the queue (``_queue.py``) answers before any capture, in the
endpoint's wire; else the request names a capture (``x-llm-rx-capture``, or its model): its
recording for a stream (re-framed where the provider has two forms of one stream, translated
with ``llm_rx.translate`` when it is another provider's), ``to_native(reassemble(capture))``
for a non-stream body. A recorded non-stream body (a capture of the form ``json``) is sent
as it was recorded to its own provider's non-stream endpoint, as ``to_native`` of its reply
to another's, and as a stream written by the endpoint's encoder. A request that cannot be
answered so is ``Refused`` with its status.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import orjson

from ..encoders import ENCODERS as STREAM_ENCODERS
from ..errors import LlmRxError
from ..native import to_native
from ..read.reassemble import reassemble
from ..read.translate import translate
from ._defaults import IDLE_TIMEOUT, JOURNAL_BUDGET, MAX_BODY
from ._endpoints import Endpoint, reframe, same_body
from ._frames import split_frames
from ._index import Capture, CaptureIndex
from ._interactions import Interactions
from ._journal import Journal
from ._kept import Background
from ._limits import Refused
from ._media import Pacing
from ._queue import ScriptQueue, scripted_pieces
from ._stats import Stats
from ._timing import Timing, timing_of

__all__ = ["IDLE_TIMEOUT", "MAX_BODY", "Answer", "Emulator", "choose", "target"]



class Emulator:
    """What the app serves and how (``app.state.emulator``): the captures, the default pacing,
    the ``stats`` of what it sent, and the streams still being sent; the scripted replies
    waiting (``script``), the ``journal`` of requests (credentials redacted unless
    ``keep_credentials``; at most ``journal_budget`` bytes), the standing ``fault`` (the
    ``x-llm-rx-fault`` of every request that has none of its own), and the seconds a
    WebSocket may stay idle (``idle_timeout``)."""

    def __init__(self, index: CaptureIndex, pacing: Pacing, max_body: int = MAX_BODY, *,
                 keep_credentials: bool = False, journal_budget: int = JOURNAL_BUDGET,
                 idle_timeout: float = IDLE_TIMEOUT) -> None:
        self.index = index
        self.pacing = pacing
        self.max_body = max_body
        self.idle_timeout = idle_timeout
        self._keep_credentials = keep_credentials
        self.stats = Stats()
        self.live: set[asyncio.Event] = set()
        self._framed: dict[tuple[str, str], list[bytes]] = {}
        self._native: dict[tuple[str, str], bytes] = {}
        self.script = ScriptQueue()
        self.journal = Journal(budget=journal_budget, keep_credentials=keep_credentials)
        self.fault: str | None = None
        self.background = Background()  # (the Responses background replies, by id)
        self.interactions = Interactions()  # (the Interactions API's, for retrieval)
        self.replay_speed: float | None = None  # (a number: captures with a timing keep it)

    def reset(self) -> None:
        """Forgets the scripted replies, the journal, the standing fault and the interactions
        answered; the journal
        redacts credentials again unless the emulator was made to keep them."""
        self.script.clear()
        self.journal.clear()
        self.journal.keep_credentials = self._keep_credentials
        self.fault = None
        self.background.clear()
        self.interactions.clear()

    def stop_streams(self) -> None:
        """Ends every stream being sent (the server is stopping); call on the app's loop."""
        for gone in list(self.live):
            gone.set()

    def frames(self, capture: Capture, endpoint: Endpoint) -> list[bytes]:
        key = (capture.id, f"{endpoint.provider}/{endpoint.form}")
        if key not in self._framed:
            if capture.form == "json":  # a body: written by this endpoint's encoder, unless
                # it is its own provider's of another path (Ollama's generate and chat)
                other = capture.provider != endpoint.provider
                data = (_translated(capture, endpoint) if other or same_body(
                    endpoint, capture.provider, capture.data) else None)
            elif capture.provider == endpoint.provider:
                data = reframe(capture.provider, capture.data, capture.form, endpoint.form)
            else:  # another provider's capture, translated to this endpoint's stream
                data = _translated(capture, endpoint)
            if data is None:
                what = "non-stream body" if capture.form == "json" else f"{capture.form} stream"
                raise Refused(400, f"capture {capture.id!r} is a {what} of "
                              f"{capture.provider}; this endpoint serves {endpoint.form}")
            self._framed[key] = split_frames(data, endpoint.form)
        return self._framed[key]

    def native(self, capture: Capture, endpoint: Endpoint) -> bytes:
        if capture.form == "json" and same_body(endpoint, capture.provider, capture.data):
            return capture.data  # (a recorded body, to its own provider: as it came)
        if endpoint.form != "json" and capture.form != endpoint.form:
            self.frames(capture, endpoint)  # (refuses what it cannot serve)
        key = (capture.id, endpoint.provider)
        if key not in self._native:
            try:
                response = reassemble(capture.data, capture.provider)
            except LlmRxError as error:
                raise Refused(500, f"capture {capture.id!r} is no reply: {error}") from None
            self._native[key] = orjson.dumps(to_native(response, endpoint.provider))
        return self._native[key]

    def timing(self, capture: Capture) -> Timing | None:
        """The timing recorded beside ``capture`` (read when asked: a new recording counts)."""
        return timing_of(capture.path)


def target(endpoint: Endpoint) -> str | None:
    """The stream encoder for an endpoint's form (``None``: no translation to it)."""
    name = {("gemini", "json-array"): "gemini-json-array",
            ("ollama", "generate"): None}.get((endpoint.provider, endpoint.form),
                                              endpoint.provider)
    return name if name in STREAM_ENCODERS else None


def _translated(capture: Capture, endpoint: Endpoint) -> bytes | None:
    name = target(endpoint)
    if name is None:
        return None
    try:
        return translate(capture.data, name, capture.provider)
    except LlmRxError as error:
        raise Refused(500, f"capture {capture.id!r} is no reply: {error}") from None


@dataclass(frozen=True)
class Answer:
    """The reply chosen for one request: a stream's frames, or a non-stream body as one
    piece; the capture it came from (``None``: a scripted reply) and its recorded timing
    (only looked for when a replay speed is set)."""

    endpoint: Endpoint
    pieces: list[bytes]
    streamed: bool
    capture: Capture | None = None
    timing: Timing | None = None


def choose(emulator: Emulator, endpoint: Endpoint, name: str | None, streamed: bool,
           timed: bool = False) -> Answer:
    """The reply to a request (see `_chosen`); an interaction is remembered for its
    retrieval (``_interactions.py``)."""
    answer = _chosen(emulator, endpoint, name, streamed, timed)
    if endpoint.provider == "gemini-interactions":
        emulator.interactions.remember(answer.pieces, streamed)
    return answer


def _chosen(emulator: Emulator, endpoint: Endpoint, name: str | None, streamed: bool,
            timed: bool = False) -> Answer:
    """The reply to a request for ``name`` (the capture it names: its header, else its
    model): the queue's next reply first; ``timed``: with the capture's recorded timing.
    ``Refused`` when there is none to give."""
    reply = emulator.script.take()
    if reply is not None:
        try:
            pieces = scripted_pieces(reply, endpoint, streamed, target(endpoint))
        except (ValueError, LlmRxError) as error:
            raise Refused(400, f"scripted reply: {error}") from None
        return Answer(endpoint, pieces, streamed)
    capture = emulator.index.get(name) if name else None
    if capture is None:
        known = ", ".join(emulator.index.ids[:20])
        raise Refused(404, f"no scripted reply is queued and no capture is {name!r} (the "
                      f"model names one; known: {known})")
    if capture.provider != endpoint.provider and target(endpoint) is None:
        raise Refused(400, f"capture {capture.id!r} is a {capture.provider} stream; this "
                      f"endpoint serves {endpoint.provider} {endpoint.form} (no translation "
                      "to it)")
    if not streamed:
        return Answer(endpoint, [emulator.native(capture, endpoint)], False, capture)
    timing = emulator.timing(capture) if timed else None
    return Answer(endpoint, emulator.frames(capture, endpoint), True, capture, timing)
