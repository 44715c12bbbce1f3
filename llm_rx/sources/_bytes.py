"""Cold, cancellable observables of events over byte iterables and files."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from reactivex import Observable, abc
from reactivex.scheduler import CurrentThreadScheduler

from ..events import Event
from ..wire.providers import ProviderName
from ..wire.sse import DEFAULT_MAX_FRAME
from ._engine import check_chunks, decode_all
from ._source import EventSource, Reading, read_through

__all__ = ["from_bytes", "from_file", "iter_file"]

BytesLike = bytes | bytearray | memoryview


def _chunks_of(data: BytesLike | Iterable[bytes]) -> Iterable[bytes]:
    check_chunks(data, "from_bytes()")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return (bytes(data),)
    return data


class _BytesSource(EventSource):
    """Events from a byte iterable (or a callable giving one), read on a scheduler."""

    def __init__(self, chunks: Any, provider: ProviderName | None, max_frame: int) -> None:
        super().__init__(provider, max_frame)
        self._chunks = chunks

    def _read(self, reading: Reading, scheduler: abc.SchedulerBase | None) -> abc.DisposableBase:
        def run(_: abc.SchedulerBase, __: Any = None) -> None:
            read_through(reading, lambda: self._decode(reading))

        return (scheduler or CurrentThreadScheduler.singleton()).schedule(run)

    def _decode(self, reading: Reading) -> None:
        chunks = self._chunks
        source = chunks() if callable(chunks) else chunks
        decode_all(self._decoder(), source, reading.emit, reading.stopped, reading.fold,
                   self._max_frame)


def from_bytes(
    data: BytesLike | Iterable[bytes],
    provider: ProviderName | None = None,
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Observable[Event]:
    """A cold observable of the events ``data`` decodes to.

    ``data`` is the whole body or an iterable of its pieces, read on each subscription: a
    one-shot iterator (a generator, a response's ``iter_bytes()``) serves one subscription
    only, so ``share()`` or ``publish()`` it for several sinks.
    ``provider`` is sniffed from the first bytes when not given. Decoding errors arrive as
    ``on_error`` after the events decoded before them; disposing stops the reading. What is
    no bytes (``str``, parsed dicts, an async iterable) is a ``TypeError`` at the call, or as
    ``on_error`` at the first such piece of a lazy iterable.

    Args:
        data: The body: bytes, or an iterable of byte pieces (a generator is read lazily).
        provider: The provider id (or an alias); told from the first frame when ``None``.
        max_frame: The largest frame accepted, in bytes; a larger one is a `FrameTooLargeError`.

    Returns:
        A cold observable of the reply's events.
    """
    return _BytesSource(_chunks_of(data), provider, max_frame)


def iter_file(path: str | os.PathLike[str], chunk_size: int = 64 * 1024) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            yield chunk


def from_file(
    path: str | os.PathLike[str],
    provider: ProviderName | None = None,
    *,
    chunk_size: int = 64 * 1024,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Observable[Event]:
    """A cold observable of the events in a recorded body; the file is read on subscribe.

    Args:
        path: The file holding the body.
        provider: The provider id (or an alias); told from the first frame when ``None``.
        chunk_size: The size of each read, in bytes.
        max_frame: The largest frame accepted, in bytes; a larger one is a `FrameTooLargeError`.

    Returns:
        A cold observable of the reply's events; each subscription opens the file.
    """
    return _BytesSource(lambda: iter_file(path, chunk_size), provider, max_frame)
