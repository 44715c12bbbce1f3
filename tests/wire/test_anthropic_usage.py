"""Anthropic usage: totals, and compaction steps counted as they are billed."""

from __future__ import annotations

import orjson

import llm_rx
from llm_rx.wire.anthropic_usage import usage_from_anthropic
from tests.captures import HERE, capture


def test_anthropic_usage_compaction_stream_counts_the_compaction_step() -> None:
    # The compaction step read 55,096 cached tokens; the top-level counts leave it out.
    usage = llm_rx.reassemble(capture("anthropic/compaction.sse").data, "anthropic").usage
    assert usage.cache_read_tokens == 55_096  # 0 top-level + 55,096 in the compaction step
    assert usage.cache_write_tokens == 0
    assert usage.input_tokens == 181 + 100 + 55_096  # fresh (message + compaction) + cached
    assert usage.output_tokens == 8 + 83
    assert usage.reasoning_tokens is None


def test_anthropic_usage_compaction_native_body_keeps_the_wire_usage() -> None:
    response = llm_rx.reassemble(capture("anthropic/compaction.sse").data, "anthropic")
    native = llm_rx.to_native(response, "anthropic")["usage"]
    assert native["input_tokens"] == 181  # the body says what the wire said
    assert [step["type"] for step in native["iterations"]] == ["compaction", "message"]


def test_anthropic_usage_compaction_nonstream_body() -> None:
    body = orjson.loads((HERE / "anthropic/compaction.nonstream.json").read_bytes())
    usage = usage_from_anthropic(body["usage"])
    assert usage.cache_write_tokens == 55_096  # written by the compaction step
    assert usage.cache_read_tokens == 0
    assert usage.input_tokens == 229 + 100 + 55_096
    assert usage.output_tokens == 5 + 131


def test_anthropic_usage_other_model_iterations_are_not_added() -> None:
    # An advisor's steps run on another model (their own ``model``): not this reply's tokens.
    advisor = llm_rx.reassemble(capture("anthropic/advisor-tool.sse").data, "anthropic").usage
    assert (advisor.input_tokens, advisor.output_tokens) == (2411, 145)
    fallback = llm_rx.reassemble(capture("anthropic/fallback-block.sse").data, "anthropic").usage
    assert (fallback.input_tokens, fallback.output_tokens) == (412, 264)


def test_anthropic_usage_compaction_unreported_counts_stay_none() -> None:
    usage = usage_from_anthropic({
        "input_tokens": 10,
        "iterations": [{"type": "compaction", "input_tokens": 5, "output_tokens": 7},
                       {"type": "message", "input_tokens": 10}, "not a step"],
    })
    assert usage.input_tokens == 15
    assert usage.output_tokens == 7  # reported only by the compaction step
    assert usage.cache_read_tokens is None
    assert usage.cache_write_tokens is None


def test_anthropic_usage_without_iterations_is_the_top_level() -> None:
    usage = usage_from_anthropic({"input_tokens": 3, "cache_read_input_tokens": 4,
                                  "output_tokens": 2, "iterations": None})
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (7, 4, 2)
