"""``thinking_only()``: the reasoning text as it arrives, the answer excluded."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable, compose
from reactivex import operators as ops

from ..events import Event, ThinkingDelta

__all__ = ["thinking_only"]


def _is_thinking(event: Event) -> bool:
    return type(event) is ThinkingDelta


def _text(event: Event) -> str:
    assert isinstance(event, ThinkingDelta)
    return event.text


def thinking_only() -> Callable[[Observable[Event]], Observable[str]]:
    """The text of every ``ThinkingDelta``, in order.

    ::

        events:  -S-b-th("Let")-th(" me")-c-t("Hi")-M-|
        thinking_only()
        result:  -----"Let"-----" me"------------------|
    """
    return compose(ops.filter(_is_thinking), ops.map(_text))
