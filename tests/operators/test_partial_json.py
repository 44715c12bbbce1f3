"""partial_json: tool-call arguments and JSON answers, parsed (and validated) as they stream."""

from __future__ import annotations

import itertools
import json
from typing import Any, Literal

import pytest
import reactivex
from pydantic import BaseModel, TypeAdapter
from reactivex import Observable
from reactivex import operators as ops
from typing_extensions import TypedDict

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError, StructuredOutputError
from llm_rx.events import (
    BlockStart,
    BlockStop,
    Event,
    MessageStart,
    MessageStop,
    TextDelta,
    ToolArgsDelta,
)
from llm_rx.operators import PartialValue
from llm_rx.operators._partial_json import GROWTH, PartialJson

from ..captures import CAPTURES, Capture, capture


class Weather(BaseModel):
    city: str
    temperature: int
    units: Literal["c", "f"]


class WeatherSoFar(TypedDict, total=False):
    city: str
    temperature: int
    units: Literal["c", "f"]


def _contained(old: Any, new: Any) -> bool:
    """What ``old`` knew, ``new`` still knows (a string may have grown at its end)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(
            key in new and _contained(value, new[key]) for key, value in old.items()
        )
    if isinstance(old, list):
        return isinstance(new, list) and len(old) <= len(new) and all(
            _contained(a, b) for a, b in zip(old, new, strict=False)
        )
    if isinstance(old, str):
        return isinstance(new, str) and new.startswith(old)
    return bool(old == new) and type(old) is type(new)


def _values(events: Observable[Event], schema: Any = None) -> list[PartialValue]:
    result: list[PartialValue] = events.pipe(lxo.partial_json(schema), ops.to_list()).run()
    return result


def _tool_captures() -> list[Capture]:
    return [cap for cap in CAPTURES if llm_rx.reassemble(cap.data, cap.provider).tool_calls]


@pytest.mark.parametrize("cap", _tool_captures(), ids=lambda cap: cap.name)
def test_partial_json_every_tool_call_capture_is_monotone_and_ends_at_its_arguments(
    cap: Capture,
) -> None:
    response = llm_rx.reassemble(cap.data, cap.provider)
    values = _values(llm_rx.from_bytes(cap.data, provider=cap.provider).pipe(
        ops.catch(reactivex.empty())  # (a cut capture: what arrived before the cut)
    ))
    blocks = {index: block for index, block in enumerate(response.content)}
    by_index: dict[int, list[PartialValue]] = {}
    for value in values:
        by_index.setdefault(value.index, []).append(value)
    for index, block in blocks.items():
        if block.type != "tool_call" or not response.complete:
            continue
        if block.raw_arguments.lstrip()[:1] not in ("", "{", "["):
            # a free-form input (a Responses custom tool) is no JSON: left alone
            assert index not in by_index
            continue
        seen = by_index[index]
        assert all(value.done is False for value in seen[:-1])
        assert seen[-1].done
        assert (seen[-1].id, seen[-1].name) == (block.id, block.name)
        final = json.loads(block.raw_arguments) if block.raw_arguments else {}
        assert seen[-1].value == final == block.arguments
        for old, new in itertools.pairwise(seen):
            assert _contained(old.value, new.value), (old.value, new.value)


def test_partial_json_a_json_schema_capture_validates_in_full_at_the_end() -> None:
    data = capture("openai/chat-json-schema.sse").data
    text = llm_rx.reassemble(data).text
    final = _values(llm_rx.from_bytes(data, provider="openai-chat"), Weather)[-1]
    assert final == PartialValue(0, None, None, Weather.model_validate_json(text), True)
    so_far = _values(llm_rx.from_bytes(data, provider="openai-chat"), WeatherSoFar)
    assert len(so_far) > 2  # (every field but the last is required of a model so far)
    assert so_far[-1].value == json.loads(text)
    for old, new in itertools.pairwise(so_far):
        assert _contained(old.value, new.value)


def test_partial_json_the_last_value_equals_json_loads_of_the_text() -> None:
    data = capture("openai/chat-json-schema.sse").data
    values = _values(llm_rx.from_bytes(data, provider="openai-chat"))
    assert values[-1] == PartialValue(0, None, None, json.loads(llm_rx.reassemble(data).text),
                                      True)


def _call(*fragments: str, stop: bool = True) -> Observable[Event]:
    events: list[Event] = [MessageStart("anthropic"), BlockStart(0, "tool_call", "c1", "f")]
    events += [ToolArgsDelta(0, fragment) for fragment in fragments]
    if stop:
        events += [BlockStop(0), MessageStop("tool_use")]
    return reactivex.from_iterable(events)


def test_partial_json_a_number_at_the_end_waits_until_it_ended() -> None:
    values = _values(_call('{"n": 1', "2", "3", ', "s": "a', 'b"}'))
    assert [(value.value, value.done) for value in values] == [
        ({}, False), ({"n": 123, "s": "a"}, False), ({"n": 123, "s": "ab"}, True)
    ]


def test_partial_json_a_value_equal_to_the_last_is_not_emitted_again() -> None:
    values = _values(_call('{"a": [1,', "      ", "2]}"))  # (the blanks are parsed: no news)
    assert [(value.value, value.done) for value in values] == [
        ({"a": [1]}, False), ({"a": [1, 2]}, True)
    ]


def test_partial_json_final_arguments_that_are_no_json_are_an_error_with_the_text() -> None:
    got: list[Any] = []
    _call('{"a": ', "tru}").pipe(lxo.partial_json()).subscribe(got.append, got.append)
    error = got[-1]
    assert isinstance(error, StructuredOutputError)
    assert isinstance(error, llm_rx.LlmRxError)
    assert (error.raw, error.index) == ('{"a": tru}', 0)


def test_partial_json_a_final_value_that_fails_the_schema_is_an_error() -> None:
    got: list[Any] = []
    _call('{"city": "X", "temperature": "hot", "units": "f"}').pipe(
        lxo.partial_json(Weather)
    ).subscribe(got.append, got.append)
    error = got[-1]
    assert isinstance(error, StructuredOutputError)
    assert error.raw == '{"city": "X", "temperature": "hot", "units": "f"}'
    assert error.errors[0]["loc"] == ("temperature",)


def test_partial_json_a_value_not_valid_so_far_is_not_emitted() -> None:
    values = _values(_call('{"temperature": 5', ', "city": "Ed', 'inburgh", "units": "c"}'),
                     Weather)
    whole = Weather(city="Edinburgh", temperature=5, units="c")
    assert [(value.value, value.done) for value in values] == [(whole, False), (whole, True)]


def test_partial_json_schemas_by_tool_name_and_type_adapters() -> None:
    schema = {"f": TypeAdapter(dict[str, int])}
    values = _values(_call('{"a": 1, ', '"b": 2}'), schema)
    assert values[-1].value == {"a": 1, "b": 2}
    got: list[Any] = []
    _call('{"a": "x"}').pipe(lxo.partial_json(schema)).subscribe(got.append, got.append)
    assert isinstance(got[-1], StructuredOutputError)


def test_partial_json_a_call_without_fragments_is_an_empty_object() -> None:
    assert _values(_call()) == [PartialValue(0, "c1", "f", {}, True)]


def test_partial_json_a_cut_call_has_no_final_value_and_the_error_passes() -> None:
    got: list[Any] = []
    _call('{"q": "ab', stop=False).pipe(
        ops.concat(reactivex.throw(IncompleteStreamError("EOF"))), lxo.partial_json()
    ).subscribe(got.append, got.append)
    assert got[0] == PartialValue(0, "c1", "f", {"q": "ab"}, False)
    assert isinstance(got[-1], IncompleteStreamError)


def test_partial_json_prose_text_is_left_alone() -> None:
    events: list[Event] = [
        MessageStart("openai-chat"), BlockStart(0, "text"), TextDelta(0, " Hello {"),
        TextDelta(0, '"a": 1}'), BlockStop(0), MessageStop("end_turn"),
    ]
    assert _values(reactivex.from_iterable(events)) == []


def test_partial_json_a_block_left_open_ends_with_the_message() -> None:
    events: list[Event] = [
        MessageStart("openai-chat"), TextDelta(3, ' ["x"'), TextDelta(3, "]"),
        MessageStop("end_turn"),
    ]
    assert _values(reactivex.from_iterable(events))[-1] == PartialValue(
        3, None, None, ["x"], True
    )


def test_partial_json_reparses_a_bounded_number_of_times() -> None:
    parses: list[int] = []
    state = PartialJson()
    parse = state._parse

    def counting(text: str) -> Any:
        parses.append(len(text))
        return parse(text)

    state._parse = counting
    state.feed(BlockStart(0, "tool_call", "c", "f"))
    document = json.dumps({"items": [{"k": str(i), "v": [i, i]} for i in range(5000)]})
    for start in range(0, len(document), 5):
        state.feed(ToolArgsDelta(0, document[start:start + 5]))
    (final,) = state.feed(BlockStop(0))
    assert final.value == json.loads(document)
    assert sum(parses) <= len(document) * (2 + 1 / GROWTH)  # (not one parse per delta)
    assert len(parses) < 60


def test_partial_json_a_final_error_keeps_the_text_from_its_first_byte() -> None:
    got: list[Any] = []
    _call("  ", '\n{"a": ', "}").pipe(lxo.partial_json()).subscribe(got.append, got.append)
    assert isinstance(got[-1], StructuredOutputError)
    assert got[-1].raw == '  \n{"a": }'


def test_partial_json_a_free_form_tool_input_is_left_alone() -> None:
    assert _values(_call(" SELECT 1", " FROM t")) == []


def _answers() -> list[Capture]:
    out = []
    for cap in CAPTURES:
        response = llm_rx.reassemble(cap.data, cap.provider)
        text = response.text.strip()
        if response.complete and text.startswith(("{", "[")):
            try:
                json.loads(text)
            except ValueError:
                continue  # (cut by max_tokens: below)
            out.append(cap)
    return out


def test_partial_json_an_answer_cut_by_max_tokens_is_an_error_with_its_text() -> None:
    data = capture("openai/chat-max-tokens-length.sse").data
    got: list[Any] = []
    llm_rx.from_bytes(data).pipe(lxo.partial_json()).subscribe(got.append, got.append)
    assert isinstance(got[-1], StructuredOutputError)
    assert got[-1].raw == llm_rx.reassemble(data).text == '{"'


@pytest.mark.parametrize("cap", _answers(), ids=lambda cap: cap.name)
def test_partial_json_every_json_answer_capture_is_monotone_and_ends_at_its_text(
    cap: Capture,
) -> None:
    response = llm_rx.reassemble(cap.data, cap.provider)
    values = _values(llm_rx.from_bytes(cap.data, provider=cap.provider))
    answers = [value for value in values if value.id is None and value.name is None]
    assert answers[-1].done
    assert answers[-1].value == json.loads(response.text)
    for old, new in itertools.pairwise(answers):
        assert _contained(old.value, new.value), (old.value, new.value)


def _streamed_answer(text: str, size: int) -> Observable[Event]:
    pieces = [text[at:at + size] for at in range(0, len(text), size)]
    return reactivex.from_iterable([
        MessageStart("openai-chat"), BlockStart(0, "text"),
        *[TextDelta(0, piece) for piece in pieces], BlockStop(0), MessageStop("end_turn"),
    ])


FENCED = '```json\n{"city": "Paris", "temperature": 21, "units": "c"}\n```'


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
@pytest.mark.parametrize("text", [
    FENCED, FENCED + "\n", "\n" + FENCED, FENCED.replace("```json", "```"),
    FENCED.replace("```json", "```JSON "), FENCED + "\nThat is today's weather.",
    '```json\n{\n  "city": "Paris",\n  "temperature": 21,\n  "units": "c"\n}\n```',
])
def test_partial_json_reads_a_json_answer_in_a_markdown_fence(text: str, size: int) -> None:
    # bug class: a fenced JSON answer (which models write very often) giving nothing at all
    values = _values(_streamed_answer(text, size), Weather)
    assert values
    assert values[-1].done
    assert values[-1].value == Weather(city="Paris", temperature=21, units="c")
    so_far = _values(_streamed_answer(text, size))
    for old, new in itertools.pairwise(value.value for value in so_far):
        assert _contained(old, new)


@pytest.mark.parametrize("text", ["```python\nprint(1)\n```", "`{}` is an empty object",
                                  "Here is the JSON:\n```json\n{}\n```"])
def test_partial_json_leaves_other_fenced_or_quoted_text_alone(text: str) -> None:
    assert _values(_streamed_answer(text, 2)) == []
