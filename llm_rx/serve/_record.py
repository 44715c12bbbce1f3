"""``llm-rx record``: a recording proxy in front of a provider, and the timing it writes.

Every request goes on to ``upstream`` as it came (credentials included: the provider needs
them); the reply comes back to the client unchanged and live, each read passed on as it
arrives (a compressed body in either direction keeps its ``Content-Encoding``: see
``_record_codings``). A streamed reply that succeeded is also written, once it ended, as a
capture ``DIR/<provider>/<name>.<ext>`` (the provider's own bytes, decoded) and
``<name>.timing.json``: the seconds from the request to the first read, and each read's
size and the seconds since the read before it. A non-stream reply is written as
``<name>.nonstream.json``, which ``llm-rx serve DIR`` serves too. ``<name>`` is the model
the request names (cut short, with a hash of the whole name, when it is too long for a
file name) and a number; a reply that cannot be written is said on stderr, and the client
still gets all of it. Nothing of the request is written: no header and no URL, so no
``Authorization``, ``x-api-key``, ``api-key``, ``x-goog-api-key`` or ``?key=`` ever reaches
a file.

``llm-rx serve DIR --timing recorded [--replay-speed X]`` sends a capture that has a timing
file read by read, each at its recorded time (divided by ``X``).

Like the emulator, the proxy answers only requests whose ``Host`` and ``Origin`` name a
loopback host or one allowed (``_guard.py``): a web page cannot use it.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import sys
import threading
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import httpx
import orjson
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..wire.providers import provider_id
from ..wire.registry import SNIFF_LIMIT, sniff
from ._endpoints import (
    Endpoint,
    capture_form,
    find_endpoint,
    requested_model,
    wants_stream,
)
from ._guard import HostGuard
from ._limits import Refused, read_body
from ._record_codings import Undecodable, Unpacker, decoded
from ._timing import Timing

__all__ = ["MAX_REQUEST", "Recorder", "create_record_app"]

# (not Content-Encoding: the bytes passed on are the ones it describes)
_HOP = frozenset({"host", "connection", "keep-alive", "transfer-encoding", "te", "trailer",
                  "upgrade", "content-length", "accept-encoding"})
_EXTENSIONS = {"sse": ".sse", "json-array": ".json", "chat": ".ndjson", "generate": ".ndjson",
               "eventstream": ".eventstream"}
_STREAM_TYPES = ("text/event-stream", "application/x-ndjson", "application/vnd.amazon.eventstream")
_MAX_RECORDED = 64 * 1024 * 1024  # (a longer reply is passed on, not written)
MAX_REQUEST = 16 * 1024 * 1024  # (a larger request body is refused with 413)
_MAX_STEM = 80  # (characters of the model kept in a file's name; a file name is 255 bytes)


def file_stem(model: str | None) -> str:
    """The start of a recording's file name: the model's letters, digits and ``._-``; a
    longer one is cut, with a hash of the whole name after it (two models stay apart)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", model or "reply").strip("-.") or "reply"
    if len(stem) <= _MAX_STEM:
        return stem
    digest = hashlib.sha256((model or "").encode()).hexdigest()[:12]
    return f"{stem[: _MAX_STEM - 13].rstrip('-.')}-{digest}"


class Recorder:
    """Writes the replies under ``out``, each under a new name."""

    def __init__(self, upstream: str, out: Path) -> None:
        self.upstream = upstream.rstrip("/")
        self.out = out
        self.saved: list[Path] = []
        self._lock = threading.Condition()
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:  # (made on the server's loop, at its first request)
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=30.0))
        return self._client

    async def aclose(self) -> None:
        """Closes the upstream connections (on the server's loop, as it stops)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def save(self, endpoint: Endpoint, model: str | None, streamed: bool, body: bytes,
             timing: Timing) -> Path | None:
        """Writes one reply (``None``: it could not be, as stderr says; the client's reply
        is never the worse for it)."""
        try:
            return self._write(endpoint, file_stem(model), streamed, body, timing)
        except OSError as error:
            sys.stderr.write(f"llm-rx record: a {endpoint.provider} reply was not written: "
                             f"{error}\n")
            return None

    def _write(self, endpoint: Endpoint, stem: str, streamed: bool, body: bytes,
               timing: Timing) -> Path:
        folder = self.out / endpoint.provider
        with self._lock:
            folder.mkdir(parents=True, exist_ok=True)
            number = 1
            while list(folder.glob(f"{stem}-{number:03d}.*")):
                number += 1
            name = f"{stem}-{number:03d}"
            if streamed:
                path = folder / (name + _EXTENSIONS.get(endpoint.form, ".txt"))
                (folder / f"{name}.timing.json").write_bytes(timing.to_json())
            else:
                path = folder / f"{name}.nonstream.json"
            path.write_bytes(body)
            self.saved.append(path)
            self._lock.notify_all()
        return path

    def wait(self, count: int, timeout: float) -> bool:
        """Whether ``count`` replies were written within ``timeout`` seconds (a reply is
        written once the client has had all of it)."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.saved) >= count, timeout)


class _Tape:
    """What of a reply is recorded: its bytes decoded, and per read that gave some, the
    seconds since the one before (the first: since the request) and their size. Nothing,
    once the body turns out to be in a coding not decoded, broken or over ``_MAX_RECORDED``
    (it is still passed on whole)."""

    def __init__(self, coding: str | None, asked: float) -> None:
        self.chunks: list[bytes] = []
        self.reads: list[tuple[float, int]] = []
        self._last = asked
        try:
            self._unpacker: Unpacker | None = Unpacker(coding, _MAX_RECORDED)
        except Undecodable:
            self._unpacker = None

    def add(self, chunk: bytes, now: float) -> None:
        if self._unpacker is None:
            return
        try:
            data = self._unpacker.feed(chunk)
        except Undecodable:
            self._unpacker, self.chunks = None, []
            return
        if data:  # (a read that decodes to nothing yet: its wait goes to the next one's)
            self.reads.append((now - self._last, len(data)))
            self.chunks.append(data)
            self._last = now

    def end(self) -> tuple[bytes, Timing] | None:
        """The reply's bytes and timing (``None``: nothing to write)."""
        if self._unpacker is None:
            return None
        try:
            tail = self._unpacker.flush()
        except Undecodable:
            return None
        if tail and self.reads:
            gap, size = self.reads[-1]
            self.reads[-1] = (gap, size + len(tail))
        if not self.reads:
            return None
        first, *rest = self.reads
        return b"".join(self.chunks) + tail, Timing(first[0], ((0.0, first[1]), *rest))


def _forwarded(request: Request) -> list[tuple[str, str]]:
    return [(name, value) for name, value in request.headers.items() if name not in _HOP]


def _where(endpoint: Endpoint | None, request: dict[str, Any], media_type: str,
           data: bytes) -> tuple[Endpoint, str | None, bool] | None:
    """Where a reply is written: the endpoint, the model it names and whether it streamed.
    A path no provider uses (a host's own prefix) is written when its reply is a stream of a
    provider that llm-rx tells from the bytes."""
    if endpoint is not None:
        return endpoint, requested_model(endpoint, request), wants_stream(endpoint, request)
    if not media_type.startswith(_STREAM_TYPES):
        return None
    provider = sniff(data[:SNIFF_LIMIT])
    if provider is None:
        return None
    known = provider_id(provider)
    model = request.get("model")
    return (Endpoint(known, capture_form(known, data)), model if isinstance(model, str) else None,
            True)


async def _proxy(request: Request) -> Response:
    recorder: Recorder = request.app.state.recorder
    try:  # (the emulator's own bounded read: refused early by its length, or when it stalls)
        body = await read_body(request, MAX_REQUEST)
    except Refused as refused:
        return JSONResponse({"error": {"message": refused.message,
                                       "type": "request_too_large" if refused.status == 413
                                       else "request_timeout"}},
                            refused.status, headers=refused.headers)
    try:  # (what the recorder reads of a compressed request: its decoded body)
        text = decoded(body, request.headers.get("content-encoding"), MAX_REQUEST)
        parsed: Any = orjson.loads(text) if text.strip() else {}
    except (Undecodable, orjson.JSONDecodeError):
        parsed = {}
    parsed = parsed if isinstance(parsed, dict) else {}
    endpoint = find_endpoint(request.url.path, request.query_params)
    query = f"?{request.url.query}" if request.url.query else ""
    outgoing = recorder.client.build_request(
        request.method, recorder.upstream + request.url.path + query,
        headers=[*_forwarded(request), ("accept-encoding", "identity")], content=body)
    loop = asyncio.get_running_loop()
    asked = loop.time()
    try:
        upstream = await recorder.client.send(outgoing, stream=True)
    except httpx.HTTPError as error:
        return JSONResponse({"error": {"message": f"upstream: {error}", "type": "bad_gateway"}},
                            502)
    headers = {name: value for name, value in upstream.headers.items() if name not in _HOP}

    async def relay() -> AsyncIterator[bytes]:
        tape = _Tape(upstream.headers.get("content-encoding"), asked)
        whole, sent = False, 0
        length = upstream.headers.get("content-length", "")
        try:
            async for chunk in upstream.aiter_raw():  # (the bytes as they came: passed on)
                tape.add(chunk, loop.time())
                sent += len(chunk)
                yield chunk
            whole = True
        finally:
            # (a body of known length is whole at its last byte: its client may close then,
            # before the upstream's end is read)
            whole = whole or (length.isdigit() and sent == int(length))
            await upstream.aclose()
            taped = tape.end() if whole and upstream.status_code == 200 else None
            if taped is not None:
                data, timing = taped
                where = _where(endpoint, parsed, upstream.headers.get("content-type", ""), data)
                if where is not None:
                    recorder.save(*where, data, timing)

    return StreamingResponse(relay(), status_code=upstream.status_code, headers=headers)


def create_record_app(upstream: str, out: str | Path, *,
                      allow_hosts: Iterable[str] = ()) -> Starlette:
    """The recording proxy (``app.state.recorder`` is its :class:`Recorder`); a request whose
    ``Host`` or ``Origin`` is neither loopback nor one of ``allow_hosts`` is answered 403."""
    app = Starlette(routes=[Route("/{path:path}", _proxy,
                                  methods=["GET", "POST", "PUT", "PATCH", "DELETE"])],
                    middleware=[Middleware(HostGuard, allowed=list(allow_hosts))])
    app.state.recorder = Recorder(upstream, Path(out))
    return app
