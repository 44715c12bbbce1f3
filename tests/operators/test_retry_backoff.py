"""retry_backoff: only retryable errors, exponential backoff with jitter, the provider's
retry_after honoured; on virtual time. ProviderError.retry_after from headers and bodies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from itertools import pairwise
from typing import Any

import httpx
import pytest
import reactivex
from reactivex import Observable
from reactivex.testing import TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError, ProviderError
from llm_rx.operators._retry_backoff import backoff_delay
from llm_rx.wire.http import http_error, retry_after

from ..captures import capture
from ..loopback import server

TEXT = capture("openai/chat-gpt41-nano-text.sse").data


def _attempts(
    failures: list[Exception], **options: Any
) -> tuple[list[float], list[Any]]:
    """Subscribe on a TestScheduler to a source that fails with each of ``failures`` in turn,
    then emits "ok": the virtual times of the subscriptions, and what came out."""
    scheduler = TestScheduler()
    times: list[float] = []

    def attempt(_: Any) -> Observable[str]:
        times.append(scheduler.clock)
        if len(times) <= len(failures):
            return reactivex.throw(failures[len(times) - 1])
        return reactivex.of("ok")

    out: list[Any] = []
    reactivex.defer(attempt).pipe(lxo.retry_backoff(**options)).subscribe(
        out.append, out.append, lambda: out.append("completed"), scheduler=scheduler
    )
    scheduler.start()
    return times, out


def _limited(retry_after: float | None = None) -> ProviderError:
    return ProviderError("busy", status=429, retryable=True, retry_after=retry_after)


def test_retry_backoff_waits_an_exponential_backoff_with_jitter() -> None:
    times, out = _attempts([_limited(), _limited()], max_attempts=3, base_delay=1.0)
    assert out == ["ok", "completed"]
    first, second = times[1] - times[0], times[2] - times[1]
    assert 0.75 <= first <= 1.0
    assert 1.5 <= second <= 2.0


def test_retry_backoff_honours_the_providers_retry_after_when_longer() -> None:
    times, out = _attempts([_limited(retry_after=12.5)], base_delay=0.5)
    assert out == ["ok", "completed"]
    assert times[1] - times[0] == pytest.approx(12.5)


def test_retry_backoff_keeps_its_backoff_when_retry_after_is_shorter() -> None:
    times, _ = _attempts([_limited(), _limited(retry_after=0.1)], base_delay=4.0)
    assert times[2] - times[1] >= 6.0


def test_retry_backoff_passes_a_non_retryable_error_on_at_once() -> None:
    refused = ProviderError("bad request", status=400, retryable=False)
    times, out = _attempts([refused])
    assert times == [0]
    assert out == [refused]


def test_retry_backoff_never_retries_a_cut_stream() -> None:
    cut = IncompleteStreamError("cut")
    times, out = _attempts([cut])
    assert (times, out) == ([0], [cut])


def test_retry_backoff_gives_up_after_max_attempts() -> None:
    errors = [_limited(), _limited(), _limited()]
    times, out = _attempts(errors, max_attempts=3)
    assert len(times) == 3
    assert out == [errors[2]]


def test_retry_backoff_caps_the_backoff_at_max_delay() -> None:
    times, _ = _attempts([_limited()] * 5, max_attempts=6, base_delay=1.0, max_delay=3.0)
    assert max(b - a for a, b in pairwise(times)) <= 3.0
    assert backoff_delay(10, 1.0, 3.0, 0.0) == 3.0


def test_retry_backoff_does_not_retry_after_items_passed() -> None:
    scheduler = TestScheduler()
    subscriptions = []

    def attempt(_: Any) -> Observable[str]:
        subscriptions.append(scheduler.clock)
        return reactivex.concat(reactivex.of("a"), reactivex.throw(_limited()))

    out: list[Any] = []
    reactivex.defer(attempt).pipe(lxo.retry_backoff()).subscribe(
        out.append, out.append, scheduler=scheduler
    )
    scheduler.start()
    assert len(subscriptions) == 1
    assert out[0] == "a"
    assert isinstance(out[1], ProviderError)


def test_retry_backoff_refuses_no_attempts() -> None:
    with pytest.raises(ValueError):
        lxo.retry_backoff(max_attempts=0)
    with pytest.raises(ValueError, match="max_retry_after"):
        lxo.retry_backoff(max_retry_after=-1)


# -- the provider's wait capped, and the giving up said -------------------------------------------


def test_retry_backoff_caps_a_providers_retry_after_at_60_seconds() -> None:
    # bug class: a Retry-After of an hour held the pipeline for an hour
    times, out = _attempts([_limited(retry_after=3600.0)], base_delay=0.5)
    assert out == ["ok", "completed"]
    assert times[1] - times[0] == pytest.approx(60.0)


def test_retry_backoff_max_retry_after_sets_the_cap() -> None:
    times, _ = _attempts([_limited(retry_after=3600.0)], max_retry_after=120.0)
    assert times[1] - times[0] == pytest.approx(120.0)
    times, _ = _attempts([_limited(retry_after=3600.0)], max_retry_after=0.0, base_delay=1.0)
    assert 0.75 <= times[1] - times[0] <= 1.0  # (only the backoff is left)


def test_retry_backoff_a_retry_after_under_the_cap_is_honoured_past_max_delay() -> None:
    times, _ = _attempts([_limited(retry_after=45.0)], max_delay=30.0)
    assert times[1] - times[0] == pytest.approx(45.0)


def test_retry_backoff_says_it_gave_up_after_its_attempts_and_what_it_capped() -> None:
    errors = [_limited(retry_after=3600.0), _limited(), _limited()]
    times, out = _attempts(errors, max_attempts=3, base_delay=1.0)
    assert len(times) == 3
    assert out == [errors[2]]
    [note] = errors[2].__notes__
    assert note.startswith("retry_backoff gave up at attempt 3: all 3 attempts (max_attempts) "
                           "failed")
    assert "the provider asked to wait 3600 s before attempt 2; waited 60 s (max_retry_after)" \
        in note


def test_retry_backoff_says_why_it_stopped_on_an_error_not_retryable() -> None:
    refused = ProviderError("bad request", status=400, retryable=False)
    times, out = _attempts([_limited(), refused])
    assert len(times) == 2
    assert out == [refused]
    assert refused.__notes__ == ["retry_backoff gave up at attempt 2: this error is not "
                                 "retryable"]


def test_retry_backoff_adds_no_note_when_nothing_was_retried() -> None:
    refused = ProviderError("bad request", status=400, retryable=False)
    _, out = _attempts([refused])
    assert out == [refused]
    assert not hasattr(refused, "__notes__")
    single = _limited()
    _, out = _attempts([single], max_attempts=1)
    assert out == [single]
    assert not hasattr(single, "__notes__")


def test_retry_backoff_says_it_did_not_retry_after_items_passed() -> None:
    failure = _limited()
    out: list[Any] = []
    scheduler = TestScheduler()
    reactivex.defer(lambda _: reactivex.concat(reactivex.of("a"), reactivex.throw(failure))).pipe(
        lxo.retry_backoff()).subscribe(out.append, out.append, scheduler=scheduler)
    scheduler.start()
    assert out == ["a", failure]
    assert "already passed items downstream" in failure.__notes__[0]


def test_retry_backoff_the_note_reaches_the_error_run_raises() -> None:
    with server(b'{"error": {"type": "rate_limit_error", "message": "slow down"}}',
                "application/json", status=429, headers={"Retry-After": "0"}) as running, \
            httpx.Client() as client:
        def open_reply() -> httpx.Response:
            request = client.build_request("POST", f"{running.url}/v1/messages")
            return client.send(request, stream=True)

        with pytest.raises(ProviderError) as raised:
            llm_rx.from_httpx(open_reply).pipe(
                lxo.to_response(), lxo.retry_backoff(max_attempts=2, base_delay=0.0)).run()
    assert len(running.paths) == 2
    assert "all 2 attempts (max_attempts) failed" in raised.value.__notes__[0]


# -- retry_after from what the provider said ---------------------------------------------------


def test_retry_after_in_seconds_and_milliseconds() -> None:
    assert retry_after({"retry-after": "7"}, now=0.0) == 7.0
    assert retry_after({"retry-after": "1.5"}, now=0.0) == 1.5
    assert retry_after({"retry-after-ms": "250", "retry-after": "7"}, now=0.0) == 0.25
    assert retry_after({}, now=0.0) is None
    assert retry_after({"retry-after": "soon"}, now=0.0) is None
    assert retry_after({"retry-after": "-3"}, now=0.0) == 0.0


def test_retry_after_as_an_http_date() -> None:
    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert retry_after({"retry-after": later}, now=now.timestamp()) == 90.0
    earlier = format_datetime(now - timedelta(seconds=90), usegmt=True)
    assert retry_after({"retry-after": earlier}, now=now.timestamp()) == 0.0


def test_retry_after_from_geminis_retry_info() -> None:
    body = (
        b'{"error": {"code": 429, "message": "Resource has been exhausted", '
        b'"status": "RESOURCE_EXHAUSTED", "details": [{"@type": '
        b'"type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s"}]}}'
    )
    error = http_error(429, body, {}, "gemini", now=0.0)
    assert error.retryable
    assert error.retry_after == 31.0
    assert http_error(429, body, {"Retry-After": "5"}, "gemini", now=0.0).retry_after == 5.0


def test_retry_after_from_a_real_429_over_http() -> None:
    body = b'{"error": {"type": "rate_limit_error", "message": "slow down"}}'
    headers = {"Retry-After": "3", "Content-Type": "application/json"}
    with server(body, "application/json", status=429, headers=headers) as running, \
            httpx.Client() as client:
        reply = client.send(client.build_request("POST", f"{running.url}/v1/messages"),
                            stream=True)
        with pytest.raises(ProviderError) as raised:
            llm_rx.from_httpx(reply).pipe(lxo.to_response()).run()
    assert raised.value.retryable
    assert raised.value.retry_after == 3.0


def test_retry_backoff_over_http_resends_after_a_429() -> None:
    headers = {"Retry-After": "0"}
    with server(TEXT, status=[429, 200], headers=headers) as running, \
            httpx.Client() as client:
        def open_reply() -> httpx.Response:
            request = client.build_request("POST", f"{running.url}/v1/chat/completions")
            return client.send(request, stream=True)

        response = llm_rx.from_httpx(open_reply).pipe(
            lxo.to_response(), lxo.retry_backoff(base_delay=0.0)
        ).run()
    assert response.complete
    assert len(running.paths) == 2
