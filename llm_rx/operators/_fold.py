"""One fold of a reply's events for every fold right behind a ``fan_out()``.

A live display and ``to_response()`` both fold the events into a
:class:`~llm_rx.builder.ResponseBuilder` without history: the same fold over the same events.
Behind one ``fan_out()`` they share one: its hub feeds a :class:`SharedFold` each read, once,
before its readings get the read, and each of them takes that feed's outcome as its own. Each
still materialises its own :class:`~llm_rx.response.Response` from the builder (a display's
frames and final snapshot, the reassembly's response): what one is handed is never the other's.
Only the operators subscribed right to the hub, before it connects, share it; the others
fold on their own (the same fold: the same values).
"""

from __future__ import annotations

import threading

from ..events import Event
from ..fold.builder import ResponseBuilder

__all__ = ["BuilderFold", "SharedFold", "fed"]


def fed(
    builder: ResponseBuilder, events: list[Event], kinds: frozenset[type[Event]] | None = None
) -> tuple[int, Exception | None]:
    """Feed a read's events (of the types ``kinds``, when known): how many were fed, and the
    error of the one that was not."""
    before = builder._seq
    try:
        builder.feed_all(events, kinds)
    except Exception as error:  # noqa: BLE001 - a malformed event from upstream
        return builder._seq - before - 1, error  # (its number was taken)
    return len(events), None


class BuilderFold:
    """A builder without history, fed a read at a time, and the lock its readers take (a
    display materialises its frames under it, on the scheduler's thread)."""

    __slots__ = ("builder", "lock")

    def __init__(self) -> None:
        self.builder = ResponseBuilder(history=False)
        self.lock = threading.Lock()

    def feed_all(self, events: list[Event]) -> tuple[int, Exception | None]:
        """Feed a read's events (see :func:`fed`)."""
        with self.lock:
            return fed(self.builder, events)


class SharedFold(BuilderFold):
    """The fold a hub feeds (:meth:`feed_shared`) before its readings get each read; their
    :meth:`feed_all` of that read is the outcome of the hub's feed. ``used`` says whether an
    operator took it (the hub feeds it only then)."""

    __slots__ = ("_failed", "_outcome", "used")

    def __init__(self) -> None:
        super().__init__()
        self.used = False
        self._outcome: tuple[int, Exception | None] = (0, None)
        self._failed = False

    def feed_shared(self, events: list[Event], kinds: frozenset[type[Event]]) -> None:
        """Feed the read every user is about to get (its events of the types ``kinds``)."""
        if self._failed:  # (every user ended with the read that failed: nothing reads it)
            return
        with self.lock:
            self._outcome = outcome = fed(self.builder, events, kinds)
        self._failed = outcome[1] is not None

    def feed_all(self, events: list[Event]) -> tuple[int, Exception | None]:
        """The outcome of the hub's feed of ``events`` (fed already)."""
        return self._outcome
