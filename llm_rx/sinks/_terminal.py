"""``terminal_display()``: a reply shown live on a terminal, or as plain text elsewhere."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO, cast

import reactivex
from reactivex import Observable, abc
from reactivex import operators as ops

from ..events import Event
from ._live import DEFAULT_REFRESH_PER_SECOND, live
from ._plain import PlainPrinter

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["terminal_display"]


def _rich_installed() -> bool:
    """Whether the optional ``rich`` package (the ``rich`` extra) is installed."""
    return importlib.util.find_spec("rich") is not None


def terminal_display(
    console: Console | None = None,
    *,
    out: TextIO | None = None,
    refresh_per_second: float = DEFAULT_REFRESH_PER_SECOND,
    scheduler: abc.SchedulerBase | None = None,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Show the reply on the terminal as it arrives, passing every event through.

    ```text
    events:  -S-b-t-t-t-t-t-t-U-M-|
    terminal_display()
    result:  -S-b-t-t-t-t-t-t-U-M-|      (the same events, at the same times)
    screen:  -f-----f-----f-------F      (f: a redrawn frame, F: the whole reply)
    ```

    ```python
    response = events.pipe(lxs.terminal_display(), lxo.to_response()).run()
    ```

    On a terminal, with rich installed: a rich ``Live`` region redrawn at most
    ``refresh_per_second`` times a second (Markdown answer, thinking collapsed to a line,
    tool calls, a usage footer, an interrupted reply marked in red), the last frame drawn in
    full. Anywhere else (a pipe, a file, a dumb terminal, no rich): plain text written as it
    arrives, ending with a newline — no cursor movement, so nothing is garbled. Either way no
    control character or escape sequence of the reply reaches the terminal (dropped: a reply
    cannot set the title, write the clipboard or clear the screen).

    ``console`` is the rich console to draw on (tests inject one writing to a ``StringIO``);
    without it, ``out`` (default: ``sys.stdout`` at subscription time) decides: a rich
    console when it is a terminal and rich is installed, plain text otherwise.

    Args:
        console: A rich ``Console`` to draw on.
        out: The stream to write to when no console is given (``sys.stdout``).
        refresh_per_second: The most frames a second.
        scheduler: The scheduler that times the frames (see above).

    Returns:
        An operator for ``.pipe()``.
    """

    def operator(source: Observable[Event]) -> Observable[Event]:
        def choose(_: abc.SchedulerBase | None) -> Observable[Event]:
            target = console
            stream = out or sys.stdout
            if target is None and _rich_installed() and stream.isatty():
                from rich.console import Console

                target = Console(file=stream)
            if target is not None and target.is_terminal and not target.is_dumb_terminal:
                from ._rich import RichView

                chosen = target
                return source.pipe(live(lambda: RichView(chosen),
                                        refresh_per_second=refresh_per_second,
                                        scheduler=scheduler))
            printer = PlainPrinter(cast(TextIO, target.file) if target is not None else stream)
            return source.pipe(
                ops.do_action(printer.on_next, printer.on_error, printer.on_completed),
                ops.finally_action(printer.on_disposed),
            )

        return reactivex.defer(choose)

    return operator
