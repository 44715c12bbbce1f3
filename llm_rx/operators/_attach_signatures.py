"""``attach_signatures()``: each finished reasoning block, with its signature on it."""

from __future__ import annotations

from collections.abc import Callable

import reactivex
from reactivex import Observable, abc

from ..events import BlockStart, BlockStop, Event, MessageStop, SignatureDelta
from ..fold.builder import ResponseBuilder
from ..response import ThinkingBlock

__all__ = ["attach_signatures"]

_REASONING = ("thinking", "redacted_thinking")


def attach_signatures() -> Callable[[Observable[Event]], Observable[ThinkingBlock]]:
    """Every reasoning block once it ended, its signature attached, in the reply's order.

    ```text
    events:  -S-b(0,thinking)-th-th-sig(0)-e(0)-b(1,redacted)-sig(1)-e(1)-sig(7)-M-|
    attach_signatures()
    result:  ------------------------------T0----------------------T1----------T7|
    ```

    Redacted blocks come with their data as the signature and empty text. A signature that
    arrived for no block is not dropped: it comes as a thinking block of empty text at the
    message's end. Text and signature are the provider's, byte for byte (a later turn of
    the conversation is rejected otherwise).
    """

    def operator(source: Observable[Event]) -> Observable[ThinkingBlock]:
        def subscribe(
            observer: abc.ObserverBase[ThinkingBlock], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            builder = ResponseBuilder(history=False)
            reasoning: set[int] = set()
            orphans: list[int] = []
            emitted: set[int] = set()

            def emit(index: int) -> None:
                emitted.add(index)
                block = builder.block(index)
                if isinstance(block, ThinkingBlock):
                    observer.on_next(block)

            def emit_orphans() -> None:
                for index in orphans:
                    if index not in emitted:
                        emit(index)
                orphans.clear()

            def on_next(event: Event) -> None:
                try:
                    builder.feed(event)
                except Exception as error:  # noqa: BLE001 - a malformed event from upstream
                    observer.on_error(error)
                    return
                if isinstance(event, BlockStart):
                    if event.kind in _REASONING:
                        reasoning.add(event.index)
                elif isinstance(event, SignatureDelta):
                    index = event.index
                    if (  # a signature for no block: the builder opened a thinking one for it
                        index not in reasoning
                        and index not in orphans
                        and isinstance(builder.block(index), ThinkingBlock)
                    ):
                        orphans.append(index)
                elif isinstance(event, BlockStop):
                    if event.index in reasoning:
                        emit(event.index)
                elif isinstance(event, MessageStop):
                    for index in sorted(reasoning - emitted):  # left open: ended with the reply
                        builder.feed(BlockStop(index))
                        emit(index)
                    emit_orphans()

            def on_completed() -> None:
                emit_orphans()
                observer.on_completed()

            return source.subscribe(on_next, observer.on_error, on_completed, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator
