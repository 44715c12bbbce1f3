"""``text_only()``: the answer's text as it arrives, thinking and tool calls excluded."""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter

from reactivex import Observable

from ..events import Event, TextDelta
from ._adapter import Fold, folded

__all__ = ["Texts", "text_only"]

_text: Callable[[Event], str] = itemgetter(1)  # a text delta's text


class Texts(Fold[str]):
    """The texts of a read's ``kind`` deltas (``TextDelta``, ``ThinkingDelta``), in order
    (no state: one fold serves every subscription)."""

    def __init__(self, kind: type[Event]) -> None:
        self._kind = kind

    def step(self, events: list[Event]) -> tuple[list[str], Exception | None]:
        kind = self._kind
        return [_text(event) for event in events if event.__class__ is kind], None


_TEXTS = Texts(TextDelta)


def text_only() -> Callable[[Observable[Event]], Observable[str]]:
    """The text of every ``TextDelta``, in order.

    ```text
    events:  -S-th-t("Hel")-t("lo")-U-M-|
    text_only()
    result:  -------"Hel"-----"lo"------|
    ```
    """
    return folded(lambda _source, _scheduler: _TEXTS)
