"""terminal_display(): rich Live on an injected terminal console (frames captured write by
write, in virtual time), and plain incremental text when the output is not a terminal."""

from __future__ import annotations

import io

from reactivex import operators as ops
from reactivex.testing import TestScheduler
from rich.console import Console
from rich.text import Text

import llm_rx
from llm_rx import operators as lxo
from llm_rx.cli import main
from llm_rx.data import capture_path
from llm_rx.events import BlockStart, BlockStop, MessageStart, MessageStop, ToolArgsDelta
from llm_rx.sinks import PlainPrinter, terminal_display

from ..captures import capture
from .timeline import cold_timeline, events_of

HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"


class Writes(io.StringIO):
    """A terminal's output, one entry per write: rich writes each frame at once."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


class FakeTty(Writes):
    def isatty(self) -> bool:
        return True


def _terminal(out: io.StringIO, height: int = 40) -> Console:
    return Console(file=out, force_terminal=True, force_interactive=True, width=70,
                   height=height, color_system="standard")


def _plain(ansi: str) -> str:
    return Text.from_ansi(ansi).plain


def _replay(name: str, console: Console, cut: int = 0) -> tuple[llm_rx.Response, int]:
    """Replay a capture one event per tick into the display; the response and the ticks."""
    scheduler = TestScheduler()
    events = events_of(capture(name).data)
    source = cold_timeline(scheduler, events[: len(events) - cut])
    observer = scheduler.start(lambda: source.pipe(
        terminal_display(console, refresh_per_second=0.1), lxo.to_response()
    ))
    response: llm_rx.Response = observer.messages[0].value.value
    return response, len(events) - cut


def test_terminal_display_live_frames_at_a_bounded_rate_final_frame_in_full() -> None:
    out = Writes()
    response, ticks = _replay("anthropic/thinking-signature.sse", _terminal(out, height=12))
    assert response == llm_rx.reassemble(capture("anthropic/thinking-signature.sse").data)
    frames = [w for w in out.writes if w not in (HIDE_CURSOR, SHOW_CURSOR)]
    assert 3 <= len(frames) <= ticks // 10 + 2  # ≤ one per 10 ticks, plus the final frame
    for frame in frames[:-1]:  # while streaming: only the newest lines that fit (12 rows)
        assert _plain(frame).count("\n") <= 12
        assert "streaming…" in _plain(frame)
    final = _plain(frames[-1])
    for line in ("Here are the basic steps for safely crossing the street:",
                 "Wait for the pedestrian \"Walk\" signal",
                 "Always prioritize safety over speed when crossing"):
        assert line in final  # the whole answer, although it is taller than the terminal
    assert "▸ thinking (202 characters)" in final  # collapsed to one line
    assert "pedestrian safety. I should" not in final
    assert "usage: input 43 · output 282" in final
    assert "stop: end_turn" in final
    assert out.getvalue().endswith("\n" + SHOW_CURSOR)  # the cursor ends on a fresh line


def test_terminal_display_shows_the_thinking_tail_while_it_streams() -> None:
    out = Writes()
    _replay("anthropic/thinking-signature.sse", _terminal(out))
    frames = [_plain(w) for w in out.writes]
    assert any("▸ thinking… (" in f and "pedestrian safety" in f for f in frames)


def test_terminal_display_marks_an_interrupted_reply_in_red() -> None:
    out = Writes()
    response, _ = _replay("openai/chat-text-basic.sse", _terminal(out), cut=3)
    assert response.stop_reason == "interrupted"
    final = out.writes[-1]
    assert "⚠ Interrupted: the events ended before the end of the message" in _plain(final)
    assert "\x1b[1;31m⚠ Interrupted" in final  # bold red


def test_terminal_display_tool_calls() -> None:
    out = Writes()
    _replay("openai/chat-parallel-tool-calls.sse", _terminal(out))
    final = _plain(out.writes[-1])
    assert "tool call GetWeatherArgs" in final
    assert '"city": "Edinburgh"' in final
    assert "tool call get_stock_price" in final


def test_terminal_display_not_a_terminal_writes_plain_text() -> None:
    data = capture("anthropic/thinking-signature.sse").data
    out = io.StringIO()
    response = llm_rx.from_bytes(data).pipe(terminal_display(out=out), lxo.to_response()).run()
    expected = io.StringIO()
    printer = PlainPrinter(expected)
    for event in events_of(data):
        printer.on_next(event)
    printer.on_completed()
    assert out.getvalue() == expected.getvalue()
    assert "\x1b" not in out.getvalue()  # no cursor movement, nothing garbled
    assert out.getvalue().endswith(response.text[-40:] + "\n")


def test_terminal_display_console_that_is_not_a_terminal_writes_plain_text() -> None:
    out = io.StringIO()
    console = Console(file=out)  # a StringIO is no terminal
    llm_rx.from_bytes(capture("openai/chat-text-basic.sse").data).pipe(
        terminal_display(console)
    ).run()
    assert out.getvalue().startswith("I'm unable to provide real-time weather updates.")
    assert out.getvalue().endswith(".\n")
    assert "\x1b" not in out.getvalue()


def test_terminal_display_plain_text_marks_an_interrupted_reply() -> None:
    data = capture("openai/chat-text-basic.sse").data
    out = io.StringIO()
    llm_rx.from_bytes(data[:2000]).pipe(terminal_display(out=out), lxo.to_response()).run()
    assert out.getvalue().startswith("I'm unable to provide real-time\n")
    assert "\n[interrupted: the stream ended inside a frame" in out.getvalue()
    assert out.getvalue().endswith(")]\n")


def test_plain_printer_marks_events_that_end_before_the_reply() -> None:
    events = events_of(capture("openai/chat-text-basic.sse").data)
    out = io.StringIO()
    printer = PlainPrinter(out)
    for event in events[:-3]:  # as after take_until: no MessageStop, no error
        printer.on_next(event)
    printer.on_completed()
    assert out.getvalue().endswith(
        "weather app.\n[interrupted: the events ended before the end of the reply]\n"
    )


def test_terminal_display_cli_replay_uses_rich_on_a_terminal() -> None:
    out = FakeTty()
    path = capture("openai/chat-text-basic.sse").path
    assert main(["replay", str(path), "--delay", "0"], out=out) == 0
    text = out.getvalue()
    assert HIDE_CURSOR in text
    assert SHOW_CURSOR in text
    assert "I'm unable to provide real-time weather updates." in _plain(text)
    assert "-- openai-chat · gpt-4o-2024-08-06 · stop end_turn · complete" in text


def test_terminal_display_cli_replay_is_plain_when_not_a_terminal() -> None:
    out = io.StringIO()
    path = capture("openai/chat-text-basic.sse").path
    assert main(["replay", str(path)], out=out) == 0
    assert "\x1b" not in out.getvalue()
    assert out.getvalue().startswith("I'm unable to provide real-time weather updates.")


def test_terminal_plain_text_marks_a_disposed_reply_and_ends_its_line() -> None:
    out = io.StringIO()
    data = capture("anthropic/thinking-signature.sse").data
    llm_rx.from_bytes(data).pipe(terminal_display(out=out), ops.take(8)).run()
    text = out.getvalue()
    assert text.endswith("[cancelled]\n")
    assert text.count("[cancelled]") == 1


def test_plain_text_closes_each_parallel_tool_call_on_its_own_line() -> None:
    # bug: the first call's ")" came after the second call's line (its stop arrives last)
    out = io.StringIO()
    path = capture_path("openai/chat-parallel-tool-calls.sse")
    assert main(["replay", str(path)], out=out) == 0
    lines = out.getvalue().split("\n")
    assert lines[:2] == [
        '[tool call] GetWeatherArgs({"city": "Edinburgh", "country": "GB", "units": "c"})',
        '[tool call] get_stock_price({"ticker": "AAPL", "exchange": "NASDAQ"})']
    assert lines[2].startswith("-- openai-chat")


def test_plain_text_interleaved_tool_calls_each_reopen_their_line() -> None:
    out = io.StringIO()
    printer = PlainPrinter(out)
    for event in (MessageStart("p"), BlockStart(0, "tool_call", "a", "one"),
                  ToolArgsDelta(0, '{"x": '), BlockStart(1, "tool_call", "b", "two"),
                  ToolArgsDelta(1, "{}"), ToolArgsDelta(0, "1}"), BlockStop(1), BlockStop(0),
                  MessageStop("tool_use")):
        printer.on_next(event)
    printer.on_completed()
    assert out.getvalue() == ('[tool call] one({"x": )\n[tool call] two({})\n'
                              '[tool call] one(…1})\n')
