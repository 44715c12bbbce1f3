"""``from_durable_stream()``: read a reply that ``sinks.to_durable_stream`` appends (or
appended) to a Durable Streams server, from any offset, catching up and then following live.

Offsets are the server's opaque strings (``Stream-Next-Offset``): ``"-1"`` is the stream's
start, ``"now"`` its tail. One GET asks for what follows the last offset (``live=long-poll``
once caught up: the server answers when something is appended, or after its own timeout);
a response is a JSON array read whole, so a dropped connection leaves the offset where it was
and the next GET takes the same items again: none lost, none doubled. What to ask and how to
read the answer is `_Follower` (sans-I/O); the sync (``httpx.Client``) and async
(``httpx.AsyncClient``) loops only move bytes. ``httpx`` is imported only when no client
is given.
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Literal, NamedTuple, overload

import orjson
import reactivex
from reactivex import Observable, abc
from reactivex.scheduler import CurrentThreadScheduler

from ..errors import IncompleteStreamError, LlmRxError, StreamTimeoutError, WireFormatError
from ..events import Event
from ..wire.providers import ProviderName
from ..wire.resume import Cursor
from ._async import read_async
from ._redis_entries import Ended, read_item
from ._source import EventSource, Reading, read_through

__all__ = ["DEFAULT_IDLE_TIMEOUT", "DEFAULT_RETRIES", "DurableEntry", "from_durable_stream"]

#: Seconds without any new item (an event or a producer's heartbeat) after which a reader
#: gives the producer up for dead and ends the reply as incomplete (a cut reply).
DEFAULT_IDLE_TIMEOUT = 30.0
#: Failed GETs in a row (a dropped connection, a 5xx) before the reply ends as incomplete.
DEFAULT_RETRIES = 5
_BACKOFF = 0.05  # seconds before a GET tried again, doubled each time (at most 1 s)


class DurableEntry(NamedTuple):
    """An event with the position after it (pass it as ``offset`` to read on after it): the
    server's offset after its answer, or, inside an answer, ``"OFFSET:N"`` (the Nth item
    after the server's offset ``OFFSET``) — a plain string either way."""

    offset: str
    event: Event

    @property
    def cursor(self) -> Cursor:
        """The offset as the `Cursor` every resumable source takes (its ``last_event_id``)."""
        return Cursor(last_event_id=self.offset)


class _Follower:
    """Where one reading is (the offset after the last items it took), and until when it
    waits for the next item."""

    def __init__(self, url: str, offset: str, live: bool, timeout: float, retries: int) -> None:
        base, _, skip = offset.partition(":")  # (a position inside an answer: "OFFSET:N")
        self.url, self.offset, self.live = url, base, live
        self.skip = int(skip) if skip.isdigit() else 0
        self.timeout, self.retries = timeout, retries
        self.deadline = time.monotonic() + timeout
        self.caught_up = False
        self.failures = 0
        self.cursor: str | None = None

    def request(self) -> tuple[dict[str, str], float]:
        """The next GET's query and its timeout (seconds); a ``StreamTimeoutError`` once
        nothing came for ``timeout`` seconds."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise StreamTimeoutError(
                f"nothing new in Durable Stream {self.url} for {self.timeout:g} s after offset "
                f"{self.offset} (the producer is gone)"
            )
        params = {"offset": self.offset}
        if self.live and self.caught_up:
            params["live"] = "long-poll"
            if self.cursor is not None:
                params["cursor"] = self.cursor
        return params, left

    def failed(self, why: str, cause: Exception | None = None) -> float:
        """A GET that failed: the seconds to wait before the next, or the reply's end."""
        self.failures += 1
        if self.failures >= self.retries:
            failure = IncompleteStreamError(
                f"Durable Stream {self.url} could not be read after offset {self.offset} "
                f"({why}, {self.failures} times)")
            if cause is not None:
                failure.__cause__ = cause
            raise failure
        return float(min(1.0, _BACKOFF * 2.0 ** (self.failures - 1)))

    def take(self, status: int, headers: Any, body: bytes
             ) -> tuple[list[DurableEntry], bool, float]:
        """The events of one answer, whether the reply ended (an end with an error raises
        it, after ``events`` were emitted: see `_emit_then`), and the seconds to wait before
        the next GET."""
        wait = self.judged(status, body)
        if wait is not None:
            return [], False, wait
        items = self._items(body) if status == 200 else []
        after = headers.get("Stream-Next-Offset") or self.offset
        events: list[DurableEntry] = []
        for index in range(self.skip, len(items)):
            read = read_item(f"item {index} after offset {self.offset} of {self.url}",
                             items[index])
            if isinstance(read, Ended):
                raise _Done(events, read.error)
            if read is not None:
                last = index == len(items) - 1
                events.append(DurableEntry(after if last else f"{self.offset}:{index + 1}",
                                           read))
        if len(items) > self.skip:
            self.deadline = time.monotonic() + self.timeout
        self.skip = 0 if items or status == 204 else self.skip
        if self.advanced(headers):
            raise _Done(events, IncompleteStreamError(
                f"Durable Stream {self.url} was closed at offset {self.offset} without the "
                "reply's end (the reply was cut)"))
        if self.caught_up and not self.live:
            raise _Done(events, IncompleteStreamError(
                f"Durable Stream {self.url} holds no end at offset {self.offset} yet (the "
                "reply is still being written; read it with live=True to follow it)"))
        return events, False, 0.0

    def judged(self, status: int, body: bytes) -> float | None:
        """``None`` for an answer to read, else the seconds to wait before asking again
        (a stream not created yet: the producer's first append makes it; a 5xx)."""
        if status == 404:
            return self.failed("no such stream")
        if status >= 500:
            return self.failed(f"HTTP {status}")
        if status not in (200, 204):
            raise IncompleteStreamError(f"Durable Stream {self.url} refused a read at offset "
                                        f"{self.offset}: HTTP {status} "
                                        f"{body[:200].decode('utf-8', 'replace')}")
        self.failures = 0
        return None

    def advanced(self, headers: Any) -> bool:
        """Move on to the answer's next offset: whether the stream is closed there."""
        self.offset = headers.get("Stream-Next-Offset") or self.offset
        self.cursor = headers.get("Stream-Cursor") or self.cursor
        self.caught_up = headers.get("Stream-Up-To-Date") == "true"
        return headers.get("Stream-Closed") == "true" and self.caught_up

    def _items(self, body: bytes) -> list[Any]:
        try:
            items = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise WireFormatError(f"Durable Stream {self.url} answered offset {self.offset} "
                                  f"with no JSON array ({error})",
                                  body.decode("utf-8", "replace")) from error
        if not isinstance(items, list):
            raise WireFormatError(f"Durable Stream {self.url} answered offset {self.offset} "
                                  "with no JSON array", body.decode("utf-8", "replace"))
        return items


class _Done(Exception):
    """The reply's end: the events before it in the answer, and how it ended."""

    def __init__(self, events: list[DurableEntry], error: LlmRxError | None) -> None:
        super().__init__("the reply ended")
        self.events, self.error = events, error


def _transient(error: Exception) -> bool:
    return type(error).__module__.startswith(("httpx", "httpcore"))


class _DurableSource(EventSource):
    """The events (or, ``with_offsets``, the entries) of one reply in a Durable Stream."""

    def __init__(self, client: Any, url: str, offset: str, live: bool, timeout: float,
                 retries: int, with_offsets: bool = False) -> None:
        super().__init__()
        self._client, self._url, self._offset, self._live = client, url, offset, live
        self._timeout, self._retries, self._with_offsets = timeout, retries, with_offsets

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        follower = _Follower(self._url, self._offset, self._live, self._timeout, self._retries)
        client, url, owned = self._client, self._url, None
        if client is None:  # (a client of its own, closed when the reading ends)
            import httpx

            client = owned = httpx.Client()

        def values(entries: list[DurableEntry]) -> list[Any]:
            return list(entries) if self._with_offsets else [entry.event for entry in entries]

        def answered(status: int, headers: Any, body: bytes) -> tuple[bool, float]:
            try:
                events, _, wait = follower.take(status, headers, body)
            except _Done as done:
                if done.events:
                    reading.emit(values(done.events))
                if done.error is not None:
                    raise done.error from None
                return True, 0.0
            if events:
                since = time.monotonic()
                reading.emit(values(events))  # (a consumer on another thread may hold it)
                follower.deadline += time.monotonic() - since
            return False, wait

        if inspect.iscoroutinefunction(getattr(client, "get", None)):
            import asyncio

            async def pump() -> None:
                while not reading.stopped():
                    params, left = follower.request()
                    try:
                        response = await client.get(url, params=params, timeout=left + 5.0)
                    except Exception as error:
                        if not _transient(error):
                            raise
                        await asyncio.sleep(follower.failed(type(error).__name__, error))
                        continue
                    ended, wait = answered(response.status_code, response.headers,
                                           response.content)
                    if ended:
                        return
                    if wait:
                        await asyncio.sleep(wait)

            return read_async(reading, pump, scheduler=scheduler,
                              caller="from_durable_stream()")

        def follow() -> None:
            try:
                follow_all()
            finally:
                if owned is not None:
                    owned.close()

        def follow_all() -> None:
            while not reading.stopped():
                params, left = follower.request()
                try:
                    response = client.get(url, params=params, timeout=left + 5.0)
                except Exception as error:
                    if not _transient(error):
                        raise
                    time.sleep(follower.failed(type(error).__name__, error))
                    continue
                ended, wait = answered(response.status_code, response.headers, response.content)
                if ended:
                    return
                if wait:
                    time.sleep(wait)

        def run(_: abc.SchedulerBase, __: Any = None) -> None:
            read_through(reading, follow)

        return (scheduler or CurrentThreadScheduler.singleton()).schedule(run)


@overload
def from_durable_stream(
    url: str, offset: str | Cursor = "-1", live: bool = True, *, client: Any = None,
    idle_timeout: float = ..., retries: int = ..., with_offsets: Literal[False] = False,
    provider: ProviderName | None = None,
) -> Observable[Event]: ...


@overload
def from_durable_stream(
    url: str, offset: str | Cursor = "-1", live: bool = True, *, client: Any = None,
    idle_timeout: float = ..., retries: int = ..., with_offsets: Literal[True],
) -> Observable[DurableEntry]: ...


def from_durable_stream(
    url: str,
    offset: str | Cursor = "-1",
    live: bool = True,
    *,
    client: Any = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
    with_offsets: bool = False,
    provider: ProviderName | None = None,
) -> Observable[Event] | Observable[DurableEntry]:
    """A cold observable of the events of the reply ``sinks.to_durable_stream`` appends to
    ``url``, from ``offset`` on (``"-1"``: the start; an offset a server gave,
    ``Stream-Next-Offset``: what follows it): first what is written already, then, with
    ``live``, each append as it is made (long-poll), until the reply's end item.

    A reply that ended with an error ends here with the same error (so ``to_response()``
    gives the producer's ``Response``). A reading whose connection drops asks again from the
    last offset it took (``retries`` failures in a row end it with an
    ``IncompleteStreamError``); a stream not created yet is waited for. Nothing new for
    ``idle_timeout`` seconds (a producer that died: a live producer's heartbeats come every
    5 s) ends it with a ``StreamTimeoutError``; a stream closed without the end, or, without
    ``live``, a reply not finished yet, with an ``IncompleteStreamError``; an item that is no
    llm-rx item with a ``WireFormatError`` carrying it: each after the events before it.

    ``client`` is an ``httpx.Client`` (read on ``scheduler``, by default on the subscribing
    thread, which it blocks) or an ``httpx.AsyncClient`` (read by a task on the running
    loop); by default a new ``httpx.Client`` per subscription, closed at its end.
    With ``provider`` (the ``to`` the producer wrote, a provider's wire),
    the stream's bytes are that wire's body, decoded as it arrives: the wire's own end tells
    a finished reply from a cut one. ``with_offsets=True`` gives `DurableEntry` items: each
    event with the position after it, to pass as ``offset`` to read on exactly after it (a
    reader restarted elsewhere).

    Args:
        url: The stream's URL on a Durable Streams server.
        offset: Where to start: ``"-1"`` (the start), ``"now"`` (the tail), an offset the
            server gave, or a `DurableEntry`'s ``offset`` (plain strings); or an
            [`llm_rx.Cursor`][llm_rx.Cursor] (its ``last_event_id``; ``entry.cursor``), the
            one type every resumable source shares.
        live: Follow appends until the reply's end (``False``: only what is written).
        client: An ``httpx.Client`` or ``httpx.AsyncClient``; ``None``: a new ``httpx.Client``.
        idle_timeout: Seconds without a new item before the reply ends cut.
        retries: Failed requests in a row before the reply ends cut.
        with_offsets: Give `DurableEntry` items (an event and the position after it).
        provider: ``None``: the stream holds llm-rx's JSON items (``to="events"``); a wire's
            id: it holds that wire's bytes (``to=<wire>``), decoded as that wire's body.

    Returns:
        A cold observable of the reply's events (or entries).
    """
    if idle_timeout <= 0 or retries < 1:
        raise ValueError("idle_timeout must be positive and retries >= 1")
    if isinstance(offset, Cursor):
        offset = offset.last_event_id or "-1"
    if client is None:
        try:
            import httpx  # noqa: F401 - the optional extra (used when a subscription reads)
        except ImportError as missing:
            from .._extras import install_hint

            raise ImportError("from_durable_stream() needs httpx: "
                              f"{install_hint('durable')}") from missing
    if provider is not None:
        if with_offsets:
            raise ValueError("with_offsets=True reads llm-rx's JSON items only (provider=None)")
        from ._durable_wire import wire_reply

        is_async = inspect.iscoroutinefunction(getattr(client, "get", None))
        return wire_reply(client, url, offset, live, idle_timeout, retries, provider, is_async)
    source = _DurableSource(client, url, offset, live, idle_timeout, retries, with_offsets)
    if not with_offsets:
        return source

    def subscribe(
        observer: abc.ObserverBase[DurableEntry], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        # (a plain observable: the fused steps of later operators take events, not entries)
        on_next: Any = observer.on_next
        return source.subscribe_steps(
            None, on_next, observer.on_error, observer.on_error, observer.on_completed, scheduler)

    return reactivex.create(subscribe)
