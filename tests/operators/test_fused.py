"""One body per operator: the fold a read at a time right after a source (in its loop) gives
the values it gives an event at a time after any other observable."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
import reactivex
from reactivex import Observable
from reactivex import operators as ops
from reactivex.disposable import Disposable
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import WireFormatError
from llm_rx.events import Event, MessageStart
from llm_rx.response import Response
from llm_rx.sources._source import Reading

from ..captures import CAPTURES, Capture, capture
from ..helpers import decode_events, reads_of

AT = datetime(2026, 11, 1, tzinfo=UTC)

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
    events: list[Any] = [MessageStart("openai-chat", "m", "r1"), "not an event"]

    class Odd(llm_rx.sources.EventSource):
        def _read(self, reading: Reading, scheduler: Any) -> Any:
            reading.emit(list(events))
            reading.end(None)
            return Disposable()

    for source in (Odd(), reactivex.from_iterable(events)):
        got: list[Response] = []
        errors: list[Exception] = []
        source.pipe(lxo.to_response()).subscribe(got.append, errors.append)
        assert errors == []
        (response,) = got
        assert response.stop_reason == "error"
        assert response.error is not None
        assert response.error.kind == "wire_format"


@pytest.mark.parametrize("capture", CAPTURES[::4], ids=lambda c: c.name)
def test_operators_a_read_at_a_time_give_what_they_give_an_event_at_a_time(
    capture: Capture,
) -> None:
    # bug class: a fold whose step gives other values for a read than for its events one by
    # one (accumulate's snapshots, encode's bytes, cost's price)
    events, error = decode_events(reads_of(capture.data, 700), capture.provider)

    def each_event() -> Observable[Event]:
        listed = reactivex.from_iterable(events)
        return listed if error is None else reactivex.concat(listed, reactivex.throw(error))

    def run(operator: Operator) -> tuple[list[Any], list[Any]]:
        per_read = _values(llm_rx.from_bytes(reads_of(capture.data, 700), capture.provider),
                           operator, hop=False)
        return per_read, _values(each_event(), operator, hop=False)

    reads, one_by_one = run(lxo.accumulate())
    assert [_snapshot(v) for v in reads] == [_snapshot(v) for v in one_by_one]
    reads, one_by_one = run(lxo.encode("anthropic"))
    assert _joined(reads) == _joined(one_by_one)
    reads, one_by_one = run(lxo.cost(at=AT))
    assert reads == one_by_one


def _snapshot(value: Any) -> Any:
    return value.response.model_dump(mode="json") if hasattr(value, "response") else value


def _joined(values: list[Any]) -> tuple[bytes, list[Any]]:
    """The bytes written (their reads may be cut otherwise), and how they ended."""
    return b"".join(v for v in values if isinstance(v, bytes)), [
        v for v in values if not isinstance(v, bytes)]
