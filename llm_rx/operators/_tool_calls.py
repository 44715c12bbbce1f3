"""``tool_calls()``: each tool call once its block has ended — never on a parseable prefix."""

from __future__ import annotations

from collections.abc import Callable

import reactivex
from reactivex import Observable, abc

from ..events import BlockStart, BlockStop, Event, MessageStop, ToolArgsDelta
from ..fold.builder import ResponseBuilder
from ..response import ToolCallBlock

__all__ = ["tool_calls"]


def tool_calls() -> Callable[[Observable[Event]], Observable[ToolCallBlock]]:
    """Every call the client is to run, finished: id, name, parsed and raw arguments.

    ```text
    events:  -S-b(call_1)-a('{"q":')-a('"x"}')-e(call_1)-b(call_2)-a("{}")-e-M-|
    tool_calls()
    result:  -----------------------------------C1-----------------------C2---|
    ```

    A call is emitted at its ``BlockStop`` (or at the message's end, for a block the
    provider left open), so a call cut short is never emitted: arguments that merely parse
    so far are not a finished call. Server-side tools are not in it (they are ``opaque``).
    """

    def operator(source: Observable[Event]) -> Observable[ToolCallBlock]:
        def subscribe(
            observer: abc.ObserverBase[ToolCallBlock], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            builder = ResponseBuilder(history=False)
            pending: set[int] = set()
            emitted: set[int] = set()

            def emit(index: int) -> None:
                pending.discard(index)
                emitted.add(index)
                block = builder.block(index)
                if isinstance(block, ToolCallBlock):
                    observer.on_next(block)

            def on_next(event: Event) -> None:
                try:
                    builder.feed(event)
                except Exception as error:  # noqa: BLE001 - a malformed event from upstream
                    observer.on_error(error)
                    return
                if isinstance(event, BlockStart):
                    if event.kind == "tool_call":
                        pending.add(event.index)
                elif isinstance(event, ToolArgsDelta):
                    if event.index not in emitted:  # (a call whose start never came)
                        pending.add(event.index)
                elif isinstance(event, BlockStop):
                    if event.index in pending:
                        emit(event.index)
                elif isinstance(event, MessageStop):
                    for index in sorted(pending):  # left open by the provider: ended now
                        builder.feed(BlockStop(index))
                        emit(index)

            return source.subscribe(
                on_next, observer.on_error, observer.on_completed, scheduler=scheduler
            )

        return reactivex.create(subscribe)

    return operator
