"""The live displays' footers show the price when cost() is in the pipeline: after the
display, or beside it in a fan_out()."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from reactivex.testing import TestScheduler
from rich.console import Console
from rich.text import Text

import llm_rx
from llm_rx import operators as lxo
from llm_rx.sinks import terminal_display
from llm_rx.sinks._jupyter import render_frame
from llm_rx.sinks._live import live

from ..captures import capture
from .timeline import FrameLog, cold_timeline, events_of

AT = datetime(2026, 11, 1, tzinfo=UTC)
NAME = "anthropic/thinking-signature.sse"


def _price() -> str:
    """The footer line of the capture's cost, as cost() gives it on its own."""
    cost: lxo.Cost = llm_rx.from_file(capture(NAME).path).pipe(lxo.cost(at=AT)).run()
    return cost.text()


def _console(out: io.StringIO) -> Console:
    return Console(file=out, force_terminal=True, force_interactive=True, width=200,
                   height=60, color_system="standard")


def test_footer_shows_the_cost_of_an_operator_after_the_display() -> None:
    # bug class: the display's last frame drawn before the price is known (it ends first)
    scheduler = TestScheduler()
    out = io.StringIO()
    source = cold_timeline(scheduler, events_of(capture(NAME).path))
    scheduler.start(lambda: source.pipe(
        terminal_display(_console(out), refresh_per_second=0.1), lxo.cost(at=AT)))
    last = Text.from_ansi(out.getvalue()).plain.rstrip().splitlines()[-1]
    assert last.endswith("stop: end_turn · " + _price()), last


def test_footer_shows_the_cost_of_a_sibling_in_fan_out() -> None:
    scheduler = TestScheduler()
    log = FrameLog(scheduler)
    source = cold_timeline(scheduler, events_of(capture(NAME).path))
    scheduler.start(lambda: source.pipe(lxo.fan_out(
        live(lambda: log, refresh_per_second=0.1, scheduler=scheduler), lxo.to_response(),
        lxo.cost(at=AT))))
    _, kind, snapshot = log.frames[-1]
    assert kind == "close"
    assert snapshot.notes == (_price(),)
    frame = render_frame(snapshot.response, final=True, notes=snapshot.notes)
    assert frame.plain.splitlines()[-1].endswith(_price())


def test_footer_has_no_cost_without_the_operator() -> None:
    # bug class: a note leaking to a display in another pipeline subscribed later
    scheduler = TestScheduler()
    log = FrameLog(scheduler)
    source = cold_timeline(scheduler, events_of(capture(NAME).path))
    scheduler.start(lambda: source.pipe(
        live(lambda: log, refresh_per_second=0.1, scheduler=scheduler), lxo.to_response()))
    assert log.frames[-1][2].notes == ()
