"""Events of one response read from a WebSocket (OpenAI's WebSocket mode on ``/v1/responses``).

The socket is the client's, already open and already sent its ``response.create``: a
``websockets`` connection, sync (``websockets.sync.client.connect``) or asyncio
(``websockets.asyncio.client.connect``), the official openai SDK's
``client.responses.connect()`` connection (its raw messages), or anything with a ``recv()``
that gives one message. Messages are read up to the response's terminal event and no
further: the socket stays open for the next ``response.create``. A socket that closes before
that event is a cut stream: the reply is ``interrupted`` (``IncompleteStreamError``).
"""

from __future__ import annotations

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


def _sync_messages(recv: Callable[[], Any], framing: MessageFraming) -> Iterator[bytes]:
    closed = _closed()
    while True:
        try:
            message = recv()
        except closed:
            return  # (a closed socket: the decoder reads a cut stream)
        yield framing.frame(message)
        if framing.last(message):
            return


async def _async_messages(recv: Callable[[], Any], framing: MessageFraming
                          ) -> AsyncIterator[bytes]:  # (one body: ``_sync_messages``'s)
    closed = _closed()
    while True:
        try:
            message = await recv()
        except closed:
            return
        yield framing.frame(message)
        if framing.last(message):
            return


class _Messages:
    """The next response's messages as SSE pieces, read anew by each subscription."""

    def __init__(self, recv: Callable[[], Any], framing: MessageFraming) -> None:
        self._recv = recv
        self._framing = framing

    def __iter__(self) -> Iterator[bytes]:
        return _sync_messages(self._recv, self._framing)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _async_messages(self._recv, self._framing)


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
    ``response.create``.

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
    messages = _Messages(recv, framing)
    if inspect.iscoroutinefunction(recv):
        return from_async_bytes(messages, provider, max_frame=max_frame)
    return from_bytes(messages, provider, max_frame=max_frame)
