"""thinking_only, merge_usage, tool_calls, attach_signatures, metrics: marbles and captures."""

from __future__ import annotations

import orjson
import reactivex
from reactivex import operators as ops
from reactivex.subject import Subject
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import (
    BlockStart,
    BlockStop,
    MessageStart,
    MessageStop,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from llm_rx.response import ThinkingBlock, Usage

from ..captures import capture
from ..streams import DONE, chat_chunk, sse

on_next, on_completed, on_error = (
    ReactiveTest.on_next, ReactiveTest.on_completed, ReactiveTest.on_error
)
subscribe = ReactiveTest.subscribe

LOOKUP = {
    "S": MessageStart("anthropic"),
    "b": BlockStart(0, "thinking"),
    "t": ThinkingDelta(0, "hmm"),
    "s": SignatureDelta(0, "SIG"),
    "e": BlockStop(0),
    "c": BlockStart(1, "text"),
    "h": TextDelta(1, "Hi"),
    "u": UsageUpdate(Usage(input_tokens=10)),
    "v": UsageUpdate(Usage(output_tokens=5)),
    "w": UsageUpdate(Usage(input_tokens=10, output_tokens=7)),
    "M": MessageStop("end_turn"),
}


def test_thinking_only_marbles() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-S-b-t-s-e-c-h-M-|", LOOKUP)
        assert start(source.pipe(lxo.thinking_only())) == exp("-----t-----------|", {"t": "hmm"})


def test_merge_usage_marbles_overlays_never_adds() -> None:
    with marbles_testing() as (start, cold, _hot, exp):
        source = cold("-S-u-h-v-w-u-M-|", LOOKUP)
        expected = exp(
            "---a---b-c-----|",
            {
                "a": Usage(input_tokens=10),
                "b": Usage(input_tokens=10, output_tokens=5),
                "c": Usage(input_tokens=10, output_tokens=7),
            },
        )
        assert start(source.pipe(lxo.merge_usage())) == expected


def test_merge_usage_absent_stays_absent() -> None:
    body = sse(chat_chunk({"content": "hi"}), chat_chunk({}, "stop")) + DONE
    usages = llm_rx.from_bytes(body, "openai-chat").pipe(lxo.merge_usage(), ops.to_list()).run()
    assert usages == []


def test_tool_calls_emitted_at_block_end_not_on_a_parseable_prefix() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        on_next(210, MessageStart("openai-chat")),
        on_next(220, BlockStart(0, "tool_call", id="call_1", name="rm")),
        on_next(230, ToolArgsDelta(0, '{"path": "/tmp"}')),  # parses, but is not finished
        on_next(240, ToolArgsDelta(0, ', "recursive": true}')),
        on_next(250, BlockStop(0)),
        on_next(260, MessageStop("tool_use")),
        on_completed(270),
    )
    observer = scheduler.start(lambda: source.pipe(lxo.tool_calls()))
    assert [m.time for m in observer.messages] == [250, 270]
    call = observer.messages[0].value.value
    assert call.raw_arguments == '{"path": "/tmp"}, "recursive": true}'
    assert call.arguments is None  # never parsed: kept raw
    assert source.subscriptions == [subscribe(200, 270)]


def test_tool_calls_truncated_call_is_never_emitted() -> None:
    body = sse(chat_chunk({"tool_calls": [{"index": 0, "id": "c", "type": "function",
                                           "function": {"name": "rm", "arguments": "{}"}}]}))
    events = llm_rx.from_bytes(body, "openai-chat")
    calls = events.pipe(lxo.tool_calls(), ops.materialize(), ops.to_list()).run()
    assert [n.kind for n in calls] == ["E"]  # no call, then the truncation error


def test_tool_calls_capture_parallel() -> None:
    data = capture("openai/chat-parallel-tool-calls.sse").data
    calls = llm_rx.from_bytes(data).pipe(lxo.tool_calls(), ops.to_list()).run()
    assert [c.name for c in calls] == ["GetWeatherArgs", "get_stock_price"]
    assert calls == llm_rx.reassemble(data).tool_calls


def test_attach_signatures_thinking_redacted_and_orphan() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        on_next(210, MessageStart("anthropic")),
        on_next(220, BlockStart(0, "thinking")),
        on_next(230, ThinkingDelta(0, "step")),
        on_next(240, SignatureDelta(0, "SIG-0")),
        on_next(250, BlockStop(0)),
        on_next(260, BlockStart(1, "redacted_thinking")),
        on_next(270, SignatureDelta(1, "DATA-1")),
        on_next(280, BlockStop(1)),
        on_next(290, SignatureDelta(7, "ORPHAN")),
        on_next(300, MessageStop("end_turn")),
        on_completed(310),
    )
    observer = scheduler.start(lambda: source.pipe(lxo.attach_signatures()))
    assert [m.time for m in observer.messages] == [250, 280, 300, 310]
    blocks = [m.value.value for m in observer.messages[:-1]]
    assert blocks == [
        ThinkingBlock(text="step", signature="SIG-0"),
        ThinkingBlock(text="", signature="DATA-1", redacted=True),
        ThinkingBlock(text="", signature="ORPHAN"),
    ]


def test_attach_signatures_capture_byte_identical() -> None:
    data = capture("anthropic/redacted-thinking.sse").data
    blocks = llm_rx.from_bytes(data).pipe(lxo.attach_signatures(), ops.to_list()).run()
    wire = [  # the redacted blocks' data, read off the wire itself
        orjson.loads(line[6:])["content_block"]["data"]
        for line in data.split(b"\n")
        if line.startswith(b"data: ") and b'"redacted_thinking"' in line
    ]
    assert [b.signature for b in blocks] == wire
    assert all(b.redacted and b.text == "" for b in blocks)


def test_metrics_virtual_time_ttft_gaps_stalls_throughput() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        on_next(201, MessageStart("anthropic")),
        on_next(203, BlockStart(0, "text")),
        on_next(205, TextDelta(0, "a")),
        on_next(206, TextDelta(0, "b")),
        on_next(216, TextDelta(0, "c")),  # a 10 s stall
        on_next(217, UsageUpdate(Usage(output_tokens=30))),
        on_next(218, MessageStop("end_turn")),
        on_completed(220),
    )
    observer = scheduler.start(lambda: source.pipe(lxo.metrics(stall_after=5)))
    (result, done) = observer.messages
    assert (result.time, done.time) == (220, 220)
    m = result.value.value
    assert m.time_to_first_token == 5.0  # subscribed at 200, first text at 205
    assert m.duration == 20.0
    assert m.events == 7
    assert m.content_deltas == 3
    assert m.max_gap == 10.0
    assert m.stalls == 1
    assert m.output_tokens == 30
    assert m.tokens_per_second == 30 / 15
    assert source.subscriptions == [subscribe(200, 220)]


def test_metrics_without_usage_has_no_token_rate() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_hot_observable(
        on_next(210, TextDelta(0, "a")), on_next(215, TextDelta(0, "b")), on_completed(230)
    )
    observer = scheduler.start(lambda: source.pipe(lxo.metrics()))
    m = observer.messages[0].value.value
    assert m.tokens_per_second is None
    assert m.deltas_per_second == 2 / 20


def test_operators_route_a_malformed_event_to_on_error() -> None:
    for operator in (lxo.tool_calls(), lxo.attach_signatures()):
        errors: list[Exception] = []
        bus: Subject[object] = Subject()
        bus.pipe(operator).subscribe(on_error=errors.append)  # type: ignore[arg-type]
        bus.on_next("not an event")
        assert len(errors) == 1


def test_tool_calls_and_signatures_for_blocks_the_provider_never_started_or_stopped() -> None:
    events = [
        MessageStart("x"),
        ToolArgsDelta(0, '{"a": 1}'),  # no BlockStart: the builder opens the call
        BlockStart(1, "thinking"),
        ThinkingDelta(1, "hmm"),
        SignatureDelta(1, "SIG"),  # no BlockStop before the message ends
        MessageStop("tool_use"),
    ]
    calls = reactivex.from_iterable(events).pipe(lxo.tool_calls(), ops.to_list()).run()
    assert [c.arguments for c in calls] == [{"a": 1}]
    blocks = reactivex.from_iterable(events).pipe(lxo.attach_signatures(), ops.to_list()).run()
    assert blocks == [ThinkingBlock(text="hmm", signature="SIG")]
