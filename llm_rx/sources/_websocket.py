"""Events of one response read from a WebSocket (OpenAI's WebSocket mode on ``/v1/responses``).

The socket is the client's, already open and already sent its ``response.create``: a
``websockets`` connection, sync (``websockets.sync.client.connect``) or asyncio
(``websockets.asyncio.client.connect``), the official openai SDK's
``client.responses.connect()`` connection (its raw messages), or anything with a ``recv()``
that gives one message. Messages are read up to the response's terminal event and no
further: the socket stays open for the next ``response.create``. A socket that closes before
that event is a cut stream: the reply is ``interrupted`` (``IncompleteStreamError``).

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

from ..events import Event
from ..wire.messages import MESSAGE_FRAMINGS, MessageFraming
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME
from ._async import from_async_bytes
from ._bytes import from_bytes

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


def _sync_messages(ws: Any, recv: Callable[[], Any], framing: MessageFraming
                   ) -> Iterator[bytes]:
    closed, ended = _closed(), False
    try:
        while True:
            try:
                message = recv()
            except closed:
                ended = True
                return  # (a closed socket: the decoder reads a cut stream)
            ended = framing.last(message)
            yield framing.frame(message)
            if ended:
                return
    finally:
        if not ended:  # (stopped before the terminal event: the rest would be read as the
            _close(ws, closed)  # next response's, so the socket closes and what it had
            with contextlib.suppress(*closed):  # received is dropped)
                while True:
                    recv()


async def _async_messages(ws: Any, recv: Callable[[], Any], framing: MessageFraming
                          ) -> AsyncIterator[bytes]:  # (one body: ``_sync_messages``'s)
    closed, ended = _closed(), False
    try:
        while True:
            try:
                message = await recv()
            except closed:
                ended = True
                return
            ended = framing.last(message)
            yield framing.frame(message)
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
    """The next response's messages as SSE pieces, read anew by each subscription."""

    def __init__(self, ws: Any, recv: Callable[[], Any], framing: MessageFraming) -> None:
        self._ws = ws
        self._recv = recv
        self._framing = framing

    def __iter__(self) -> Iterator[bytes]:
        return _sync_messages(self._ws, self._recv, self._framing)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _async_messages(self._ws, self._recv, self._framing)


def from_websocket(
    ws: Any,
    provider: ProviderName = "openai-responses",
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Observable[Event]:
    """Events of the next response on ``ws`` (a WebSocket its ``response.create`` was sent
    on). A sync connection is read when the observable is subscribed (as ``from_bytes``
    reads); an asyncio one by a task on the running loop (as ``from_async_bytes`` reads).
    Each subscription reads the next response's messages: subscribe once per
    ``response.create``. Disposing before the response's terminal event closes the socket
    (its unread messages would be taken for the next response's).

    Args:
        ws: The open connection: ``websockets`` sync or asyncio, the openai SDK's
            ``client.responses.connect()`` connection, or anything whose ``recv()`` gives
            one message.
        provider: The provider id of the messages (the one with a WebSocket mode:
            ``openai-responses``).
        max_frame: The largest event accepted, in bytes; a larger one is a
            `FrameTooLargeError`.

    Returns:
        A cold observable of the response's events; a socket closed before the response's
        terminal event gives an interrupted reply.
    """
    framing = MESSAGE_FRAMINGS.get(provider)
    if framing is None:
        raise ValueError(f"no WebSocket mode for {provider!r}; available: "
                         f"{', '.join(sorted(MESSAGE_FRAMINGS))}")
    recv = _receiver(ws)
    messages = _Messages(ws, recv, framing)
    if inspect.iscoroutinefunction(recv):
        return from_async_bytes(messages, provider, max_frame=max_frame)
    return from_bytes(messages, provider, max_frame=max_frame)
