"""``smooth()``: text and reasoning re-chunked at word or line boundaries, at a steady pace,
for a display that does not flicker."""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

import reactivex
from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, SerialDisposable
from reactivex.scheduler import TimeoutScheduler

from ..events import Event, TextDelta, ThinkingDelta

__all__ = ["smooth"]

#: where a chunk ends: after a word and the spaces that follow it, or after a line's end
_BOUNDARY = {"word": re.compile(r"\S+\s+"), "line": re.compile(r"\n+")}
_SMOOTHED = (TextDelta, ThinkingDelta)


class _Chunk:
    """A chunk of a block's text, waiting its turn."""

    __slots__ = ("cls", "index", "text")

    def __init__(self, cls: type[Any], index: int, text: str) -> None:
        self.cls, self.index, self.text = cls, index, text


class _End:
    """The end (``error`` ``None``: completion), waiting for the chunks before it."""

    __slots__ = ("error",)

    def __init__(self, error: Exception | None) -> None:
        self.error = error


def smooth(
    chunking: Literal["word", "line"] = "word",
    delay: float = 0.01,
    scheduler: abc.SchedulerBase | None = None,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Re-chunk text and thinking deltas at word (or line) boundaries, at most one chunk per
    ``delay`` seconds: the answer appears word by word at a steady pace, however the
    provider cut it (the AI SDK's ``smoothStream``).

    ```text
    deltas:   -S-b-("Hel")-("lo wo")-("rld")-B-M-|
    smooth("word", 2)
    result:   -S-b---------("Hello ")--("world")B-M-|
    ```

    A delta's text waits until a boundary arrives (``"word"``: a word and the spaces after
    it; ``"line"``: the end of a line); each chunk goes out as one delta of its block, the
    next one ``delay`` after it at the earliest (sooner chunks wait their turn, never merge).
    The rest of a block's text goes out when anything else arrives (its ``BlockStop``,
    another block, a signature) and at the reply's end, so nothing waits for a boundary that
    never comes. Every other event passes through at once, in order: after the text that
    came before it. The concatenated text is unchanged. An error or the completion comes
    after the last chunk. Timers run on ``scheduler``, else on the subscription's scheduler,
    else on a timer thread; disposing cancels them.

    Args:
        chunking: ``"word"`` or ``"line"``.
        delay: The least time between two chunks, in seconds (``0``: re-chunk only).
        scheduler: The scheduler the pace is kept on (see above).

    Returns:
        An operator for ``.pipe()``.
    """
    boundary = _BOUNDARY.get(chunking)
    if boundary is None:
        raise ValueError(f"smooth() chunks by 'word' or 'line', not {chunking!r}")
    if not delay >= 0:
        raise ValueError(f"smooth() needs delay >= 0, not {delay!r}")

    def operator(source: Observable[Event]) -> Observable[Event]:
        def subscribe(observer: abc.ObserverBase[Event],
                      subscribe_scheduler: abc.SchedulerBase | None = None
                      ) -> abc.DisposableBase:
            timers = scheduler or subscribe_scheduler or TimeoutScheduler.singleton()
            pacing = _Pacing(observer, boundary, delay, timers)
            upstream = source.subscribe(pacing.on_next, pacing.on_error, pacing.on_completed,
                                        scheduler=subscribe_scheduler)
            return CompositeDisposable(upstream, pacing.timer)

        return reactivex.create(subscribe)

    return operator


class _Pacing:
    """One subscription's state: the text waiting for a boundary, the items waiting their
    turn (chunks and events, in order), and whether a chunk went out less than ``delay``
    ago."""

    def __init__(self, observer: abc.ObserverBase[Event], boundary: re.Pattern[str],
                 delay: float, scheduler: abc.SchedulerBase) -> None:
        self._observer = observer
        self._boundary = boundary
        self._delay = delay
        self._scheduler = scheduler
        self._lock = threading.RLock()
        self._block: tuple[type[Any], int] | None = None  # the text's delta class and block
        self._pending: list[str] = []  # its text without a boundary yet
        self._queue: deque[Event | _Chunk | _End] = deque()  # (in order)
        self._cooling = False
        self.timer = SerialDisposable()

    # -- the source ----------------------------------------------------------------------

    def on_next(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, _SMOOTHED):
                cls, index, text = event.__class__, event.index, event.text
                if self._block != (cls, index):
                    self._flush()
                    self._block = (cls, index)
                self._pending.append(text)
                self._split()
            else:
                self._flush()
                self._queue.append(event)
            self._drain()

    def on_error(self, error: Exception) -> None:
        with self._lock:
            self._flush()
            self._queue.append(_End(error))
            self._drain()

    def on_completed(self) -> None:
        with self._lock:
            self._flush()
            self._queue.append(_End(None))
            self._drain()

    # -- chunks --------------------------------------------------------------------------

    def _split(self) -> None:
        """The whole chunks of the pending text, queued; the rest stays pending."""
        assert self._block is not None
        text = "".join(self._pending)
        cls, index = self._block
        start = 0
        for found in self._boundary.finditer(text):
            self._queue.append(_Chunk(cls, index, text[start:found.end()]))
            start = found.end()
        self._pending = [text[start:]] if start < len(text) else []

    def _flush(self) -> None:
        """The pending text, whole, as the block's last chunk."""
        if self._block is not None and self._pending:
            cls, index = self._block
            self._queue.append(_Chunk(cls, index, "".join(self._pending)))
        self._pending = []
        self._block = None

    # -- the output ----------------------------------------------------------------------

    def _drain(self) -> None:
        """Everything at the head of the queue that may go now."""
        queue = self._queue
        while queue:
            item = queue[0]
            if isinstance(item, _End):
                queue.popleft()
                if item.error is None:
                    self._observer.on_completed()
                else:
                    self._observer.on_error(item.error)
                return
            if isinstance(item, _Chunk):
                if self._cooling:
                    return  # (the timer drains it)
                queue.popleft()
                self._observer.on_next(item.cls(item.index, item.text))
                if self._delay > 0:
                    self._cooling = True
                    self.timer.disposable = self._scheduler.schedule_relative(
                        self._delay, self._cooled)
                continue
            queue.popleft()
            self._observer.on_next(item)

    def _cooled(self, scheduler: abc.SchedulerBase, state: Any = None) -> None:
        with self._lock:
            self._cooling = False
            self._drain()
