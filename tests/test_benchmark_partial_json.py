"""The partial_json benchmark times what it says, on a small answer (not timed here)."""

from __future__ import annotations

import orjson

import llm_rx
from benchmarks import partial_json as bench
from benchmarks.streams import chunked


def test_partial_json_benchmark_streams_carry_the_document_in_five_character_deltas() -> None:
    text = bench.document(2_000)
    assert len(text) >= 2_000
    for body, place in ((bench.answer(text), "text"), (bench.tool_call(text), "raw_arguments")):
        response = llm_rx.reassemble(body, provider="openai-chat")
        assert response.complete
        assert getattr(response.content[0], place) == text
        assert body.count(b"data: ") == -(-len(text) // 5) + 3


def test_partial_json_benchmark_contender_ends_at_the_document() -> None:
    text = bench.document(2_000)
    for body in (bench.answer(text), bench.tool_call(text)):
        values = bench.partial(chunked(body))
        assert values[-1].done
        assert values[-1].value == orjson.loads(text)
        assert len(values) > 2
