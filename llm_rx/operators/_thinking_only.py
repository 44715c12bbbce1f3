"""``thinking_only()``: the reasoning text as it arrives, the answer excluded."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, compose
from reactivex import operators as ops

from ..events import Event, ThinkingDelta
from ._fused import fused, texts_of

__all__ = ["thinking_only"]


_TEXTS = texts_of(ThinkingDelta)  # (right after a source: no hop per event)


def _is_thinking(event: Event) -> bool:
    return type(event) is ThinkingDelta


def _text(event: Event) -> str:
    assert isinstance(event, ThinkingDelta)
    return event.text


def thinking_only() -> Callable[[Observable[Event]], Observable[str]]:
    """The text of every ``ThinkingDelta``, in order.

    ```text
    events:  -S-b-th("Let")-th(" me")-c-t("Hi")-M-|
    thinking_only()
    result:  -----"Let"-----" me"------------------|
    ```
    """
    return fused(_TEXTS, compose(ops.filter(_is_thinking), ops.map(_text)))
