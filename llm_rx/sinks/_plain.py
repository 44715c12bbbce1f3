"""A plain-text live display: writes a reply as it arrives to any text stream."""

from __future__ import annotations

from typing import TextIO, cast

from ..events import (
    BlockStart,
    BlockStop,
    Event,
    MessageStop,
    RefusalDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from ..fold.builder import fold_error
from ._format import ending_text
from ._term_text import terminal_text

__all__ = ["PlainPrinter"]

#: the blocks written as a call's line, ``[label] name(arguments)``
_CALLS = {"tool_call": "tool call", "approval_request": "approval request"}


class PlainPrinter:
    """Writes text as it lands, thinking and tool calls on lines of their own.

    Used as a tap (``ops.do_action(printer.on_next, printer.on_error, printer.on_completed)``):
    it writes, it never changes the stream. Output is plain text (no cursor movement), so it
    stays readable when it is not a terminal; it always ends with a newline. The reply's
    control characters and escape sequences are dropped (``_term_text``). Parallel tool
    calls each get their line, closed by ``)``, and so does a request to approve one
    (``[approval request: <server>] name(arguments)``); one whose arguments go on after another's
    began gets a new line, marked ``…``. A reply that
    ended without its end (an error, or events that stopped early) is marked interrupted.

    Args:
        out: The text stream written to (flushed after each write).
    """

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._kinds: dict[int, str] = {}
        self._names: dict[int, str] = {}  # a tool call's name, to reopen its line
        self._line: int | None = None  # the block whose line is being written
        self._at_line_start = True
        self._ended = False  # the reply's own end (MessageStop) arrived
        self._closed = False  # the events ended (completed or failed): the last line is out

    def _write(self, text: str) -> None:
        """Write ``text`` (which holds what a provider wrote: terminal-escaped here)."""
        text = terminal_text(text)
        if text:
            self.out.write(text)
            self._at_line_start = text.endswith("\n")
            self.out.flush()

    def _newline(self) -> None:
        if not self._at_line_start:
            self._write("\n")

    def _leave(self) -> None:
        """End the line of the block being written: a tool call's with its ``)``."""
        if self._line is not None and self._kinds.get(self._line) in _CALLS:
            self._write(")\n")
        self._line = None

    def _into(self, index: int) -> None:
        """Go on writing block ``index``: a tool call whose line another block's took over
        (parallel calls, interleaved) gets a line of its own again, marked ``…``."""
        if self._line == index or index not in self._kinds:
            return
        self._leave()
        if self._kinds[index] in _CALLS:
            self._newline()
            self._write(f"[{_CALLS[self._kinds[index]]}] {self._names[index]}(…")
        self._line = index

    def on_next(self, event: Event) -> None:
        """Write what the event adds: its text, or the line that opens or closes a block.

        Args:
            event: The next event of the reply.
        """
        kind = type(event)
        if kind is TextDelta or kind is ThinkingDelta or kind is RefusalDelta:
            delta = cast("TextDelta | ThinkingDelta | RefusalDelta", event)
            self._into(delta.index)
            self._write(delta.text)
        elif kind is ToolArgsDelta:
            fragment = cast(ToolArgsDelta, event)
            self._into(fragment.index)
            self._write(fragment.fragment)
        elif kind is BlockStart:
            assert isinstance(event, BlockStart)
            self._leave()
            self._kinds[event.index] = event.kind
            self._line = event.index
            if event.kind == "thinking":
                self._newline()
                self._write("[thinking] ")
            elif event.kind in _CALLS:  # (a call, or a request to approve one)
                server = (event.meta or {}).get("server")
                label = _CALLS[event.kind] + (f": {server}" if isinstance(server, str) else "")
                self._kinds[event.index] = event.kind
                self._names[event.index] = event.name or "?"
                self._newline()
                self._write(f"[{label}] {event.name or '?'}(")
            elif event.kind == "refusal":
                self._newline()
                self._write("[refusal] ")
            elif event.kind == "redacted_thinking":
                self._newline()
                self._write("[redacted thinking]\n")
            elif event.kind == "opaque":
                self._newline()
                self._write(f"[{event.name or 'opaque'}]\n")
        elif kind is BlockStop:
            assert isinstance(event, BlockStop)
            block_kind = self._kinds.get(event.index)
            if self._line == event.index:
                self._leave()
            if block_kind in ("thinking", "refusal"):
                self._newline()
        elif kind is MessageStop:
            self._ended = True
            self._leave()
            self._newline()

    def on_error(self, error: Exception) -> None:
        """End the output with the interrupted (or failed) mark and the reason.

        Args:
            error: Why the events ended.
        """
        self._closed = True
        self._newline()
        failure = fold_error(error)
        said = ending_text(failure.kind, str(failure))
        self._write(f"[{said[0].lower()}{said[1:]}]\n")

    def on_completed(self) -> None:
        """End the output with a newline (and the interrupted mark for a reply cut short)."""
        self._closed = True
        self._newline()
        if not self._ended:
            self._write("[interrupted: the events ended before the end of the reply]\n")

    def on_disposed(self) -> None:
        """The subscription ended before the events did (``take_until``, ``take``, a user's
        dispose): say so, on a line of its own."""
        if not self._closed:
            self._closed = True
            self._newline()
            if not self._ended:
                self._write("[cancelled]\n")
