"""cost(): the reply's price from its final usage, checked against genai-prices' own
calculation on the usage the providers' bodies carry."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import genai_prices
import orjson
import pytest
import reactivex
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import Event, MessageStart, MessageStop, TextDelta, UsageUpdate
from llm_rx.response import Usage
from llm_rx.wire.anthropic_usage import usage_from_anthropic

from ..captures import capture
from ..sinks.timeline import events_of

AT = datetime(2026, 11, 1, tzinfo=UTC)


def _costs(source: reactivex.Observable[Event]) -> list[Any]:
    out: list[Any] = []
    source.pipe(lxo.cost(at=AT)).subscribe(out.append, lambda error: out.append(error))
    return out


def _of(name: str) -> lxo.Cost:
    costs = _costs(llm_rx.from_file(capture(name).path))
    assert len(costs) == 1
    cost: lxo.Cost = costs[0]
    return cost


# (capture, its wire, genai-prices' provider id and API flavour to read the native body)
PRICED = [
    ("anthropic/thinking-signature.sse", "anthropic", "anthropic", "default"),
    ("anthropic/web-search-citations.sse", "anthropic", "anthropic", "default"),
    ("openai/chat-tool-call-gpt41mini.sse", "openai-chat", "openai", "chat"),
    ("openai/responses-code-interpreter-reasoning.sse", "openai-responses", "openai",
     "responses"),
    ("openai/responses-web-search.sse", "openai-responses", "openai", "responses"),
    ("gemini/sse-thought-parts.sse", "gemini", "google", "default"),
    ("gemini/sse-usage-live.sse", "gemini", "google", "default"),
    ("deepseek/chat-reasoning-content.sse", "openai-chat", "deepseek", "chat"),
]


@pytest.mark.parametrize(("name", "wire", "provider", "flavour"), PRICED)
def test_cost_matches_genai_prices_on_the_native_usage(
    name: str, wire: str, provider: str, flavour: str
) -> None:
    # bug class: usage mapped to the price list's fields wrongly (cache reads counted twice,
    # reasoning added to output again, the requested model priced instead of the served one)
    response = llm_rx.reassemble(capture(name).path)
    native = llm_rx.to_native(response, wire)  # type: ignore[arg-type]
    expected = genai_prices.extract_usage(
        native, provider_id=provider, api_flavor=flavour
    ).calc_price(genai_request_timestamp=AT)
    cost = _of(name)
    assert cost.total == expected.total_price
    assert (cost.model, cost.provider) == (expected.model.id, expected.provider.id)
    assert cost.served_model == response.model
    assert cost.complete
    assert cost.reason is None


@pytest.mark.parametrize("name", [name for name, *_ in PRICED])
def test_cost_parts_add_up_to_the_total(name: str) -> None:
    # bug class: a part priced at the wrong rate (cache reads at the input rate, reasoning
    # twice), seen only once the parts are shown beside the total
    cost = _of(name)
    parts = [cost.input, cost.cache_read, cost.cache_write, cost.output, cost.reasoning,
             cost.server_tools]
    assert cost.total == sum((part for part in parts if part is not None), Decimal(0))


def test_cost_web_searches_the_usage_reported_are_priced() -> None:
    # bug class: server tool use the provider bills (2 web searches at $10 / 1,000) left out
    assert _of("anthropic/web-search-citations.sse").server_tools == Decimal("0.02")
    assert _of("anthropic/thinking-signature.sse").server_tools is None


def test_cost_cache_reads_at_their_own_rate() -> None:
    # bug class: cached prompt tokens billed as fresh ones (or as free)
    cost = _of("openai/responses-code-interpreter-reasoning.sse")  # 3,200 of 3,727 cached
    assert cost.cache_read is not None
    assert cost.input is not None
    rate = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=1_000_000, cache_read_tokens=1_000_000), "gpt-5",
        provider_id="openai", genai_request_timestamp=AT).total_price
    assert cost.cache_read == rate * 3200 / 1_000_000
    assert cost.input == genai_prices.calc_price(
        genai_prices.Usage(input_tokens=527), "gpt-5", provider_id="openai",
        genai_request_timestamp=AT).total_price


def test_cost_anthropic_cache_writes_at_their_own_rate() -> None:
    # bug class: a cache write priced at the plain input rate (Anthropic bills it 1.25x)
    usage = Usage(input_tokens=1_100, output_tokens=10, cache_read_tokens=0,
                  cache_write_tokens=1_000)
    events: list[Event] = [MessageStart("anthropic", "claude-sonnet-4-5-20250929", "m"),
                           UsageUpdate(usage), MessageStop("end_turn")]
    (cost,) = _costs(reactivex.from_iterable(events))
    assert cost.cache_write == Decimal("0.00375")  # $3.75 / MTok
    assert cost.input == Decimal("0.0003")  # the 100 uncached at $3 / MTok
    assert cost.total == Decimal("0.00375") + Decimal("0.0003") + Decimal("0.00015")


def test_cost_prices_the_served_model_not_a_guess() -> None:
    # bug class: the requested (or a default) model priced; the wire's model wins
    events: list[Event] = [MessageStart("openai-chat", "gpt-4o-mini-2024-07-18"),
                           UsageUpdate(Usage(input_tokens=1_000_000, output_tokens=0)),
                           MessageStop("end_turn")]
    (cost,) = _costs(reactivex.from_iterable(events))
    assert (cost.model, cost.total) == ("gpt-4o-mini", Decimal("0.15"))


def test_cost_without_usage_is_none_with_a_reason() -> None:
    # bug class: absent usage read as zero tokens: a reply that looks free
    events: list[Event] = [MessageStart("openai-chat", "gpt-4o"), TextDelta(0, "hi"),
                           MessageStop("end_turn")]
    (cost,) = _costs(reactivex.from_iterable(events))
    assert cost.total is None
    assert cost.input is None
    assert cost.output is None
    assert cost.reason == "usage not reported"
    assert cost.text() == "cost: unknown (usage not reported)"


def test_cost_with_a_count_missing_is_none_with_a_reason() -> None:
    # bug class: a missing output count filled in with 0, so the price is the input's only
    events: list[Event] = [MessageStart("anthropic", "claude-haiku-4-5-20251001"),
                           UsageUpdate(Usage(input_tokens=10)), MessageStop("end_turn")]
    (cost,) = _costs(reactivex.from_iterable(events))
    assert cost.total is None
    assert cost.reason == "output tokens not reported"


def test_cost_of_a_model_not_in_the_price_list_says_so() -> None:
    cost = _of("ollama/chat-gemma3-text.ndjson")
    assert cost.total is None
    assert cost.reason == "no price for 'gemma3:1b' (ollama)"


def test_cost_without_a_served_model_says_so() -> None:
    cost = _of("bedrock/converse-stream-text.eventstream")  # (ConverseStream names no model)
    assert cost.total is None
    assert cost.reason == "the served model was not reported"


def test_cost_unreported_cache_reads_are_noted() -> None:
    # bug class: a price that silently assumed nothing was cached
    cost = _of("gemini/sse-thought-parts.sse")
    assert cost.notes == ("cache reads not reported: every input token priced as uncached",)
    assert _of("anthropic/thinking-signature.sse").notes == ()


def test_cost_of_a_cut_stream_is_priced_on_what_arrived_and_marked() -> None:
    # bug class: a reply cut short priced as a finished one (or not at all)
    data = capture("anthropic/text-basic.sse").data
    cut = data[: data.index(b"event: message_stop")]
    costs = _costs(llm_rx.from_bytes(cut, provider="anthropic"))
    cost, error = costs
    assert isinstance(error, llm_rx.errors.IncompleteStreamError)
    assert not cost.complete
    assert cost.total is not None
    assert cost.text().endswith("(so far)")
    assert cost.total == _of("anthropic/text-basic.sse").total


def test_cost_is_the_same_a_read_and_an_event_at_a_time() -> None:
    # bug class: the per-read path and the per-event path disagree
    name = "openai/responses-web-search.sse"
    per_read = _of(name)
    behind_map = _costs(llm_rx.from_file(capture(name).path).pipe(ops.map(lambda e: e)))
    assert behind_map == [per_read]
    listed = _costs(reactivex.from_iterable(events_of(capture(name).path)))
    assert listed == [per_read]


def test_cost_error_before_the_reply_is_passed_on_without_a_cost() -> None:
    error = llm_rx.errors.WireFormatError("not a stream")
    assert _costs(reactivex.throw(error)) == [error]


def _billed_usage(raw: dict[str, Any]) -> genai_prices.Usage:
    """What Anthropic bills for a request it compacted: every sampling step in
    ``usage.iterations`` (the compaction's and the answer's), summed; the top-level counts
    are the answer's only. (In genai-prices' names: input counts cached tokens too.)"""
    steps = raw["iterations"]
    fresh, read, write, output = (
        sum(step[name] for step in steps)
        for name in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                     "output_tokens"))
    return genai_prices.Usage(input_tokens=fresh + read + write, cache_read_tokens=read,
                              cache_write_tokens=write, output_tokens=output)


def _compacted(form: str) -> Path:
    """The compacted request's body: streamed, or its non-stream counterpart."""
    stream = capture("anthropic/compaction.sse")
    path = stream.path if form == "stream" else stream.nonstream
    assert path is not None
    return path


def _last_usage(path: Path) -> dict[str, Any]:
    """The usage object of a body as sent (a stream's: its last message_delta's)."""
    data = path.read_bytes()
    if path.suffix == ".json":
        usage: dict[str, Any] = orjson.loads(data)["usage"]
        return usage
    deltas = [orjson.loads(line[6:]) for line in data.splitlines()
              if line.startswith(b"data: ") and b'"message_delta"' in line]
    last: dict[str, Any] = deltas[-1]["usage"]
    return last


@pytest.mark.parametrize("form", ["stream", "nonstream"])
def test_cost_of_a_compacted_request_is_every_step_anthropic_bills(form: str) -> None:
    # bug class: the summarising step left out of the price (its tokens are not in the
    # top-level usage, which genai-prices reads from the body: 55,096 cached tokens unbilled)
    path = _compacted(form)
    raw = _last_usage(path)
    assert [step["type"] for step in raw["iterations"]] == ["compaction", "message"]
    expected = genai_prices.calc_price(
        _billed_usage(raw), "claude-sonnet-4-6", provider_id="anthropic",
        genai_request_timestamp=AT)
    (cost,) = _costs(llm_rx.from_file(path))
    assert cost.total == expected.total_price
    assert (cost.model, cost.provider) == (expected.model.id, expected.provider.id)
    assert cost.complete
    parts = [cost.input, cost.cache_read, cost.cache_write, cost.output]
    assert sum(part for part in parts if part is not None) == cost.total
    top_level_only = genai_prices.extract_usage(
        llm_rx.to_native(llm_rx.reassemble(path), "anthropic"),
        provider_id="anthropic").calc_price(genai_request_timestamp=AT)
    assert cost.total > top_level_only.total_price  # (what reading the body alone gives)


@pytest.mark.parametrize("compacted", [False, True])
def test_cost_anthropic_cache_writes_kept_an_hour_at_their_own_rate(compacted: bool) -> None:
    # bug class: a cache write kept an hour (cache_creation.ephemeral_1h_input_tokens, billed
    # 2x input where a 5-minute one is 1.25x) priced at the 5-minute rate, or its part of the
    # cost landing elsewhere; a compaction step's 1h writes left out of the price
    native: dict[str, Any] = {
        "input_tokens": 100, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 1_000,
        "output_tokens": 10,
        "cache_creation": {"ephemeral_5m_input_tokens": 600, "ephemeral_1h_input_tokens": 400},
    }
    if compacted:
        native["iterations"] = [
            {"type": "compaction", "input_tokens": 50, "cache_read_input_tokens": 0,
             "cache_creation_input_tokens": 300, "output_tokens": 20,
             "cache_creation": {"ephemeral_5m_input_tokens": 100,
                                "ephemeral_1h_input_tokens": 200}},
            {"type": "message", "input_tokens": 100, "cache_read_input_tokens": 0,
             "cache_creation_input_tokens": 1_000, "output_tokens": 10,
             "cache_creation": {"ephemeral_5m_input_tokens": 600,
                                "ephemeral_1h_input_tokens": 400}},
        ]
    model = "claude-sonnet-4-5-20250929"
    events: list[Event] = [MessageStart("anthropic", model, "m"),
                           UsageUpdate(usage_from_anthropic(native)), MessageStop("end_turn")]
    (cost,) = _costs(reactivex.from_iterable(events))
    fresh, writes, hour, output = (150, 1_300, 600, 30) if compacted else (100, 1_000, 400, 10)
    billed = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=fresh + writes, cache_read_tokens=0,
                           cache_write_tokens=writes, cache_write_1h_tokens=hour,
                           output_tokens=output),
        model, provider_id="anthropic", genai_request_timestamp=AT).total_price
    assert cost.total == billed
    # (by hand: $3 fresh, $3.75 a 5-minute write, $6 an hour's, $15 output, per MTok)
    assert cost.total == (Decimal(3) * fresh + Decimal("3.75") * (writes - hour)
                          + Decimal(6) * hour + Decimal(15) * output) / 1_000_000
    assert cost.cache_write == (Decimal("3.75") * (writes - hour) + Decimal(6) * hour) / 1_000_000
    assert cost.server_tools is None  # (every part accounted for: nothing left over)
    assert cost.input == Decimal(3) * fresh / 1_000_000


def test_cost_of_a_stopped_reply_without_output_tokens_is_at_least_its_input() -> None:
    # bug class: a reply stopped before its usage priced as free, or not priced at all
    from llm_rx.events import BlockStart

    stop: reactivex.subject.Subject[Any] = reactivex.subject.Subject()
    events: list[Event] = [
        MessageStart("anthropic", "claude-sonnet-4-20250514", "msg_1"),
        UsageUpdate(Usage(input_tokens=1000)), BlockStart(0, "text"), TextDelta(0, "Hel")]

    def press(event: Event) -> None:
        if type(event) is TextDelta:
            stop.on_next(True)

    costs = _costs(reactivex.from_iterable(events).pipe(
        ops.do_action(press), lxo.stop_on(stop)))
    cost, error = costs
    assert isinstance(error, llm_rx.CancelledStreamError)
    assert (cost.complete, cost.total, cost.output) == (False, None, None)
    whole = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=1000), "claude-sonnet-4-20250514",
        provider_id="anthropic", genai_request_timestamp=AT)
    assert cost.at_least == Decimal(whole.total_price)
    assert cost.input == cost.at_least
    assert cost.reason.startswith("output tokens not reported")
    assert cost.text() == f"cost: at least ${cost.at_least.normalize()} (output tokens not " \
        "reported)"


def test_cost_of_a_complete_reply_without_output_tokens_is_still_unknown() -> None:
    events = [MessageStart("anthropic", "claude-sonnet-4-20250514"),
              UsageUpdate(Usage(input_tokens=1000)), MessageStop("end_turn")]
    (cost,) = _costs(reactivex.from_iterable(events))
    assert (cost.total, cost.at_least, cost.reason) == (None, None, "output tokens not reported")
