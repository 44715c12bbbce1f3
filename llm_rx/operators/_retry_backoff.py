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

__all__ = ["backoff_delay", "retry_backoff"]

_T = TypeVar("_T")


def retry_backoff(
    max_attempts: int = 3,
    base_delay: float = 0.5,
    max_delay: float = 30.0,
    scheduler: abc.SchedulerBase | None = None,
) -> Callable[[Observable[_T]], Observable[_T]]:
    """Subscribe to the source again after an error whose ``retryable`` is true (a
    [`ProviderError`][llm_rx.ProviderError] for a 429, a 5xx, an overloaded provider), up to
    ``max_attempts`` subscriptions in all, waiting before each the longer of an exponential
    backoff with jitter and the error's ``retry_after`` (the provider's ``Retry-After``).

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

    The wait before attempt ``n + 1`` is ``min(max_delay, base_delay * 2 ** (n - 1))``
    times a jitter in ``[0.75, 1]``, or ``retry_after`` when that is longer. It runs on
    ``scheduler``, else the subscription's, else a timer thread: on a ``TestScheduler`` it
    is virtual time.

    Args:
        max_attempts: Subscriptions in all, the first included (1: no retry).
        base_delay: Seconds before the first retry (before jitter).
        max_delay: The longest backoff in seconds (a longer ``retry_after`` still wins).
        scheduler: Where the waits run.

    Returns:
        An operator for ``.pipe()``.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    if base_delay < 0 or max_delay < 0:
        raise ValueError("base_delay and max_delay must not be negative")

    def operator(source: Observable[_T]) -> Observable[_T]:
        def subscribe(
            observer: abc.ObserverBase[_T], scheduler_: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            clock = scheduler or scheduler_ or TimeoutScheduler.singleton()
            subscription = SerialDisposable()
            timer = SerialDisposable()
            attempt = 0
            emitted = False

            def on_next(value: _T) -> None:
                nonlocal emitted
                emitted = True
                observer.on_next(value)

            def on_error(error: Exception) -> None:
                retryable = isinstance(error, ProviderError) and error.retryable
                if emitted or attempt >= max_attempts or not retryable:
                    observer.on_error(error)
                    return
                wait = backoff_delay(attempt, base_delay, max_delay, random.random())
                told = error.retry_after if isinstance(error, ProviderError) else None
                if told is not None and told > wait:
                    wait = told
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


def backoff_delay(attempt: int, base_delay: float, max_delay: float, draw: float) -> float:
    """The wait after the ``attempt``-th failed attempt (1 first): the exponential backoff,
    capped at ``max_delay``, times a jitter of ``1 - draw / 4`` (``draw`` in ``[0, 1)``)."""
    backoff = min(max_delay, base_delay * 2.0 ** (attempt - 1))
    return backoff * (1.0 - draw / 4)
