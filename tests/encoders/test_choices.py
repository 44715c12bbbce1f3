"""A reply with several choices (``n>1``) translated into a target that carries one: choice 0
is the reply, the other choices' blocks are left out and reported as `Dropped`, never merged
into choice 0 or written as a stream the target's readers refuse."""

from __future__ import annotations

import orjson
import pytest

import llm_rx
from llm_rx.encoders import ENCODERS
from llm_rx.events import BlockStart, Dropped
from llm_rx.response import TextBlock
from llm_rx.sources._engine import decode_all, new_decoder
from llm_rx.wire import PROVIDERS


def _chunk(choices: list[dict[str, object]], **fields: object) -> bytes:
    return b"data: " + orjson.dumps({"id": "c1", "object": "chat.completion.chunk",
                                     "created": 1, "model": "gpt-4o", "choices": choices,
                                     **fields}) + b"\n\n"


def _delta(index: int, **delta: object) -> dict[str, object]:
    return {"index": index, "delta": delta, "finish_reason": None}


CALL = {"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}
TWO = b"".join([
    _chunk([_delta(0, role="assistant", content="Hel")]),
    _chunk([_delta(1, role="assistant", content="Bon")]),
    _chunk([_delta(0, content="lo")]),
    _chunk([_delta(1, content="jour")]),
    _chunk([_delta(1, tool_calls=[CALL])]),
    _chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    _chunk([{"index": 1, "delta": {}, "finish_reason": "tool_calls"}]),
    _chunk([], usage={"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}),
    b"data: [DONE]\n\n",
])
ONE_CHOICE = sorted(name for name, encoder in ENCODERS.items() if not encoder(None).choices)
# (the browser targets are read by no llm-rx decoder: their bytes are checked instead)
READ_BACK = [name for name in ONE_CHOICE if name in PROVIDERS]


def test_the_targets_that_carry_one_choice() -> None:
    assert {"anthropic", "bedrock-converse", "ollama", "openai-responses", "cohere"} <= set(
        ONE_CHOICE)
    assert "openai-chat" not in ONE_CHOICE
    assert "gemini" not in ONE_CHOICE


def _other_blocks() -> list[int]:
    events: list[object] = []
    decode_all(new_decoder("openai-chat"), (TWO,), events.extend)
    return [event.index for event in events
            if isinstance(event, BlockStart) and event.choice not in (None, 0)]


@pytest.mark.parametrize("target", sorted(set(ONE_CHOICE) - set(READ_BACK)))
def test_a_browser_target_writes_choice_0_only(target: str) -> None:
    dropped: list[Dropped] = []
    body = llm_rx.translate(TWO, to=target, on_dropped=dropped.append)
    assert b"Hel" in body
    assert b"Bon" not in body
    assert b"weather" not in body
    assert [(type(drop), drop.what, drop.index) for drop in dropped] == [
        (Dropped, "choice", index) for index in _other_blocks()]


@pytest.mark.parametrize("target", READ_BACK)
def test_a_one_choice_target_keeps_choice_0_and_reports_the_rest(target: str) -> None:
    source = llm_rx.reassemble(TWO)
    assert [choice.stop_reason for choice in source.choices] == ["end_turn", "tool_use"]
    dropped: list[Dropped] = []
    body = llm_rx.translate(TWO, to=target, on_dropped=dropped.append)
    back = llm_rx.reassemble(body)
    assert back.complete
    assert back.text == "Hello"
    assert back.tool_calls == []
    assert back.stop_reason == "end_turn"
    assert back.choices == []
    other = _other_blocks()
    reported = [(type(drop), drop.what, drop.index) for drop in dropped]
    assert reported == [(Dropped, "choice", index) for index in other]
    assert all("choice 1" in drop.reason for drop in dropped)


@pytest.mark.parametrize("target", ["openai-chat", "gemini"])
def test_a_target_with_choices_writes_them_all(target: str) -> None:
    dropped: list[Dropped] = []
    back = llm_rx.reassemble(llm_rx.translate(TWO, to=target, on_dropped=dropped.append))
    texts = ["".join(block.text for block in choice.content if isinstance(block, TextBlock))
             for choice in back.choices]
    assert texts == ["Hello", "Bonjour"]
    assert [drop for drop in dropped if drop.what == "choice"] == []

