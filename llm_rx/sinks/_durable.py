"""``to_durable_stream()``: append a reply to a Durable Streams server as it passes.

With ``to="events"`` the stream is a JSON stream (``application/json``): each event one item
``{"e": event}``,
heartbeats ``{"h": null}``, and the end ``{"end": {"error": ...}}`` — the same fields as the
Redis layout (`llm_rx.sources._redis_entries`), so a reader ends with the producer's error.
Each read of the reply is one append (``POST``) made by the protocol's idempotent producer
(``Producer-Id``, ``Producer-Epoch``, ``Producer-Seq``): a retried append is written once,
and a producer started with a higher epoch fences off the old one. The append that carries
the end closes the stream (``Stream-Closed: true``).

What to send and how to read the answer is decided once, in `_Producer` (sans-I/O); the sync
(``httpx.Client``) and async (``httpx.AsyncClient``) targets only move the bytes.
``httpx`` is imported only when no client is given.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import orjson
from reactivex import Observable

from ..encoders import MEDIA_TYPES, make_encoder
from ..errors import IncompleteStreamError, LlmRxError
from ..events import Event
from ..sources._redis_entries import END_FIELD
from ._appends import Entries, EventEntries, WritingTap
from ._keepalive import KEEPALIVE

__all__ = ["DEFAULT_RETRIES", "DurableAppendError", "to_durable_stream"]

#: Attempts at one append whose connection failed (or got a 5xx) before the reply fails.
DEFAULT_RETRIES = 5
_BACKOFF = 0.05  # seconds before the second attempt, doubled each time after
_JSON = "application/json"


class DurableAppendError(Exception):
    """The server refused an append (fenced off by a newer epoch, a sequence gap, the stream
    closed or of another type); ``status`` is its HTTP status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _Events(EventEntries):
    """``to="events"``: a JSON stream of the Redis layout's entries as items."""

    content_type = _JSON

    def body(self, entries: Entries) -> bytes:
        return orjson.dumps([{key: orjson.Fragment(value or b"null")
                              for key, value in fields.items()} for fields in entries])

    def closing(self, entries: Entries) -> bool:
        return bool(entries) and END_FIELD in entries[-1]


class _Last(bytes):
    """A wire's last bytes: the append that carries them closes the stream."""


class _Wire:
    """``to=<wire>``: the bytes ``to``'s encoder writes, as its clients read them (its
    media type); heartbeats are SSE comments (none for a wire without comments)."""

    def __init__(self, to: str) -> None:
        self._encoder = make_encoder(to)
        self.content_type = MEDIA_TYPES[to]

    def entries(self, events: list[Event]) -> Entries:
        data = self._encoder.encode(events)
        return [data] if data else []

    def end(self, error: Exception | None) -> Entries:
        typed = error if error is None or isinstance(error, LlmRxError) else (
            IncompleteStreamError(f"the events failed: {type(error).__name__}: {error}"))
        finished = self._encoder.finished and error is None
        return [_Last(b"" if finished else self._encoder.finish(typed))]

    def heartbeat(self) -> Entries:
        return [KEEPALIVE] if self.content_type == "text/event-stream" else []

    def body(self, entries: Entries) -> bytes:
        return b"".join(entries)

    def closing(self, entries: Entries) -> bool:
        return bool(entries) and isinstance(entries[-1], _Last)


class _Producer:
    """The idempotent producer's state: its id, epoch and next sequence number, and whether
    the stream was created; ``plan`` gives a batch's request, ``answer`` judges a reply."""

    def __init__(self, url: str, producer_id: str, epoch: int, ttl: int | None,
                 layout: _Events | _Wire) -> None:
        self.url, self.producer_id, self.epoch, self.ttl = url, producer_id, epoch, ttl
        self.layout = layout
        self.seq = 0
        self.created = False

    def create(self) -> tuple[str, dict[str, str]]:
        headers = {"Content-Type": self.layout.content_type}
        if self.ttl is not None:
            headers["Stream-TTL"] = str(self.ttl)
        return self.url, headers

    def created_by(self, status: int, text: str) -> None:
        if status not in (200, 201):
            raise DurableAppendError(f"the stream could not be created: HTTP {status} {text}",
                                     status)
        self.created = True

    def plan(self, entries: Entries) -> tuple[dict[str, str], bytes]:
        headers = {"Content-Type": self.layout.content_type, "Producer-Id": self.producer_id,
                   "Producer-Epoch": str(self.epoch), "Producer-Seq": str(self.seq)}
        if self.layout.closing(entries):
            headers["Stream-Closed"] = "true"
        return headers, self.layout.body(entries)

    def answer(self, status: int, headers: Any, text: str) -> bool:
        """Whether the append is written (``True``; a duplicate too), to try again
        (``False``: a 5xx), or refused (``DurableAppendError``)."""
        if status in (200, 204):
            self.seq += 1
            return True
        if status >= 500:
            return False
        if status == 403:
            why = f"fenced off by a producer with epoch {headers.get('Producer-Epoch')}"
        elif status == 409 and headers.get("Producer-Expected-Seq") is not None:
            why = (f"a sequence gap (the server expected {headers.get('Producer-Expected-Seq')}, "
                   f"got {headers.get('Producer-Seq', self.seq)})")
        elif status == 409 and headers.get("Stream-Closed") == "true":
            why = "the stream is closed"
        else:
            why = f"HTTP {status}"
        raise DurableAppendError(f"append {self.seq} of producer {self.producer_id!r} (epoch "
                                 f"{self.epoch}) refused: {why}: {text[:200]}", status)


def _transient(error: Exception) -> bool:
    return type(error).__module__.startswith(("httpx", "httpcore"))


class _Layout:
    """A target's layout is its producer's."""

    producer: _Producer

    def entries(self, events: list[Event]) -> Entries:
        return self.producer.layout.entries(events)

    def end(self, error: Exception | None) -> Entries:
        return self.producer.layout.end(error)

    def heartbeat(self) -> Entries:
        return self.producer.layout.heartbeat()


class _SyncTarget(_Layout):
    """An ``httpx.Client`` sends each batch; a failed connection is tried again. A client
    the target ``owns`` is closed after the last append (the end) or a failed one."""

    def __init__(self, client: Any, producer: _Producer, retries: int, owns: bool) -> None:
        self.client, self.producer, self.retries, self.owns = client, producer, retries, owns
        self.name = f"the Durable Stream {producer.url}"
        self._lock = threading.Lock()

    def is_async(self) -> bool:
        return False

    def send(self, entries: Entries) -> None:
        last = self.producer.layout.closing(entries)
        try:
            self._send(entries)
        except BaseException:
            last = True
            raise
        finally:
            if last and self.owns:
                self.client.close()

    def _send(self, entries: Entries) -> None:
        if not entries:  # (a read the wire writes nothing for: no append)
            return
        with self._lock:
            producer = self.producer
            if not producer.created:
                url, headers = producer.create()
                response = self._attempt(lambda: self.client.put(url, headers=headers))
                producer.created_by(response.status_code, response.text)
            headers, body = producer.plan(entries)
            for attempt in range(self.retries):
                response = self._attempt(
                    lambda: self.client.post(producer.url, headers=headers, content=body),
                    last=attempt == self.retries - 1)
                if response is not None and producer.answer(
                        response.status_code, response.headers, response.text):
                    return
                time.sleep(_BACKOFF * 2 ** attempt)
            raise DurableAppendError(f"append {producer.seq} failed {self.retries} times", 503)

    def _attempt(self, call: Callable[[], Any], last: bool = True) -> Any:
        try:
            return call()
        except Exception as error:
            if last or not _transient(error):
                raise
            return None


class _AsyncTarget(_Layout):
    """An ``httpx.AsyncClient`` sends each batch (the same plan as `_SyncTarget`)."""

    def __init__(self, client: Any, producer: _Producer, retries: int) -> None:
        self.client, self.producer, self.retries = client, producer, retries
        self.name = f"the Durable Stream {producer.url}"

    def is_async(self) -> bool:
        return True

    async def send(self, entries: Entries) -> None:
        if not entries:  # (a read the wire writes nothing for: no append)
            return
        producer = self.producer
        if not producer.created:
            url, headers = producer.create()
            response = await self.client.put(url, headers=headers)
            producer.created_by(response.status_code, response.text)
        headers, body = producer.plan(entries)
        for attempt in range(self.retries):
            try:
                response = await self.client.post(producer.url, headers=headers, content=body)
            except Exception as error:
                if attempt == self.retries - 1 or not _transient(error):
                    raise
            else:
                if producer.answer(response.status_code, response.headers, response.text):
                    return
            await asyncio.sleep(_BACKOFF * 2 ** attempt)
        raise DurableAppendError(f"append {producer.seq} failed {self.retries} times", 503)


def _default_client() -> Any:
    try:
        import httpx  # (the optional extra: only when no client is given)
    except ImportError as missing:
        from .._extras import install_hint

        raise ImportError(f"to_durable_stream() needs httpx: {install_hint('durable')}") \
            from missing
    return httpx.Client(timeout=30.0)  # (one per subscription, closed at its end)


def to_durable_stream(
    events: Observable[Event],
    url: str,
    *,
    to: str = "events",
    client: Any = None,
    producer_id: str | None = None,
    epoch: int = 0,
    ttl: int | None = None,
    heartbeat: float | None = 5.0,
    retries: int = DEFAULT_RETRIES,
) -> Observable[Event]:
    """``events``, appended to the Durable Stream at ``url`` as they pass (cold: each
    subscription writes the reply once; the events go on unchanged).

    ```text
    events:             -S-t-t-M-|              -S-t-#
    to_durable_stream:  -S-t-t-M-|              -S-t-#
    stream:              [S t] [t M] [end] closed   [S t] [end(error)] closed
    ```

    The stream is created (``PUT``, ``application/json``) on the first append. Each read
    of the reply is one append by the idempotent producer ``producer_id`` (a random one by
    default) at ``epoch``; an append whose connection fails (or that gets a 5xx) is sent
    again with the same sequence number, ``retries`` times at most, and the server keeps it
    once. A producer restarted for the same reply with the same id and a higher ``epoch``
    fences off the old one: its next append fails with a ``SinkWriteError``. The end — the
    source's completion, its error (a cut reply), or a dispose (``cancelled``) — is the last
    append, which closes the stream. A heartbeat item every ``heartbeat`` seconds while the
    reply is silent tells readers the producer is alive (``None``: none).

    ``client`` is an ``httpx.Client`` (writes each read before its events pass on) or an
    ``httpx.AsyncClient`` (writes from a task on the running loop; the end passes on once
    everything is written); by default a new ``httpx.Client`` per subscription, closed at
    its end.

    ``to`` is the layout: ``"events"`` (llm-rx's JSON items, lossless, error included), or
    a key of ``llm_rx.encoders.ENCODERS`` — a provider's wire, ``vercel-ui``, ``ag-ui`` — whose
    own bytes the stream then holds, with its media type, for that wire's clients to read
    (``from_durable_stream(url, provider=to)`` for a provider's wire); a cut reply ends with
    the wire's own error frame, and heartbeats are SSE comments (none on an NDJSON wire).

    Args:
        events: The reply's events.
        url: The stream's URL on a Durable Streams server.
        to: The layout: ``"events"`` or a wire (a key of ``llm_rx.encoders.ENCODERS``).
        client: An ``httpx.Client`` or ``httpx.AsyncClient``; ``None``: a new ``httpx.Client``.
        producer_id: The idempotent producer's id; ``None``: a random one per subscription.
        epoch: The producer's epoch: higher than the old one's to fence it off.
        ttl: Seconds the server keeps the stream (``Stream-TTL``); ``None``: its default.
        heartbeat: Seconds between heartbeat items; ``None``: none.
        retries: Attempts at one append before the reply fails.

    Returns:
        The events, unchanged, each read appended before it passes on (a sync client).
    """
    if to != "events":
        make_encoder(to)  # (an unknown target is refused here, not when the reply starts)
    if epoch < 0 or retries < 1:
        raise ValueError("epoch must be >= 0 and retries >= 1")
    if heartbeat is not None and heartbeat <= 0:
        raise ValueError(f"heartbeat must be positive or None, not {heartbeat!r}")
    is_async = inspect.iscoroutinefunction(getattr(client, "post", None))

    def target() -> _SyncTarget | _AsyncTarget:  # (a fresh producer, sequence 0, per
        layout = _Events() if to == "events" else _Wire(to)  # subscription)
        producer = _Producer(url, producer_id or uuid.uuid4().hex, epoch, ttl, layout)
        if is_async:
            return _AsyncTarget(client, producer, retries)
        return _SyncTarget(client or _default_client(), producer, retries, client is None)

    return WritingTap(events, target, heartbeat)
