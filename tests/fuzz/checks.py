"""The invariants every mutated body must keep, checked for one case.

1. Nothing but an ``LlmRxError`` escapes ``reassemble()`` (a ``Response`` or a typed error),
   and the ``Response`` dumps to JSON and converts ``to_native`` without an error.
2. ``from_bytes(body).pipe(to_response()).run()`` ends (under a deadline) with the same result.
3. Any re-chunking of the body gives the same result, and the same events (kinds compared).
4. With the fast paths off, the result is the same, and so are the events.
5. A capture cut before its terminal frame is never ``complete``.

A result is the ``Response``'s ``model_dump(mode="json")``, or the error's type, message and
frame (``raw``). Events are compared as ``(kind, *fields)``: a ``Response`` cannot tell a
``ThinkingDelta`` from the ``TextDelta`` it replaced when both name the same block.
"""

from __future__ import annotations

import itertools
import signal
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import LlmRxError
from llm_rx.sources._engine import decode_all, new_decoder
from llm_rx.speed import fast_paths

__all__ = ["Failure", "Hang", "check", "decoded", "fast_paths_off"]

DEADLINE = 5.0  # seconds one run may take before it counts as a hang


class Hang(BaseException):
    """The deadline passed (a BaseException, so no ``except Exception`` swallows it)."""


@dataclass(frozen=True)
class Failure:
    invariant: str  # escape, decode-escape, pipeline-escape, hang, rechunk, fast-path, pipeline,
    # truncation
    detail: str
    where: str  # where it was raised (the innermost llm_rx frame), for grouping

    @property
    def signature(self) -> tuple[str, str]:
        return (self.invariant, self.where)


@contextmanager
def fast_paths_off() -> Iterator[None]:
    """Every decoding shortcut switched off (the slow, frame-by-frame path only)."""
    with fast_paths(False):
        yield


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang()


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in this thread after ``seconds`` of this process's CPU time (main
    thread only; elsewhere, no deadline).

    CPU time, not wall time: a decoder that loops forever spends CPU, while a machine busy
    with other work only stretches the wall clock (a wall-clock alarm fired on a loaded
    machine, inside the garbage collector's callback, on input that was not hanging)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGPROF, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _where(error: BaseException) -> str:
    """The innermost frame of llm_rx (or else the last one) the error passed through."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if "/llm_rx/" in f.filename] or frames[-1:]
    if not inside:
        return type(error).__name__
    last = inside[-1]
    return f"{type(error).__name__} at {last.filename.rsplit('/llm_rx/', 1)[-1]}:{last.lineno}"


def _error_result(error: LlmRxError) -> tuple[Any, ...]:
    return ("error", type(error).__name__, error.message, error.raw)


def reassembled(chunks: Sequence[bytes], provider: str | None) -> tuple[Any, ...]:
    try:
        response = llm_rx.reassemble(list(chunks), provider)
    except LlmRxError as error:
        return _error_result(error)
    llm_rx.to_native(response, response.provider)  # (it must not fail on what was kept)
    return ("response", response.model_dump(mode="json"))


def decoded(chunks: Sequence[bytes], provider: str | None) -> tuple[Any, ...]:
    """The events the chunks decode to, each as ``(kind, *fields)``, then the error, if any."""
    events: list[Any] = []
    try:
        decode_all(new_decoder(provider), list(chunks), events.extend)  # type: ignore[arg-type]
    except LlmRxError as error:
        return ("events", [(type(e).__name__, *e) for e in events], *_error_result(error))
    return ("events", [(type(e).__name__, *e) for e in events])


def piped(body: bytes, provider: str | None) -> tuple[Any, ...]:
    try:
        response = llm_rx.from_bytes(body, provider).pipe(lxo.to_response()).run()
    except LlmRxError as error:
        return _error_result(error)
    return ("response", response.model_dump(mode="json"))


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    try:
        return a == b
    except RecursionError:  # a value nested deeper than Python compares: kept unbounded
        return False


def _diff(a: Any, b: Any, path: str = "") -> str:
    """Where two results first differ, and the two values there (shortened)."""
    try:
        if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
            key = next(k for k in a if a[k] != b[k])
            return _diff(a[key], b[key], f"{path}[{key!r}]")
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
            number = next(i for i in range(len(a)) if a[i] != b[i])
            return _diff(a[number], b[number], f"{path}[{number}]")
    except RecursionError:
        pass
    return f"at {path or 'top'}: {_short(a)} != {_short(b)}"


def _short(result: Any) -> str:
    try:
        text = repr(result)
    except RecursionError:
        text = "(too deep to print)"
    return text if len(text) <= 300 else text[:300] + "..."


def _guarded(
    name: str, run: Callable[[], tuple[Any, ...]], limit: float
) -> tuple[Any, ...] | Failure:
    """``run()``'s result, or the Failure it is (an escaping exception, a hang)."""
    try:
        with deadline(limit):
            return run()
    except Hang:
        return Failure("hang", f"{name} did not end within {limit} s", f"hang in {name}")
    except Exception as error:  # noqa: BLE001 - what the invariant is about
        invariant = "escape" if name == "reassemble" else f"{name}-escape"
        return Failure(invariant, f"{type(error).__name__}: {str(error)[:200]}", _where(error))


def check(
    body: bytes,
    provider: str | None,
    cuts: Sequence[Sequence[int]],
    terminal: int | None = None,
    limit: float = DEADLINE,
) -> list[Failure]:
    """The invariants ``body`` breaks: whole, cut at each list of ``cuts``, fast paths off,
    through the pipeline; ``terminal`` (for a prefix of a capture) is where its terminal frame
    starts, when the prefix ends before it."""
    whole = _guarded("reassemble", lambda: reassembled([body], provider), limit)
    if isinstance(whole, Failure):
        return [whole]
    failures: list[Failure] = []
    events = _guarded("decode", lambda: decoded([body], provider), limit)
    if isinstance(events, Failure):
        return [events]
    for points in cuts:
        pieces = _split(body, points)
        got = _guarded("reassemble", lambda pieces=pieces: reassembled(pieces, provider), limit)
        if isinstance(got, Failure):
            failures.append(got)
        elif not _same(got, whole):
            failures.append(Failure("rechunk", f"cuts {sorted(set(points))[:20]}: "
                                    f"{_diff(got, whole)}", "rechunk"))
        got = _guarded("decode", lambda pieces=pieces: decoded(pieces, provider), limit)
        if isinstance(got, Failure):
            failures.append(got)
        elif not _same(got, events):
            failures.append(Failure("rechunk", f"cuts {sorted(set(points))[:20]}: "
                                    f"{_diff(got, events)}", "rechunk"))
    with fast_paths_off():
        slow = _guarded("reassemble", lambda: reassembled([body], provider), limit)
        slow_events = _guarded("decode", lambda: decoded([body], provider), limit)
    if isinstance(slow, Failure):
        failures.append(slow)
    elif not _same(slow, whole):
        failures.append(Failure("fast-path", _diff(slow, whole), "fast-path"))
    if isinstance(slow_events, Failure):
        failures.append(slow_events)
    elif not _same(slow_events, events):
        failures.append(Failure("fast-path", _diff(slow_events, events), "fast-path"))
    rx = _guarded("pipeline", lambda: piped(body, provider), limit)
    if isinstance(rx, Failure):
        failures.append(rx)
    elif not _same(rx, whole):
        failures.append(Failure("pipeline", _diff(rx, whole), "pipeline"))
    if terminal is not None and whole[0] == "response" and whole[1]["complete"]:
        failures.append(Failure("truncation", f"cut before the terminal frame at {terminal} "
                                "but complete", "truncation"))
    return failures


def _split(body: bytes, points: Sequence[int]) -> list[bytes]:
    edges = sorted({0, len(body), *(min(max(p, 0), len(body)) for p in points)})
    return [body[a:b] for a, b in itertools.pairwise(edges)]
