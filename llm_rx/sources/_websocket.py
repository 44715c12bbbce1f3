"""Events of the responses read from a WebSocket (OpenAI's WebSocket mode on ``/v1/responses``).

The socket is the client's, already open and already sent its ``response.create``: a
``websockets`` connection, sync (``websockets.sync.client.connect``) or asyncio
(``websockets.asyncio.client.connect``), the official openai SDK's
``client.responses.connect()`` connection (its raw messages), or anything with a ``recv()``
that gives one message. Messages are read up to the response's terminal event and no
further (``responses=N``: up to the N-th terminal event; ``responses=None``: until the socket
closes): the socket stays open for the next ``response.create``. A socket that closes before
that event (with ``None``: while a response is open) is a cut stream: the reply is
``interrupted`` (``IncompleteStreamError``, its message naming the close code and reason the
server sent). With ``idle_timeout``, a wait of more than that many seconds for the next
message (between responses too) is a ``StreamTimeoutError``.

A reading stopped before the terminal event (disposed: ``take(3)``, ``take_until``, a
``break`` out of ``to_aiter``; or failed) closes the socket: the rest of that response would
otherwise be read as the next one's; the messages it had received are dropped (a socket's
``recv()`` raises once it is closed). A later ``from_websocket`` on it reads a cut stream.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from reactivex import Observable

from ..errors import IncompleteStreamError
from ..events import Event
from ..wire.messages import MESSAGE_FRAMINGS, MessageFraming
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME
from ._async import _AsyncSource
from ._bytes import from_bytes
from ._watch import Watch

__all__ = ["from_websocket"]


def _closed() -> tuple[type[BaseException], ...]:
    """The exceptions that say the socket closed (the ``websockets`` package's, when it is
    installed: it is the optional ``websocket`` extra)."""
    try:
        from websockets.exceptions import ConnectionClosed
    except ImportError:  # pragma: no cover - (the extra is not installed)
        return (EOFError, ConnectionError)
    return (ConnectionClosed, EOFError, ConnectionError)


def _receiver(ws: Any) -> Callable[[], Any]:
    recv = getattr(ws, "recv_bytes", None)  # (the openai SDK's connection: raw messages)
    if recv is None:
        recv = getattr(ws, "recv", None)
    if not callable(recv):
        raise TypeError(f"from_websocket needs a WebSocket connection with recv(), not {ws!r}")
    return recv  # type: ignore[no-any-return]


def _cut(error: BaseException) -> IncompleteStreamError:
    """The socket closed before the response's terminal event: a cut stream, saying the close
    code and reason the server sent (``websockets``' ``ConnectionClosed.rcvd``; the reason
    is the server's text: quoted)."""
    frame = getattr(error, "rcvd", None) or getattr(error, "sent", None)
    code, reason = getattr(frame, "code", None), getattr(frame, "reason", None)
    if isinstance(code, int):
        words = f"close code {code}" + (f", reason {reason!r}" if reason else "")
    else:
        words = f"{type(error).__name__}: {error!s}".rstrip(": ")
    return IncompleteStreamError(
        f"the WebSocket closed before the response's terminal event ({words})")


class _Count:
    """How many responses a reading takes: ``responses`` ends (``None``: until the socket
    closes), and whether the messages so far left a response open."""

    def __init__(self, framing: MessageFraming, responses: int | None) -> None:
        self.framing = framing
        self.left = responses
        self.between = True  # no response open (none yet, or the last one ended)

    def took(self, message: Any) -> bool:
        """``message`` arrived: whether the reading is over (its last response ended)."""
        self.between = self.framing.last(message)
        if self.between and self.left is not None:
            self.left -= 1
        return self.left == 0

    def closed(self, error: BaseException, timed_out: BaseException | None) -> BaseException | None:
        """The socket closed: the error that ends the reading, or ``None`` (read until the
        close, and no response was open: the stream's end)."""
        if self.left is None and self.between and timed_out is None:
            return None
        return timed_out or _cut(error)


def _sync_messages(ws: Any, recv: Callable[[], Any], count: _Count,
                   idle_timeout: float | None) -> Iterator[bytes]:
    closed, ended = _closed(), False
    watch = Watch(recv, idle_timeout, lambda: _close(ws, closed))
    try:
        while True:
            try:
                message = watch.recv()
            except closed as error:
                ended = True  # (closed: nothing to drain)
                failure = count.closed(error, watch.timed_out())
                if failure is None:
                    return
                raise failure from error
            ended = count.took(message)
            yield count.framing.frame(message)
            if ended:
                return
    finally:
        watch.stop()
        if not ended:  # (stopped before the terminal event: the rest would be read as the
            _close(ws, closed)  # next response's, so the socket closes and what it had
            with contextlib.suppress(*closed):  # received is dropped)
                while True:
                    recv()


async def _async_messages(ws: Any, recv: Callable[[], Any], count: _Count
                          ) -> AsyncIterator[bytes]:  # (one body: ``_sync_messages``'s)
    closed, ended = _closed(), False
    try:
        while True:
            try:
                message = await recv()
            except closed as error:
                ended = True
                failure = count.closed(error, None)
                if failure is None:
                    return
                raise failure from error
            ended = count.took(message)
            yield count.framing.frame(message)
            if ended:
                return
    finally:
        if not ended:
            closing = _close(ws, closed)
            if inspect.isawaitable(closing):
                with contextlib.suppress(*closed):
                    await closing
            with contextlib.suppress(*closed):
                while True:
                    await recv()


def _close(ws: Any, closed: tuple[type[BaseException], ...]) -> Any:
    """Closes ``ws`` (what its ``close()`` returns: an awaitable for an asyncio one)."""
    close = getattr(ws, "close", None)
    if not callable(close):
        return None
    try:
        return close()
    except closed:
        return None


class _Messages:
    """The next responses' messages as SSE pieces, read anew by each subscription."""

    def __init__(self, ws: Any, recv: Callable[[], Any], framing: MessageFraming,
                 idle_timeout: float | None, responses: int | None) -> None:
        self._ws = ws
        self._recv = recv
        self._framing = framing
        self._idle_timeout = idle_timeout
        self._responses = responses

    def __iter__(self) -> Iterator[bytes]:
        return _sync_messages(self._ws, self._recv, _Count(self._framing, self._responses),
                              self._idle_timeout)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _async_messages(self._ws, self._recv, _Count(self._framing, self._responses))


def from_websocket(
    ws: Any,
    provider: ProviderName = "openai-responses",
    *,
    idle_timeout: float | None = None,
    max_frame: int = DEFAULT_MAX_FRAME,
    responses: int | None = 1,
) -> Observable[Event]:
    """Events of the next response on ``ws`` (a WebSocket its ``response.create`` was sent
    on). A sync connection is read when the observable is subscribed (as ``from_bytes``
    reads); an asyncio one by a task on the running loop (as ``from_async_bytes`` reads).
    Each subscription reads the next response's messages: subscribe once per
    ``response.create``; or read several responses in one (``responses=3``, or ``None``
    for every one until the socket closes) and split them with `lxo.responses()` or
    `lxo.to_responses()` (each response has its own ``MessageStart`` and terminal; a steered
    response ends ``interrupted``, and the next one follows). Disposing before the last
    terminal event read closes the socket (its unread messages would be taken for the next
    response's).

    A socket closed before the terminal event is an `IncompleteStreamError` naming the
    close code and reason the server sent (``close code 1011, reason 'overloaded'``; the
    ``websockets`` exception is its ``__cause__``). With ``idle_timeout``, a wait of more
    than that many seconds for the next message ends the reply with a `StreamTimeoutError`
    (after what arrived) and closes the socket, as disposing does: a sync connection is
    given the limit as its ``recv(timeout=)`` (``websockets``), else (the openai SDK's
    connection) is closed from a timer thread; an asyncio one's wait is bounded on the loop.

    Args:
        ws: The open connection: ``websockets`` sync or asyncio, the openai SDK's
            ``client.responses.connect()`` connection, or anything whose ``recv()`` gives
            one message.
        provider: The provider id of the messages (the one with a WebSocket mode:
            ``openai-responses``).
        idle_timeout: Seconds without a message after which the reply ends with a
            `StreamTimeoutError` (``None``: no limit).
        max_frame: The largest event accepted, in bytes; a larger one is a
            `FrameTooLargeError`.
        responses: How many responses to read (the observable completes after the last
            one's terminal event, the socket open); ``None``: every response until the
            socket closes (a close while none is open is the end; an ``error`` event for
            a refused request ends the reading with its `ProviderError`).

    Returns:
        A cold observable of the responses' events; a socket closed before a response's
        terminal event gives an interrupted reply.
    """
    framing = MESSAGE_FRAMINGS.get(provider)
    if framing is None:
        raise ValueError(f"no WebSocket mode for {provider!r}; available: "
                         f"{', '.join(sorted(MESSAGE_FRAMINGS))}")
    if responses is not None and (type(responses) is not int or responses < 1):
        raise ValueError(f"responses must be a count >= 1 or None, not {responses!r}")
    if idle_timeout is not None and not idle_timeout > 0:
        raise ValueError(f"idle_timeout must be a number of seconds > 0, not {idle_timeout!r}")
    recv = _receiver(ws)
    if inspect.iscoroutinefunction(recv):
        return _AsyncSource(_Messages(ws, recv, framing, None, responses), provider, max_frame,
                            "from_websocket() on an asyncio connection", idle_timeout)
    return from_bytes(_Messages(ws, recv, framing, idle_timeout, responses), provider,
                      max_frame=max_frame)
