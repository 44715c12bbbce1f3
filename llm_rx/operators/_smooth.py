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

#: where a chunk ends: after a run of spaces that follows a word (``"word"``: the runs found
#: with ``\s+``, cut only when a non-space came since the last cut), or after a run of line
#: ends; each delta's new text is scanned once, so the work is linear in the text
_BOUNDARY = {"word": (re.compile(r"\s+"), True), "line": (re.compile(r"\n+"), False)}
#: the most chunks that wait their turn: a source faster than ``delay`` catches up past it
#: (the waiting chunks go out at once, those of one block merged into one delta)
MAX_BACKLOG = 64
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
    next one ``delay`` after it at the earliest (sooner chunks wait their turn). When more
    than ``MAX_BACKLOG`` (64) chunks wait, a source faster than the pace, they go out at
    once, those of one block merged into one delta: the display catches up, the wait stays
    bounded.
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

    def __init__(self, observer: abc.ObserverBase[Event],
                 boundary: tuple[re.Pattern[str], bool], delay: float,
                 scheduler: abc.SchedulerBase) -> None:
        self._observer = observer
        self._boundary, self._after_word = boundary
        self._delay = delay
        self._scheduler = scheduler
        self._lock = threading.RLock()
        self._block: tuple[type[Any], int] | None = None  # the text's delta class and block
        self._pending: list[str] = []  # its text without a boundary yet
        self._word = False  # whether the pending text holds a non-space
        self._queue: deque[Event | _Chunk | _End] = deque()  # (in order)
        self._waiting = 0  # the chunks in the queue
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
                self._split(text)
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

    def _split(self, text: str) -> None:
        """The whole chunks of the pending text and ``text``, queued; the rest stays
        pending. Only ``text`` is scanned (once)."""
        assert self._block is not None
        cls, index = self._block
        word, start, end = self._word, 0, 0  # (the chunk's start; the last run's end)
        for run in self._boundary.finditer(text):
            word = word or run.start() > end
            end = run.end()
            if word or not self._after_word:
                self._pending.append(text[start:end])
                self._queue.append(_Chunk(cls, index, "".join(self._pending)))
                self._waiting += 1
                self._pending, word, start = [], False, end
        if start < len(text):
            self._pending.append(text[start:])
        self._word = word or len(text) > end

    def _flush(self) -> None:
        """The pending text, whole, as the block's last chunk."""
        if self._block is not None and self._pending:
            cls, index = self._block
            self._queue.append(_Chunk(cls, index, "".join(self._pending)))
            self._waiting += 1
        self._pending, self._word = [], False
        self._block = None

    # -- the output ----------------------------------------------------------------------

    def _drain(self) -> None:
        """Everything at the head of the queue that may go now (all of it, the chunks of
        a block merged, when more than ``MAX_BACKLOG`` chunks wait)."""
        if self._waiting > MAX_BACKLOG:
            self._catch_up()
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
                self._waiting -= 1
                self._observer.on_next(item.cls(item.index, item.text))
                if self._delay > 0:
                    self._cooling = True
                    self.timer.disposable = self._scheduler.schedule_relative(
                        self._delay, self._cooled)
                continue
            queue.popleft()
            self._observer.on_next(item)

    def _catch_up(self) -> None:
        """The waiting chunks merged by block, each run of them one delta, in order with
        the events between them; the end stays queued (``_drain`` sends it)."""
        queue, merged = self._queue, deque[Event | _Chunk | _End]()
        while queue:
            item = queue.popleft()
            last = merged[-1] if merged else None
            if (isinstance(item, _Chunk) and isinstance(last, _Chunk)
                    and (last.cls, last.index) == (item.cls, item.index)):
                last.text += item.text
            else:
                merged.append(item)
        self._waiting = 0
        while merged:
            head = merged[0]
            if isinstance(head, _End):
                break
            merged.popleft()
            if isinstance(head, _Chunk):
                self._observer.on_next(head.cls(head.index, head.text))
            else:
                self._observer.on_next(head)
        self._queue = merged

    def _cooled(self, scheduler: abc.SchedulerBase, state: Any = None) -> None:
        with self._lock:
            self._cooling = False
            self._drain()
