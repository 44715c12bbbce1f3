"""Reading a JSON text that is still arriving: the value it holds so far (``jiter``'s partial
mode, with a number at the very end left out, as it may still grow: ``12`` may be ``123``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._extras import install_hint

__all__ = ["JSON_START", "partial_parser", "pretty_so_far"]

#: How a text that is a JSON object or array opens (after blanks).
JSON_START = ("{", "[")
_NUMBER = "0123456789.eE+-"


def partial_parser() -> Callable[[str], Any]:
    """The parser of texts so far; raises ``ImportError`` without ``jiter`` (the
    ``structured`` extra), and the parser ``ValueError`` on a text it cannot read yet."""
    try:
        import jiter
    except ImportError as error:  # pragma: no cover - jiter comes with the extra
        raise ImportError(f"reading partial JSON needs jiter: {install_hint('structured')}"
                          ) from error

    def parse(text: str) -> Any:
        if text and text[-1] in _NUMBER:  # (dropped: it may still grow)
            text = text.rstrip(_NUMBER)
        return jiter.from_json(text.encode(), partial_mode="trailing-strings")

    return parse


def pretty_so_far(text: str) -> str | None:
    """A JSON object or array text (whole or so far) as indented JSON, or ``None`` when the
    text is no such JSON (prose), cannot be read yet, or ``jiter`` is not installed."""
    if not text.lstrip().startswith(JSON_START):
        return None
    import orjson

    try:
        value = partial_parser()(text)
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except (ImportError, ValueError, TypeError):
        return None
