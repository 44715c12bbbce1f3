"""``text_only()``: the answer's text as it arrives, thinking and tool calls excluded."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, compose
from reactivex import operators as ops

from ..events import Event, TextDelta
from ._fused import fused, texts_of

__all__ = ["text_only"]


_TEXTS = texts_of(TextDelta)  # (right after a source: no hop per event)


def _is_text(event: Event) -> bool:
    return type(event) is TextDelta


def _text(event: Event) -> str:
    assert isinstance(event, TextDelta)
    return event.text


def text_only() -> Callable[[Observable[Event]], Observable[str]]:
    """The text of every ``TextDelta``, in order.

    ```text
    events:  -S-th-t("Hel")-t("lo")-U-M-|
    text_only()
    result:  -------"Hel"-----"lo"------|
    ```
    """
    return fused(_TEXTS, compose(ops.filter(_is_text), ops.map(_text)))
