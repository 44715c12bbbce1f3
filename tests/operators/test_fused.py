"""Operators right after a source run in its loop: the same values as behind any operator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from reactivex import Observable
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import WireFormatError
from llm_rx.events import Event

from ..captures import CAPTURES, Capture, capture
from ..helpers import reads_of

Operator = Callable[[Observable[Event]], Observable[Any]]
OPERATORS: dict[str, Callable[[], Operator]] = {
    "to_response": lxo.to_response,
    "text_only": lxo.text_only,
    "thinking_only": lxo.thinking_only,
}


def _values(source: Observable[Event], operator: Operator, hop: bool) -> list[Any]:
    """The values, then the error (its type and message) or ``"completed"``."""
    pipeline = source.pipe(ops.map(lambda event: event)) if hop else source
    seen: list[Any] = []
    pipeline.pipe(operator).subscribe(
        seen.append, lambda e: seen.append((type(e), str(e))), lambda: seen.append("completed")
    )
    return seen


@pytest.mark.parametrize("name", sorted(OPERATORS))
@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_right_after_the_source_gives_what_it_gives_behind_an_operator(
    capture: Capture, name: str
) -> None:
    # bug class: a read's events stepped wrong (lost, reordered, fed twice) in the fused loop
    for size in (300, 1 << 20):
        source = llm_rx.from_bytes(reads_of(capture.data, size), capture.provider)
        got = _values(source, OPERATORS[name](), hop=False)
        assert got == _values(source, OPERATORS[name](), hop=True)


def test_to_response_right_after_the_source_keeps_what_came_before_a_bad_frame() -> None:
    data = capture("openai/chat-gpt41-nano-text.sse").data
    body = data[: data.index(b"data: [DONE]")] + b"data: {not json\n\n"
    response = llm_rx.from_bytes(body).pipe(lxo.to_response()).run()
    assert response == llm_rx.reassemble(body)
    assert response.text == llm_rx.reassemble(data).text
    assert response.error is not None
    assert response.error.kind == "wire_format"


def test_text_only_right_after_decode_ends_with_the_decoding_error() -> None:
    data = capture("openai/chat-gpt41-nano-text.sse").data
    bus: Subject[bytes] = Subject()
    texts: list[str] = []
    errors: list[Exception] = []
    bus.pipe(lxo.decode(), lxo.text_only()).subscribe(texts.append, errors.append)
    bus.on_next(data[: data.index(b"data: [DONE]")] + b"data: {not json\n\n")
    assert "".join(texts) == llm_rx.reassemble(data).text
    assert len(errors) == 1
    assert isinstance(errors[0], WireFormatError)


def test_to_response_right_after_the_source_a_malformed_event_is_an_error() -> None:
    # (a decoder never makes one; an event source of another kind could)
    events: list[Any] = ["not an event"]

    class Odd(llm_rx.sources.EventSource):
        def _read(self, emit: Any, stopped: Any, end: Any, scheduler: Any) -> Any:
            from reactivex.disposable import Disposable

            emit(events)
            end(None)
            return Disposable()

    errors: list[Exception] = []
    Odd().pipe(lxo.to_response()).subscribe(on_error=errors.append)
    assert len(errors) == 1
