"""What the ``llm-rx`` command needs from its process: input, a blocking run, signals.

Kept apart from the commands (``cli.py``) so that each stays small: here is everything that
touches the file system, stdin, signals and threads on the command's behalf.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import BinaryIO, TypeVar

from reactivex import Observable
from reactivex.scheduler import NewThreadScheduler

__all__ = [
    "EXIT_PIPE",
    "BadInput",
    "Input",
    "discard_stdout",
    "open_input",
    "quiet_on_closed_pipe",
    "run_to_end",
]

_T = TypeVar("_T")

#: The status of a command whose stdout was closed under it, as a shell reports ``cat``'s.
EXIT_PIPE = 128 + getattr(signal, "SIGPIPE", 13)

_READ = 64 * 1024


class BadInput(Exception):
    """The input cannot be read at all (no such file, a folder...): said in one line."""


def open_input(name: str) -> Input:
    """The input ``name``, ``-`` being stdin. The file is opened now, so that a missing one
    is reported as such (:class:`BadInput`), never as a stream cut short."""
    if name == "-":
        return Input(sys.stdin.buffer, close=False)
    try:
        handle = open(name, "rb")  # noqa: SIM115 - closed by Input.close()
    except FileNotFoundError:
        raise BadInput(f"no such file: {name}") from None
    except IsADirectoryError:
        raise BadInput(f"not a file but a folder: {name}") from None
    except OSError as error:
        raise BadInput(f"cannot read {name}: {error.strerror or error}") from None
    return Input(handle, close=True)


class Input:
    """An opened input, read in pieces as they come (``read1``: a pipe's bytes at once);
    a context manager that closes the file (never stdin)."""

    def __init__(self, handle: BinaryIO, *, close: bool) -> None:
        self._handle = handle
        self._close = close

    def __iter__(self) -> Iterator[bytes]:
        read = getattr(self._handle, "read1", self._handle.read)
        while piece := read(_READ):
            yield piece

    def __enter__(self) -> Input:
        return self

    def __exit__(self, *_: object) -> None:
        if self._close:
            self._handle.close()


def run_to_end(observable: Observable[_T]) -> _T:
    """The last value of ``observable``, run on its own thread while this one waits (as
    ``Observable.run()``), except that Ctrl-C disposes the pipeline, which stops the read
    and closes the display, before the ``KeyboardInterrupt`` goes on."""
    done = threading.Event()
    values: list[_T] = []
    failures: list[Exception] = []

    def on_error(error: Exception) -> None:
        failures.append(error)
        done.set()

    subscription = observable.subscribe(
        values.append, on_error, done.set, scheduler=NewThreadScheduler()
    )
    try:
        done.wait()
    except KeyboardInterrupt:
        subscription.dispose()
        raise
    if failures:
        raise failures[0]
    if not values:
        raise LookupError("the pipeline ended without a value")
    return values[-1]


def quiet_on_closed_pipe() -> None:
    """Let a closed stdout (``llm-rx events FILE | head -1``) end the process as it ends
    ``cat`` or ``git``: silently, by ``SIGPIPE`` (status 141 in a shell). Python ignores the
    signal by default, which turns the next write into a ``BrokenPipeError`` traceback and an
    "Exception ignored" message at exit. Only for the command itself, never for a library."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def discard_stdout() -> None:
    """After a ``BrokenPipeError`` where the signal does not exist: point stdout at the null
    device, so that the interpreter's last flush does not complain again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
