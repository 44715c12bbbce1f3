"""The decoders' error boundary and the small functions every decoder's hot path shares.

Whatever a frame makes a decoder raise, the caller gets a typed error that carries the frame
and the events decoded before it (:func:`attach_events`, :func:`shape_error`); llm-rx's own
errors and running out of memory pass through untouched (:data:`PASS_THROUGH`).
"""

from __future__ import annotations

from typing import Any

from ..errors import LlmRxError, WireFormatError
from ..events import Event

__all__ = ["PASS_THROUGH", "attach_events", "count_of", "new_event", "shape_error"]

#: Builds an event from the tuple of its fields without NamedTuple's argument parsing (the
#: decoders' hot path): ``new_event(TextDelta, (index, text))``.
new_event = tuple.__new__


def attach_events(error: LlmRxError, events: list[Event]) -> LlmRxError:
    """Record on ``error`` the events decoded before it (``LlmRxError.events``; emitted
    before ``on_error``)."""
    error.events = tuple(events)
    return error


def count_of(value: Any) -> int | None:
    """A token count as the wire gave it: an ``int`` (not a ``bool``), else ``None``."""
    return value if value.__class__ is int else None


# Errors that are not about the frame and pass through the boundary untouched: llm-rx's own
# (already typed, with their frame) and running out of memory.
PASS_THROUGH = (LlmRxError, MemoryError)


def shape_error(error: Exception, frame: Any) -> WireFormatError:
    """The ``WireFormatError`` for a frame whose JSON is valid but not of the expected shape
    (a list where an object was expected, a missing key, ``None`` where a list was, a value
    nested too deep): whatever decoding it raised, the caller gets a typed error that
    carries the frame, never a crash."""
    raw = frame if isinstance(frame, (bytes, str)) else getattr(frame, "data", None)
    if raw is None:
        raw = getattr(frame, "payload", None)
    failure = WireFormatError(
        f"a frame has an unexpected shape ({type(error).__name__}: {error})",
        raw if isinstance(raw, (bytes, str)) else None,
    )
    failure.__cause__ = error
    return failure

