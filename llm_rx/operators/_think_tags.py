"""``think_tags()``: reasoning a host wrote into the answer text between tags, as thinking."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import reactivex
from reactivex import Observable, abc

from ..events import (
    BlockStart,
    BlockStop,
    CitationDelta,
    Event,
    MessageStop,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)

__all__ = ["TagSplitter", "think_tags"]

_Indexed = (
    TextDelta | ThinkingDelta | RefusalDelta | SignatureDelta | ToolArgsDelta | CitationDelta
)
_INDEXED = (ThinkingDelta, RefusalDelta, SignatureDelta, ToolArgsDelta, CitationDelta)


def _held(text: str, tag: str) -> int:
    """How many characters at the end of ``text`` could be the start of ``tag`` (kept back
    until the next delta tells whether the tag is there)."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


@dataclass
class _TextBlock:
    """One text block of the source being split: which output block its text goes to now."""

    start: BlockStart
    inside: bool = False  # within the tags: what arrives is reasoning
    held: str = ""  # a possible tag's start, not yet given out
    current: int | None = None  # the output block now open for it
    opened: int = 0  # output blocks it gave so far


@dataclass
class TagSplitter:
    """The pure state of `think_tags()` for one reply: ``feed(event)`` gives the events
    to pass on, ``flush()`` what is held back when the source ends without a stop.

    Output blocks are numbered in the order they open, so a text block that becomes a
    thinking block and a text block shifts the blocks after it by one.
    """

    open: str = "<think>"
    close: str = "</think>"
    _texts: dict[int, _TextBlock] = field(default_factory=dict)
    _others: dict[int, int] = field(default_factory=dict)  # source index -> output index
    _next: int = 0

    def __post_init__(self) -> None:
        if not self.open or not self.close:
            raise ValueError("think_tags: the open and close tags must not be empty")

    def _number(self) -> int:
        self._next += 1
        return self._next - 1

    def feed(self, event: Event) -> list[Event]:
        if isinstance(event, BlockStart):
            if event.kind == "text":
                self._texts[event.index] = _TextBlock(event)
                return []
            out = self._others[event.index] = self._number()
            return [event._replace(index=out)]
        if isinstance(event, TextDelta):
            block = self._texts.get(event.index)
            if block is None:  # (text for a block whose start never came: opened now)
                block = self._texts[event.index] = _TextBlock(BlockStart(event.index, "text"))
            return self._split(block, block.held + event.text)
        if isinstance(event, BlockStop):
            block = self._texts.pop(event.index, None)
            if block is not None:
                return self._end(block)
            return [BlockStop(self._other(event.index))]
        if isinstance(event, _INDEXED):
            return self._indexed(event)
        if isinstance(event, MessageStop):  # (blocks left open end with the reply)
            return [*self.flush(), event]
        return [event]

    def flush(self) -> list[Event]:
        """Give out what every open text block holds back (a tag's start that never
        completed is text, as the provider wrote it)."""
        out: list[Event] = []
        for block in self._texts.values():
            out += self._give(block, block.held)
            block.held = ""
        return out

    def _other(self, index: int) -> int:
        out = self._others.get(index)
        if out is None:  # (a delta for a block whose start never came)
            out = self._others[index] = self._number()
        return out

    def _indexed(self, event: _Indexed) -> list[Event]:
        block = self._texts.get(event.index)
        if block is None:
            return [event._replace(index=self._other(event.index))]
        out = self._open(block) if block.current is None else []
        assert block.current is not None
        return [*out, event._replace(index=block.current)]

    def _split(self, block: _TextBlock, text: str) -> list[Event]:
        out: list[Event] = []
        while True:
            tag = self.close if block.inside else self.open
            found = text.find(tag)
            if found < 0:
                keep = _held(text, tag)
                block.held = text[len(text) - keep:]
                return out + self._give(block, text[: len(text) - keep])
            out += self._give(block, text[:found])
            if block.current is not None:
                out.append(BlockStop(block.current))
                block.current = None
            block.inside = not block.inside
            text = text[found + len(tag):]

    def _give(self, block: _TextBlock, text: str) -> list[Event]:
        if not text:
            return []
        out = self._open(block) if block.current is None else []
        assert block.current is not None
        delta = ThinkingDelta if block.inside else TextDelta
        return [*out, delta(block.current, text)]

    def _open(self, block: _TextBlock) -> list[Event]:
        block.current = self._number()
        block.opened += 1
        if block.inside:
            return [BlockStart(block.current, "thinking", choice=block.start.choice)]
        return [block.start._replace(index=block.current)]

    def _end(self, block: _TextBlock) -> list[Event]:
        out = self._give(block, block.held)
        if block.opened == 0:  # an empty text block stays one (it may carry a signature)
            out += self._open(block)
        if block.current is not None:
            out.append(BlockStop(block.current))
        return out


def think_tags(
    open: str = "<think>", close: str = "</think>"
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Reasoning that a host put into the answer text between ``open`` and ``close`` tags
    (DeepSeek-R1 style models behind a server without a reasoning parser), as thinking
    blocks; the text outside the tags stays text, byte for byte, and the tags go.

    ```text
    events:  -S-b(0,text)-t("<th")-t("ink>Hm</think>Hi")-e(0)-M-|
    think_tags()
    result:  -S-----------------b(0,thinking)-th("Hm")-e(0)-b(1,text)-t("Hi")-e(1)-M-|
    ```

    Opt-in: the user's text is never rewritten otherwise. A tag may be split across deltas
    anywhere (its start is held back until the next delta settles it; a start that never
    completes is given out as text). A tag that never closes leaves the rest as thinking,
    and the reply's stop (or its absence, for a cut stream) is passed on untouched.

    Args:
        open: The tag that opens the reasoning.
        close: The tag that closes it.

    Returns:
        An operator for ``.pipe()``.
    """
    TagSplitter(open, close)  # (an empty tag is refused here, not at subscription)

    def operator(source: Observable[Event]) -> Observable[Event]:
        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            splitter = TagSplitter(open, close)

            def on_next(event: Event) -> None:
                try:
                    out = splitter.feed(event)
                except Exception as error:  # noqa: BLE001 - a malformed event from upstream
                    observer.on_error(error)
                    return
                for item in out:
                    observer.on_next(item)

            def flushed(end: Callable[[], None]) -> None:
                for item in splitter.flush():  # (nothing that arrived is lost)
                    observer.on_next(item)
                end()

            def on_error(error: Exception) -> None:
                flushed(lambda: observer.on_error(error))

            def on_completed() -> None:
                flushed(observer.on_completed)

            return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator
