"""A sync connection's wait for its next message, bounded by an idle timeout."""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import StreamTimeoutError

__all__ = ["Watch"]


def _takes_timeout(recv: Callable[..., Any]) -> bool:
    try:
        return "timeout" in inspect.signature(recv).parameters
    except (TypeError, ValueError):  # (a builtin without a signature)
        return False


class Watch:
    """Each ``recv()`` of a sync connection bounded by ``seconds`` (``None``: not bounded).

    A ``recv`` that takes a ``timeout`` (``websockets``' sync connection) is given it; else
    (the openai SDK's connection) a timer thread, started at the first wait, calls ``close``
    when a wait outlasts ``seconds``, which ends the blocked ``recv`` with the connection's
    closed error: `timed_out` then gives the `StreamTimeoutError` to raise instead.
    """

    def __init__(self, recv: Callable[..., Any], seconds: float | None,
                 close: Callable[[], object]) -> None:
        self._recv = recv
        self._seconds = seconds
        self._native = seconds is not None and _takes_timeout(recv)
        self._close = close
        self._lock = threading.Condition()
        self._deadline: float | None = None  # (when the wait under way ends)
        self._fired = False
        self._done = False
        self._thread: threading.Thread | None = None

    def recv(self) -> Any:
        """The next message; a `StreamTimeoutError` when none came in time."""
        if self._seconds is None:
            return self._recv()
        if self._native:
            try:
                return self._recv(timeout=self._seconds)
            except TimeoutError as error:
                raise self._timeout() from error
        with self._lock:
            if self._fired:
                raise self._timeout()
            self._deadline = time.monotonic() + self._seconds
            if self._thread is None:
                self._thread = threading.Thread(target=self._keep, daemon=True,
                                                name="llm-rx from_websocket idle_timeout")
                self._thread.start()
            self._lock.notify()
        try:
            return self._recv()
        finally:
            with self._lock:
                self._deadline = None

    def timed_out(self) -> StreamTimeoutError | None:
        """The error to raise when the timer closed the connection (else ``None``)."""
        return self._timeout() if self._fired else None

    def stop(self) -> None:
        """The reading ended: the timer thread (if any) ends without closing anything."""
        with self._lock:
            self._done = True
            self._lock.notify()

    def _timeout(self) -> StreamTimeoutError:
        return StreamTimeoutError(
            f"no message arrived in {self._seconds:g} s (from_websocket idle_timeout)")

    def _keep(self) -> None:
        with self._lock:
            while not self._done:
                if self._deadline is None:
                    self._lock.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._lock.wait(left)
                    continue
                self._fired = True
                break
        if self._fired:
            self._close()
