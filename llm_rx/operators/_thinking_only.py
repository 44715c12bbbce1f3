"""``thinking_only()``: the reasoning text as it arrives, the answer excluded."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..events import Event, ThinkingDelta
from ._adapter import folded
from ._text_only import Texts

__all__ = ["thinking_only"]


_THINKING = Texts(ThinkingDelta)


def thinking_only() -> Callable[[Observable[Event]], Observable[str]]:
    """The text of every ``ThinkingDelta``, in order.

    ```text
    events:  -S-b-th("Let")-th(" me")-c-t("Hi")-M-|
    thinking_only()
    result:  -----"Let"-----" me"------------------|
    ```
    """
    return folded(lambda _source, _scheduler: _THINKING)
