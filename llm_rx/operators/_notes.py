"""Footer notes: how an operator after a live display adds a line to the display's footer.

A display renders its last frame when the events end — before anything after it in the
pipeline has seen that end. So an operator that has something to say in the footer (the
price of the reply) says it at subscription time, which runs from the end of a pipeline
towards its source: it subscribes upstream inside :func:`noting`, and a display subscribed
within that call keeps the notes (:func:`notes`) and calls them on the final response.
``fan_out()`` gathers its branches' notes onto one list (:func:`gathering`) that a display
in a sibling branch reads too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ..response import Response

__all__ = ["Note", "gathering", "noting", "notes"]

#: Says something about a finished reply, or nothing (``None``).
Note = Callable[[Response], "str | None"]

# (a list only ``gathering`` extends: every other holder treats it as a snapshot)
_NOTES: ContextVar[list[Note]] = ContextVar("llm_rx_footer_notes")


@contextmanager
def noting(*new: Note) -> Iterator[None]:
    """Let what is subscribed within this block see ``new`` besides the notes given
    further down the pipeline."""
    token = _NOTES.set([*notes(), *new])
    try:
        yield
    finally:
        _NOTES.reset(token)


def notes() -> list[Note]:
    """The notes of the operators downstream of the subscription being made: read them at
    the end (a ``fan_out()`` adds its branches' notes after a sibling took the list)."""
    return _NOTES.get([])


@contextmanager
def gathering() -> Iterator[list[Note]]:
    """One list of notes for everything subscribed within this block (extend it with the
    notes found)."""
    board = [*notes()]
    token = _NOTES.set(board)
    try:
        yield board
    finally:
        _NOTES.reset(token)
