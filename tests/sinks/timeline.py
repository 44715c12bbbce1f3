"""Helpers the display tests share: a reply's events laid out in virtual time, a frame log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.coldobservable import ColdObservable

import llm_rx
from llm_rx.events import Event
from llm_rx.fold.builder import Snapshot


def events_of(data: bytes | Path) -> list[Event]:
    """Every event a recorded body decodes to (the body must be a whole reply)."""
    source = llm_rx.from_file(data) if isinstance(data, Path) else llm_rx.from_bytes(data)
    events: list[Event] = source.pipe(ops.to_list()).run()
    return events


def cold_timeline(
    scheduler: TestScheduler, events: list[Event], *, start: int = 1, step: int = 1,
    error: Exception | None = None,
) -> ColdObservable[Event]:
    """``events`` one per ``step`` ticks from ``start`` (after subscription), then the end."""
    messages: list[Any] = [
        ReactiveTest.on_next(start + n * step, event) for n, event in enumerate(events)
    ]
    end = start + len(events) * step
    messages.append(
        ReactiveTest.on_error(end, error) if error is not None else ReactiveTest.on_completed(end)
    )
    return scheduler.create_cold_observable(*messages)


class FrameLog:
    """A ``LiveView`` that records each frame with the virtual time it was rendered at."""

    def __init__(self, scheduler: TestScheduler) -> None:
        self.scheduler = scheduler
        self.frames: list[tuple[float, str, Snapshot]] = []

    def update(self, snapshot: Snapshot) -> None:
        self.frames.append((self.scheduler.clock, "update", snapshot))

    def close(self, snapshot: Snapshot) -> None:
        self.frames.append((self.scheduler.clock, "close", snapshot))

    @property
    def times(self) -> list[float]:
        return [time for time, _, _ in self.frames]

    @property
    def kinds(self) -> list[str]:
        return [kind for _, kind, _ in self.frames]

    @property
    def last(self) -> Snapshot:
        return self.frames[-1][2]
