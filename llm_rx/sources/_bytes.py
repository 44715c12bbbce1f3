"""Cold, cancellable observables of events over byte iterables and files."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable
from reactivex.scheduler import CurrentThreadScheduler

from ..errors import LlmRxError
from ..events import Event
from ..wire.sse import DEFAULT_MAX_FRAME
from ._engine import decode_all, new_decoder

__all__ = ["EventSource", "from_bytes", "from_file", "iter_file"]

_T = TypeVar("_T")

BytesLike = bytes | bytearray | memoryview


def _chunks_of(data: BytesLike | Iterable[bytes]) -> Iterable[bytes]:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return (bytes(data),)
    if isinstance(data, str):
        raise TypeError("pass bytes or an iterable of bytes, not str")
    return data


class EventSource(Observable[Event]):
    """A cold observable of the events decoded from a byte source.

    Besides ``subscribe``, it can run a one-value-per-event step in its own loop
    (:meth:`subscribe_steps`), so an operator such as ``accumulate()`` costs no extra
    observer hop per event when it sits right after the source.
    """

    def __init__(self, chunks: Any, provider: str | None, max_frame: int) -> None:
        super().__init__()
        self._chunks = chunks
        self._provider = provider
        self._max_frame = max_frame

    def _subscribe_core(
        self, observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        return self.subscribe_steps(
            None, observer.on_next, observer.on_error, observer.on_error, observer.on_completed,
            scheduler,
        )

    def subscribe_steps(
        self,
        steps: Callable[[list[Event]], tuple[list[_T], Exception | None]] | None,
        on_next: Callable[[_T], None],
        on_step_error: Callable[[Exception], None],
        on_error: Callable[[Exception], None],
        on_completed: Callable[[], None],
        scheduler: abc.SchedulerBase | None = None,
    ) -> abc.DisposableBase:
        """Subscribe with a step that maps each read's events to one value per event, run in
        the source's own loop: ``on_next`` gets the values, then ``on_completed()`` is
        called; a decoding error goes to ``on_error`` after the values of the events before
        it. ``steps(events)`` gives the values of the events up to the first it failed on,
        and that failure: the values are passed on, then the reading stops and the failure
        goes to ``on_step_error``. With no ``steps``, ``on_next`` gets the events themselves.

        Like ``subscribe``, the reading runs on ``scheduler`` (the current thread's
        trampoline by default) and disposing the result stops it. The callbacks are called
        as given: pass an operator's downstream observer's, which keep the observer grammar.
        """
        disposed = False

        def stopped() -> bool:
            return disposed

        def emit(events: list[Any]) -> None:
            nonlocal disposed
            values, failure = (events, None) if steps is None else steps(events)
            for value in values:
                if disposed:
                    return
                on_next(value)
            if failure is not None and not disposed:
                disposed = True
                on_step_error(failure)

        def run(_: abc.SchedulerBase, __: Any = None) -> None:
            try:
                chunks = self._chunks
                source = chunks() if callable(chunks) else chunks
                decoder = new_decoder(self._provider, self._max_frame)
                decode_all(decoder, source, emit, stopped)
            except LlmRxError as error:  # (a failing byte source arrives as one too)
                if not disposed:
                    on_error(error)
                return
            if not disposed:
                on_completed()

        def dispose() -> None:
            nonlocal disposed
            disposed = True

        sched = scheduler or CurrentThreadScheduler.singleton()
        return CompositeDisposable(Disposable(dispose), sched.schedule(run))


def from_bytes(
    data: BytesLike | Iterable[bytes],
    provider: str | None = None,
    *,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Observable[Event]:
    """A cold observable of the events ``data`` decodes to.

    ``data`` is the whole body or an iterable of its pieces, read on each subscription: a
    one-shot iterator (a generator, a response's ``iter_bytes()``) serves one subscription
    only, so ``share()`` or ``publish()`` it for several sinks.
    ``provider`` is sniffed from the first bytes when not given. Decoding errors arrive as
    ``on_error`` after the events decoded before them; disposing stops the reading.
    """
    return EventSource(_chunks_of(data), provider, max_frame)


def iter_file(path: str | os.PathLike[str], chunk_size: int = 64 * 1024) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            yield chunk


def from_file(
    path: str | os.PathLike[str],
    provider: str | None = None,
    *,
    chunk_size: int = 64 * 1024,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> Observable[Event]:
    """A cold observable of the events in a recorded body; the file is read on subscribe."""
    return EventSource(lambda: iter_file(path, chunk_size), provider, max_frame)
