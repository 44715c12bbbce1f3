"""``stop_on()``: a user's stop — the reply ends when a trigger emits, upstream is let go, and
the provider is told to stop working (and billing) where it has a way to be told."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from typing import Any, Literal

import reactivex
from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, SingleAssignmentDisposable

from ..errors import CancelledStreamError
from ..events import BlockStart, BlockStop, Event, MessageStart

__all__ = ["stop_on"]

#: The tasks of async cancel calls still running (a task nobody holds may be collected).
_PENDING: set[asyncio.Future[Any]] = set()


def stop_on(
    trigger: Observable[Any],
    at: Literal["now", "block"] = "now",
    *,
    cancel: Callable[[str], Any] | None = None,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """End the reply when ``trigger`` emits (a Stop button, a budget, a timer): a user's stop.

    ```text
    events:   -S-B0-t-t-t-t-X0-B1-t-t-X1-M-|
    trigger:  --------x
    stop_on(trigger, at="now")
    result:   -S-B0-t-t#                       # = CancelledStreamError
    stop_on(trigger, at="block")
    result:   -S-B0-t-t-t-t-X0#                (the block in progress closes first)
    ```

    With ``at="now"`` nothing after the trigger passes; with ``at="block"`` the blocks open
    when it emitted go on to their ends (a block that starts after it does not pass), then
    the reply ends; a reply whose own end comes first ends as it would have. The upstream
    subscription is disposed at once at the stop: an llm-rx source closes its connection
    (the server sees the client go) or its SDK stream. Then ``cancel``, when given, is called
    once with the reply's id (`MessageStart.id`; not called when the reply had none), for a
    provider that keeps working after the client went away (a background run:
    ``cancel=lambda reply_id: client.responses.cancel(reply_id)``, see the how-to page on
    long replies); an awaitable it returns runs as a task on the running loop. A cancel
    call that fails is said in a note on the error.

    The reply then ends with a [`CancelledStreamError`][llm_rx.CancelledStreamError]: after
    ``to_response()`` a `Response` with ``complete: false``, ``stop_reason:
    "interrupted"``, ``error.kind: "cancelled"``, the content and usage so far; the UI
    encoders write a user's stop (the AI SDK's ``abort``, AG-UI's ``cancelled`` outcome).
    An error of the trigger is passed on as the reply's; a trigger that completes without
    emitting changes nothing.

    Args:
        trigger: Any observable: its first item stops the reply.
        at: ``"now"``, or ``"block"`` (after the blocks in progress close).
        cancel: Called once with the reply's id at the stop (the provider's cancel call).

    Returns:
        An operator for ``.pipe()``.
    """
    if at not in ("now", "block"):
        raise ValueError(f'at must be "now" or "block", not {at!r}')

    def operator(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            lock = threading.RLock()
            upstream = SingleAssignmentDisposable()
            stopper = SingleAssignmentDisposable()
            open_blocks: set[int] = set()
            state = {"stopping": False, "done": False}
            reply: list[str] = []

            def finish(error: Exception | None = None) -> None:
                state["done"] = True
                stopper.dispose()
                upstream.dispose()
                if error is None:
                    error = CancelledStreamError("the reply was stopped (stop_on)")
                    if cancel is not None and reply:
                        _cancelled(cancel, reply[0], error)
                observer.on_error(error)

            def on_next(event: Event) -> None:
                with lock:
                    if state["done"]:
                        return
                    if isinstance(event, MessageStart):
                        if not reply and event.id:
                            reply.append(event.id)
                    elif isinstance(event, BlockStart):
                        if state["stopping"]:
                            finish()
                            return
                        open_blocks.add(event.index)
                    elif isinstance(event, BlockStop):
                        open_blocks.discard(event.index)
                    observer.on_next(event)
                    if state["stopping"] and not state["done"] and not open_blocks:
                        finish()

            def on_stop(_: Any) -> None:
                with lock:
                    if state["done"] or state["stopping"]:
                        return
                    state["stopping"] = True
                    if at == "now" or not open_blocks:
                        finish()

            def on_trigger_error(error: Exception) -> None:
                with lock:
                    if not state["done"]:
                        finish(error)

            def ended(error: Exception | None) -> None:
                with lock:
                    if state["done"]:
                        return
                    state["done"] = True
                    stopper.dispose()
                    if error is None:
                        observer.on_completed()
                    else:
                        observer.on_error(error)

            stopper.disposable = trigger.subscribe(on_stop, on_trigger_error,
                                                   scheduler=scheduler)
            if not state["done"]:
                upstream.disposable = source.subscribe(
                    on_next, ended, lambda: ended(None), scheduler=scheduler)
            return CompositeDisposable(stopper, upstream)

        return reactivex.create(subscribe)

    return operator


def _cancelled(cancel: Callable[[str], Any], reply_id: str, error: CancelledStreamError) -> None:
    """Call ``cancel(reply_id)``; an awaitable it gives runs as a task on the running loop;
    a failure is said in a note on ``error``."""
    try:
        result = cancel(reply_id)
    except Exception as failure:  # noqa: BLE001 - said on the error the reply ends with
        error.add_note(f"the cancel call for {reply_id!r} failed: "
                       f"{type(failure).__name__}: {failure}")
        return
    if not inspect.isawaitable(result):
        return
    try:
        task = asyncio.ensure_future(result, loop=asyncio.get_running_loop())
    except RuntimeError:  # (no loop runs here: the awaitable can never run)
        close = getattr(result, "close", None)
        if close is not None:
            close()
        error.add_note(f"the cancel call for {reply_id!r} returned an awaitable and no "
                       "event loop runs here to await it")
        return
    _PENDING.add(task)
    task.add_done_callback(_PENDING.discard)
