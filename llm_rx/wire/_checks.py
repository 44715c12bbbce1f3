"""Type checks for wire values where they enter a decoder, and the nesting limit.

A frame of valid JSON can still hold a value of the wrong type (a ``text`` that is ``5``, an
``index`` that is ``"a"``, ``candidates`` that is ``true``). Each decoder checks the values it
reads before they go into an event, so nothing malformed reaches the builder or the
``Response`` model. A wrong type raises :class:`WireTypeError` (a ``TypeError``), which the
decoder's frame loop turns into a :class:`~llm_rx.errors.WireFormatError` carrying the frame.

Values kept whole (opaque blocks, metadata, tool inputs) are copied, compared and dumped by
recursive code, so a frame nested deeper than :data:`MAX_DEPTH` is refused
(:func:`check_depth`): a cheap byte count rules out almost every frame before any walk. A
decoder whose fast path drops some fields unread checks only the fields it may keep.
"""

from __future__ import annotations

from typing import Any

from ..errors import WireFormatError

__all__ = [
    "MAX_DEPTH",
    "SHALLOW",
    "WireTypeError",
    "array",
    "check_depth",
    "integer",
    "mapping",
    "maybe_too_deep",
    "optional_integer",
    "optional_string",
    "string",
    "too_deep",
]

#: The deepest nesting of arrays and objects a frame may have (orjson itself refuses 1024).
MAX_DEPTH = 128
#: A frame at most this long cannot be nested too deep (see :func:`maybe_too_deep`): a hot
#: path counts the brackets of longer frames only.
SHALLOW = 2 * MAX_DEPTH


class WireTypeError(TypeError):
    """A wire value of the wrong type (the frame loop makes it a ``WireFormatError``)."""


def _wrong(value: Any, what: str, expected: str) -> WireTypeError:
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:40] + "..."
    return WireTypeError(f"{what} is {shown}, not {expected}")


def string(value: Any, what: str) -> str:
    """``value`` if it is a string."""
    if value.__class__ is str:
        return value
    raise _wrong(value, what, "a string")


def optional_string(value: Any, what: str) -> str | None:
    """``value`` if it is a string or ``None``."""
    if value is None or value.__class__ is str:
        return value
    raise _wrong(value, what, "a string")


def integer(value: Any, what: str) -> int:
    """``value`` if it is an integer (not a float); a ``bool`` is the integer it equals, as
    the fast paths' comparisons take it."""
    if value.__class__ is int:
        return value
    if value.__class__ is bool:
        return int(value)
    raise _wrong(value, what, "an integer")


def optional_integer(value: Any, what: str) -> int | None:
    """``value`` if it is an integer or ``None``."""
    if value is None or value.__class__ is int:
        return value
    raise _wrong(value, what, "an integer")


def mapping(value: Any, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object."""
    if value.__class__ is dict:
        return value
    raise _wrong(value, what, "an object")


def array(value: Any, what: str) -> list[Any]:
    """``value`` if it is a JSON array."""
    if value.__class__ is list:
        return value
    raise _wrong(value, what, "an array")


def check_depth(value: Any, data: bytes) -> None:
    """Refuse a frame (``data``, parsed to ``value``) nested deeper than :data:`MAX_DEPTH`."""
    if maybe_too_deep(data) and too_deep(value):
        raise WireFormatError(f"a frame is nested deeper than {MAX_DEPTH} levels", data)


def maybe_too_deep(data: bytes) -> bool:
    """Whether a frame could be nested deeper than :data:`MAX_DEPTH`: it then has more than
    ``MAX_DEPTH`` opening brackets. Counting them is C-level work, so only such frames (rare,
    and then mostly long texts with brackets) are walked."""
    return len(data) > SHALLOW and data.count(b"[") + data.count(b"{") > MAX_DEPTH


def too_deep(value: Any) -> bool:
    """Whether ``value`` nests arrays and objects deeper than :data:`MAX_DEPTH` (walked level
    by level, without recursion)."""
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH):
        below: list[Any] = []
        for node in level:
            if node.__class__ is dict:
                below.extend(item for item in node.values() if item.__class__ in _NESTING)
            elif node.__class__ is list:
                below.extend(item for item in node if item.__class__ in _NESTING)
        if not below:
            return False
        level = below
    return True


_NESTING = (dict, list)
