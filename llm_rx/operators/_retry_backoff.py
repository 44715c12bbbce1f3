"""``retry_backoff()``: subscribe again after a retryable error, waiting as the provider asks."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeVar

import reactivex
from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, SerialDisposable
from reactivex.scheduler import TimeoutScheduler

from ..errors import ProviderError
from ..sources._resume import backoff_delay

__all__ = ["backoff_delay", "retry_backoff"]

_T = TypeVar("_T")


def retry_backoff(
    max_attempts: int = 3,
    base_delay: float = 0.5,
    max_delay: float = 30.0,
    scheduler: abc.SchedulerBase | None = None,
    *,
    max_retry_after: float = 60.0,
) -> Callable[[Observable[_T]], Observable[_T]]:
    """Subscribe to the source again after an error whose ``retryable`` is true (a
    [`ProviderError`][llm_rx.ProviderError] for a 429, a 5xx, an overloaded provider), up to
    ``max_attempts`` subscriptions in all, waiting before each the longer of an exponential
    backoff with jitter and the error's ``retry_after`` (the provider's ``Retry-After``),
    the latter capped at ``max_retry_after`` (60 s, as the official SDKs cap it).

    ```text
    source:   -#            -#               -a-|          (# retryable, retry_after None)
    retry_backoff(max_attempts=3, base_delay=1)
    result:   ----(~1s)------(~2s)------------a-|
    ```

    Any other error, the last attempt's error, and an error after the attempt already
    emitted something are passed on at once: items already passed downstream cannot be taken
    back, and a second attempt's would follow them. Put it where one item is the whole
    reply — after ``to_response()`` (which turns a failure after the reply started into an
    interrupted ``Response``), so what is retried is a request that failed before anything
    of its reply arrived — over a source that re-sends on each subscription
    (``from_httpx(open_reply)`` with a callable, ``reactivex.defer``).

    When it gives up on a retryable error (the attempts are spent, or the attempt had
    emitted), or on an error that is not retryable after it retried, the error passed on
    says so in a note (``error.__notes__``, shown under its traceback): how many attempts,
    why, and each wait a provider asked for that was capped.

    The wait before attempt ``n + 1`` is ``min(max_delay, base_delay * 2 ** (n - 1))``
    times a jitter in ``[0.75, 1]``, or ``min(retry_after, max_retry_after)`` when that is
    longer. It runs on ``scheduler``, else the subscription's, else a timer thread: on a
    ``TestScheduler`` it is virtual time.

    Args:
        max_attempts: Subscriptions in all, the first included (1: no retry).
        base_delay: Seconds before the first retry (before jitter).
        max_delay: The longest backoff in seconds (a longer ``retry_after`` still wins, up
            to ``max_retry_after``).
        scheduler: Where the waits run.
        max_retry_after: The longest wait in seconds a provider's ``retry_after`` can ask
            for: a longer one is waited this long (the retry may be refused again; the
            error given up on says what was asked).

    Returns:
        An operator for ``.pipe()``.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    if base_delay < 0 or max_delay < 0 or max_retry_after < 0:
        raise ValueError("base_delay, max_delay and max_retry_after must not be negative")

    def operator(source: Observable[_T]) -> Observable[_T]:
        def subscribe(
            observer: abc.ObserverBase[_T], scheduler_: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            clock = scheduler or scheduler_ or TimeoutScheduler.singleton()
            subscription = SerialDisposable()
            timer = SerialDisposable()
            attempt = 0
            emitted = False
            capped: list[str] = []  # (each wait a provider asked for that was capped)

            def on_next(value: _T) -> None:
                nonlocal emitted
                emitted = True
                observer.on_next(value)

            def on_error(error: Exception) -> None:
                retryable = isinstance(error, ProviderError) and error.retryable
                if emitted or attempt >= max_attempts or not retryable:
                    note = _given_up(attempt, max_attempts, emitted, retryable, capped)
                    if note is not None:
                        error.add_note(note)
                    observer.on_error(error)
                    return
                wait = backoff_delay(attempt, base_delay, max_delay, random.random())
                told = error.retry_after if isinstance(error, ProviderError) else None
                if told is not None and told > wait:
                    wait = max(wait, min(told, max_retry_after))
                    if told > max_retry_after:
                        capped.append(f"the provider asked to wait {told:g} s before attempt "
                                      f"{attempt + 1}; waited {wait:g} s (max_retry_after)")
                timer.disposable = clock.schedule_relative(wait, start)

            def start(_: abc.SchedulerBase | None = None, __: Any = None) -> None:
                nonlocal attempt, emitted
                attempt += 1
                emitted = False
                subscription.disposable = source.subscribe(
                    on_next, on_error, observer.on_completed, scheduler=scheduler_
                )

            start()
            return CompositeDisposable(subscription, timer)

        return reactivex.create(subscribe)

    return operator


def _given_up(
    attempt: int, max_attempts: int, emitted: bool, retryable: bool, capped: list[str]
) -> str | None:
    """What the error passed on says of the retries (``None``: nothing was retried, nor
    could have been)."""
    if retryable and emitted:
        why = "the attempt had already passed items downstream (they cannot be taken back)"
    elif retryable and max_attempts > 1:
        why = f"all {max_attempts} attempts (max_attempts) failed"
    elif attempt > 1:
        why = "this error is not retryable"
    else:
        return None
    return "; ".join([f"retry_backoff gave up at attempt {attempt}: {why}", *capped])
