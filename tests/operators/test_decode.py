"""decode() on a long-lived bus: each reply ends at its terminal frame, not at the bus's end."""

from __future__ import annotations

import pytest
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import WireFormatError
from llm_rx.events import Event, MessageStop
from llm_rx.response import Response
from llm_rx.wire.openai_chat import OpenAIChatDecoder

from ..captures import capture

CHAT = capture("openai/chat-parallel-tool-calls.sse")
THINKING = capture("anthropic/thinking-signature.sse")


def _push(bus: Subject[bytes], data: bytes, size: int = 97) -> None:
    for start in range(0, len(data), size):
        bus.on_next(data[start : start + size])


def test_decode_on_an_open_bus_completes_at_the_reply_end() -> None:
    bus: Subject[bytes] = Subject()
    responses: list[Response] = []
    errors: list[Exception] = []
    done: list[bool] = []
    bus.pipe(lxo.decode(), lxo.to_response()).subscribe(
        responses.append, errors.append, lambda: done.append(True)
    )
    _push(bus, CHAT.data)  # the bus is never completed
    assert errors == []
    assert done == [True]
    (response,) = responses
    assert response == llm_rx.reassemble(CHAT.path)
    assert response.complete
    assert bus.observers == []  # the bus subscription was disposed at the end


def test_decode_events_end_with_the_terminal_event_on_an_open_bus() -> None:
    bus: Subject[bytes] = Subject()
    events: list[Event] = []
    done: list[bool] = []
    bus.pipe(lxo.decode("anthropic")).subscribe(events.append, lambda _: None,
                                                lambda: done.append(True))
    _push(bus, THINKING.data)
    assert done == [True]
    assert isinstance(events[-1], MessageStop)


def test_decode_repeat_folds_every_reply_a_bus_carries() -> None:
    bus: Subject[bytes] = Subject()
    responses: list[Response] = []
    errors: list[Exception] = []
    bus.pipe(lxo.decode(), lxo.to_response(), ops.repeat()).subscribe(
        responses.append, errors.append
    )
    for data in (CHAT.data, THINKING.data, CHAT.data):
        _push(bus, data)
    assert errors == []
    assert [response.provider for response in responses] == [
        "openai-chat", "anthropic", "openai-chat"
    ]
    assert responses[1] == llm_rx.reassemble(THINKING.path)
    assert all(response.complete for response in responses)


def test_decode_bytes_after_the_end_in_the_same_chunk_are_not_part_of_the_reply() -> None:
    bus: Subject[bytes] = Subject()
    responses: list[Response] = []
    errors: list[Exception] = []
    bus.pipe(lxo.decode(), lxo.to_response()).subscribe(responses.append, errors.append)
    bus.on_next(CHAT.data + THINKING.data)
    bus.on_completed()
    assert errors == []
    assert responses == [llm_rx.reassemble(CHAT.path)]


def test_decode_a_bus_that_completes_mid_reply_is_still_a_cut_reply() -> None:
    bus: Subject[bytes] = Subject()
    responses: list[Response] = []
    bus.pipe(lxo.decode(), lxo.to_response()).subscribe(responses.append, lambda _: None)
    _push(bus, THINKING.data[:5000])
    assert responses == []  # not over yet
    bus.on_completed()
    (response,) = responses
    assert response.complete is False
    assert response.stop_reason == "interrupted"


def test_decode_an_unforeseen_decoder_failure_is_typed_and_lets_go_of_the_bus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(self: OpenAIChatDecoder, chunk: bytes) -> list[Event]:
        raise AttributeError("'NoneType' object has no attribute 'get'")

    monkeypatch.setattr(OpenAIChatDecoder, "decode", broken)
    bus: Subject[bytes] = Subject()
    errors: list[Exception] = []
    bus.pipe(lxo.decode("openai-chat")).subscribe(on_error=errors.append)
    bus.on_next(CHAT.data)
    assert [type(error) for error in errors] == [WireFormatError]
    assert bus.observers == []
