"""The ``ollama`` decoder: ``/api/chat`` and ``/api/generate`` NDJSON.

Recorded captures for text, structured output and generate; hand-built lines in the shape
Ollama sends for what no capture has: ``thinking``, whole ``tool_calls``, ``done_reason:
length``, in-band errors. The pull-progress capture is the "not a chat stream" case.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx.errors import WireFormatError
from llm_rx.events import (
    BlockStart,
    BlockStop,
    ChoiceEnd,
    MessageStart,
    MessageStop,
    MetadataUpdate,
    TextDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from llm_rx.response import ThinkingBlock, ToolCallBlock, Usage
from llm_rx.wire.ollama import OllamaDecoder
from llm_rx.wire.registry import sniff

from ..captures import HERE, capture
from ..helpers import decode_events, outcome, split_at

MODEL = "qwen3:0.6b"
PULL = HERE / "ollama" / "pull-progress.ndjson"


def line(message: dict[str, Any] | None = None, done: bool = False, **top: Any) -> bytes:
    frame: dict[str, Any] = {"model": MODEL, "created_at": "2025-08-01T10:00:00.1Z"}
    if message is not None:
        frame["message"] = {"role": "assistant", "content": "", **message}
    frame["done"] = done
    frame.update(top)
    return orjson.dumps(frame) + b"\n"


def done(reason: str | None = "stop", **top: Any) -> bytes:
    fields: dict[str, Any] = {"total_duration": 900, "load_duration": 100,
                              "prompt_eval_count": 11, "prompt_eval_duration": 200,
                              "eval_count": 22, "eval_duration": 600}
    if reason is not None:
        fields["done_reason"] = reason
    return line({}, True, **{**fields, **top})


def chat(*lines: bytes) -> llm_rx.Response:
    return llm_rx.reassemble(b"".join(lines), "ollama")


def wire_lines(name: str) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for raw in capture(name).data.splitlines() if raw.strip()]


# -- recorded captures ---------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "ollama/chat-gemma3-text.ndjson",
    "ollama/chat-gemma3-format-json.ndjson",
    "ollama/generate-gemma3-text.ndjson",
])
def test_ollama_capture_text_usage_and_end(name: str) -> None:
    lines = wire_lines(name)
    last = lines[-1]
    field = "response" if "response" in last else "message"
    text = "".join(
        frame["response"] if field == "response" else frame["message"]["content"]
        for frame in lines
    )
    response = llm_rx.reassemble(capture(name).data)  # sniffed
    assert response.provider == "ollama"
    assert response.model == last["model"] == "gemma3:1b"
    assert response.text == text
    assert [b.type for b in response.content] == ["text"]
    assert response.complete
    assert response.stop_reason == "end_turn"
    assert response.native_stop_reason == last["done_reason"] == "stop"
    assert response.usage.input_tokens == last["prompt_eval_count"]
    assert response.usage.output_tokens == last["eval_count"]
    assert response.usage.cache_read_tokens is None
    for key in ("created_at", "total_duration", "load_duration", "prompt_eval_duration",
                "eval_duration"):
        assert response.extra[key] == last[key]  # the done line's, for to_native


def test_ollama_generate_capture_keeps_context() -> None:
    name = "ollama/generate-gemma3-text.ndjson"
    response = llm_rx.reassemble(capture(name).data, "ollama")
    assert response.extra["context"] == wire_lines(name)[-1]["context"]


def test_ollama_structured_output_is_text() -> None:
    response = llm_rx.reassemble(capture("ollama/chat-gemma3-format-json.ndjson").data)
    assert orjson.loads(response.text) == {"answer": "600"}


@pytest.mark.parametrize("name", [
    "ollama/chat-gemma3-text.ndjson",
    "ollama/generate-gemma3-text.ndjson",
])
def test_ollama_capture_split_at_every_offset_same_events(name: str) -> None:
    data = capture(name).data[:1500]  # a prefix: every cut of the whole body is slow
    whole = outcome([data], "ollama")
    for cut in range(len(data) + 1):
        assert outcome(split_at(data, [cut]), "ollama") == whole, cut


def test_ollama_several_lines_in_one_chunk_and_one_line_in_many() -> None:
    body = capture("ollama/chat-gemma3-text.ndjson").data
    pieces = [body[i : i + 3] for i in range(0, len(body), 3)]
    assert outcome([body], "ollama") == outcome(pieces, "ollama")


# -- not a chat stream ---------------------------------------------------------------------


def test_ollama_pull_progress_with_provider_is_wire_format_error() -> None:
    with pytest.raises(WireFormatError, match="not an Ollama /api/chat or /api/generate") as caught:
        llm_rx.reassemble(PULL.read_bytes(), "ollama")
    assert "pull" in caught.value.message
    assert caught.value.raw == '{"status":"pulling manifest"}'


def test_ollama_pull_progress_sniffed_is_wire_format_error() -> None:
    data = PULL.read_bytes()
    assert sniff(data) == "ollama"
    with pytest.raises(WireFormatError, match="not an Ollama"):
        llm_rx.reassemble(data)


def test_ollama_pull_progress_single_line_without_newline_is_wire_format_error() -> None:
    with pytest.raises(WireFormatError, match="not an Ollama"):
        llm_rx.reassemble(b'{"status":"success"}', "ollama")


def test_ollama_events_of_pull_progress_never_start_a_message() -> None:
    events, error = decode_events([PULL.read_bytes()], "ollama")
    assert events == []
    assert isinstance(error, WireFormatError)


# -- events --------------------------------------------------------------------------------


def test_ollama_event_sequence() -> None:
    events, error = decode_events([line({"content": "Hi"}), done()], "ollama")
    assert error is None
    usage = Usage(input_tokens=11, output_tokens=22,
                  native={"prompt_eval_count": 11, "eval_count": 22})
    assert events == [
        MessageStart("ollama", MODEL),
        MetadataUpdate({"created_at": "2025-08-01T10:00:00.1Z"}),
        BlockStart(0, "text"),
        TextDelta(0, "Hi"),
        BlockStop(0),
        MetadataUpdate({"created_at": "2025-08-01T10:00:00.1Z", "total_duration": 900,
                        "load_duration": 100, "prompt_eval_duration": 200,
                        "eval_duration": 600}),
        UsageUpdate(usage),
        ChoiceEnd(0, "end_turn", "stop"),
        MessageStop("end_turn", None, "stop"),
    ]


def test_ollama_thinking_then_content_are_two_blocks_in_order() -> None:
    response = chat(
        line({"thinking": "The user "}), line({"thinking": "greets."}),
        line({"content": "Hello"}), line({"content": "!"}), done(),
    )
    assert [(b.type, b.text) for b in response.content] == [
        ("thinking", "The user greets."), ("text", "Hello!")
    ]
    assert isinstance(response.content[0], ThinkingBlock)
    assert response.content[0].signature is None


def test_ollama_think_text_think_keeps_three_blocks() -> None:
    # PITFALLS 13: order and block boundaries are preserved.
    response = chat(line({"thinking": "a"}), line({"content": "b"}), line({"thinking": "c"}),
                    done())
    assert [(b.type, b.text) for b in response.content] == [
        ("thinking", "a"), ("text", "b"), ("thinking", "c")
    ]


def test_ollama_generate_thinking_and_response() -> None:
    body = (
        orjson.dumps({"model": MODEL, "created_at": "t", "response": "", "thinking": "hmm",
                      "done": False}) + b"\n"
        + orjson.dumps({"model": MODEL, "created_at": "t", "response": "Yes", "done": False})
        + b"\n"
        + orjson.dumps({"model": MODEL, "created_at": "t", "response": "", "done": True,
                        "done_reason": "stop", "eval_count": 3})
    )
    response = llm_rx.reassemble(body)
    assert [(b.type, b.text) for b in response.content] == [
        ("thinking", "hmm"), ("text", "Yes")
    ]
    assert response.complete  # the done line needs no newline after it


# -- tool calls ----------------------------------------------------------------------------


def call(name: str, arguments: Any, id: str | None = None, index: int | None = None) -> dict[
    str, Any
]:
    function: dict[str, Any] = {"name": name, "arguments": arguments}
    if index is not None:
        function["index"] = index
    out: dict[str, Any] = {"function": function}
    if id is not None:
        out["id"] = id
    return out


def test_ollama_tool_calls_arrive_whole_and_are_never_concatenated() -> None:
    response = chat(
        line({"thinking": "Use getWeather."}),
        line({"tool_calls": [call("getWeather", {"location": "San Francisco, CA", "unit": "c"},
                                  "call_1", 0)]}),
        line({"tool_calls": [call("getWeather", {"unit": "f", "location": "Z\u00fcrich"},
                                  "call_2", 1)]}),
        done(),
    )
    first, second = response.tool_calls
    assert (first.id, first.name, first.arguments) == (
        "call_1", "getWeather", {"location": "San Francisco, CA", "unit": "c"})
    # raw_arguments: the compact JSON of the object, in the wire's key order, UTF-8 kept.
    assert first.raw_arguments == '{"location":"San Francisco, CA","unit":"c"}'
    assert second.raw_arguments == '{"unit":"f","location":"Z\u00fcrich"}'
    assert response.stop_reason == "tool_use"  # done_reason "stop" after client tool calls
    assert response.native_stop_reason == "stop"
    assert [b.type for b in response.content] == ["thinking", "tool_call", "tool_call"]


def test_ollama_parallel_tool_calls_in_one_line_are_separate_blocks() -> None:
    response = chat(
        line({"tool_calls": [call("a", {"x": 1}), call("a", {"x": 2})]}), done(),
    )
    assert [(c.name, c.arguments, c.id) for c in response.tool_calls] == [
        ("a", {"x": 1}, None), ("a", {"x": 2}, None)
    ]


def test_ollama_tool_call_without_arguments_is_empty_object() -> None:
    response = chat(line({"tool_calls": [{"function": {"name": "now", "arguments": {}}}]}),
                    done())
    (only,) = response.tool_calls
    assert (only.arguments, only.raw_arguments) == ({}, "{}")


def test_ollama_tool_call_events() -> None:
    events, _ = decode_events(
        [line({"tool_calls": [call("f", {"b": 1, "a": [2]}, "c1", 0)]}), done()], "ollama"
    )
    starts = [e for e in events if isinstance(e, (BlockStart, ToolArgsDelta, BlockStop))]
    assert starts == [
        BlockStart(0, "tool_call", id="c1", name="f", meta={"function.index": 0}),
        ToolArgsDelta(0, '{"b":1,"a":[2]}'),
        BlockStop(0),
    ]


def test_ollama_text_after_a_tool_call_is_a_new_block() -> None:
    response = chat(line({"content": "Let me check."}), line({"tool_calls": [call("f", {})]}),
                    line({"content": "Done."}), done())
    assert [b.type for b in response.content] == ["text", "tool_call", "text"]
    assert isinstance(response.content[1], ToolCallBlock)


# -- end of stream -------------------------------------------------------------------------


def test_ollama_done_reason_length_is_max_tokens() -> None:
    response = chat(line({"content": "cut"}), done("length"))
    assert response.complete
    assert response.stop_reason == "max_tokens"
    assert response.native_stop_reason == "length"


def test_ollama_done_without_done_reason_is_inferred() -> None:
    response = chat(line({"content": "old server"}), done(None))
    assert response.complete
    assert response.stop_reason == "end_turn"
    assert response.stop_details == "inferred: done without a done_reason"


def test_ollama_done_reason_load_is_kept_in_details() -> None:
    response = chat(done("load"))
    assert response.complete
    assert response.stop_reason == "end_turn"
    assert response.stop_details == "load"


def test_ollama_eof_without_done_line_is_interrupted() -> None:
    response = chat(line({"content": "Hel"}), line({"content": "lo"}))
    assert response.text == "Hello"
    assert response.complete is False
    assert response.stop_reason == "interrupted"
    assert response.error is not None
    assert response.error.kind == "incomplete"


def test_ollama_eof_inside_the_done_line_is_interrupted() -> None:
    response = chat(line({"content": "Hello"}), done()[:-30])
    assert response.text == "Hello"
    assert response.stop_reason == "interrupted"
    assert response.usage.output_tokens is None  # the cut line's counts never arrived


def test_ollama_empty_body_with_provider_is_interrupted() -> None:
    response = llm_rx.reassemble(b"", "ollama")
    assert response.content == []
    assert response.stop_reason == "interrupted"


def test_ollama_lines_after_done_are_ignored() -> None:
    decoder = OllamaDecoder()
    events = decoder.decode(line({"content": "a"}) + done() + line({"content": "late"}))
    assert isinstance(events[-1], MessageStop)
    assert decoder.ignored_frames == 1
    assert decoder.flush() == []


def test_ollama_absent_counts_are_none_not_zero() -> None:
    # A fully cached prompt: Ollama leaves prompt_eval_count out.
    body = line({"content": "x"}) + line({}, True, done_reason="stop", eval_count=1)
    response = chat(body)
    assert response.usage.input_tokens is None
    assert response.usage.output_tokens == 1


# -- errors and extras ---------------------------------------------------------------------


def test_ollama_error_line_mid_stream_is_provider_error_keeping_text() -> None:
    response = chat(line({"content": "Par"}), b'{"error":"an error was encountered while '
                    b'running the model: unexpected EOF"}\n')
    assert response.text == "Par"
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert "unexpected EOF" in response.error.message


def test_ollama_error_line_first_gives_a_response() -> None:
    response = chat(b'{"error":"model \\"nope\\" not found, try pulling it first"}\n')
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert response.content == []


def test_ollama_bad_json_mid_stream_is_wire_format_error() -> None:
    response = chat(line({"content": "ok"}), b"{not json\n", done())
    assert response.text == "ok"
    assert response.error is not None
    assert response.error.kind == "wire_format"
    assert response.error.raw == "{not json"


def test_ollama_logprobs_are_kept() -> None:
    item = {"token": "Hi", "logprob": -0.1, "top_logprobs": []}
    response = chat(line({"content": "Hi"}, logprobs=[item]), done())
    assert response.logprobs == {"content": [item]}


def test_ollama_unknown_fields_are_kept() -> None:
    response = chat(line({"content": "a"}, remote_host="https://ollama.com"),
                    line({"content": "b", "images": None}), done(remote_model="gpt-oss:120b"))
    assert response.extra["remote_host"] == "https://ollama.com"
    assert response.extra["remote_model"] == "gpt-oss:120b"
    assert response.choice_extra == {"images": None}
    assert response.text == "ab"


def test_ollama_four_key_line_that_is_not_the_usual_one_is_read_whole() -> None:
    # bug class: telling the usual line by its number of keys alone
    body = (
        b'{"model":"m","created_at":"t","message":{"role":"assistant","content":"Hi"},'
        b'"done":false}\n'
        b'{"model":"m","message":{"role":"assistant","content":""},"done":false,'
        b'"error":"model crashed"}\n'
    )
    response = llm_rx.reassemble(body, "ollama")
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert response.text == "Hi"


# -- errors do not depend on the reads ---------------------------------------------------------

_OLLAMA_BODIES = sorted((HERE / "ollama").glob("*.ndjson"))
_BAD_LINES = (
    lambda line: b"{not json",
    lambda line: b'{"error":"boom"}',
    lambda line: b'{"error":{"message":"boom"}}',
    lambda line: line[: len(line) // 2],
    lambda line: b"[1]",
    lambda line: b"\x00" + line,
    lambda line: b"\xff" + line,
    lambda line: line.replace(b'"message":{', b'"message":[{', 1),
    lambda line: line.replace(b'"done":false', b'"done":"no"'),
    lambda line: b"  " + line + b"\r",
)


def _kinds(found: tuple[object, ...]) -> tuple[object, ...]:
    events = found[0]
    assert isinstance(events, list)
    return ([(type(event), *event) for event in events], *found[1:])


@settings(max_examples=150, deadline=None)
@given(
    body=st.sampled_from(_OLLAMA_BODIES),
    where=st.floats(0, 1),
    bad=st.sampled_from(range(len(_BAD_LINES))),
    cuts=st.lists(st.floats(0, 1), max_size=8),
)
def test_ollama_errors_do_not_depend_on_the_reads(
    body: Any, where: float, bad: int, cuts: list[float]
) -> None:
    lines = body.read_bytes().split(b"\n")
    at = min(int(where * len(lines)), len(lines) - 1)
    lines[at] = _BAD_LINES[bad](lines[at])
    data = b"\n".join(lines)
    whole = _kinds(outcome([data], "ollama"))
    pieces = split_at(data, [int(cut * len(data)) for cut in cuts])
    assert _kinds(outcome(pieces, "ollama")) == whole
    assert _kinds(outcome([bytes([byte]) for byte in data[:400]] + [data[400:]], "ollama")) == whole


def test_ollama_a_first_line_that_starts_as_another_form_fails_the_same_however_cut() -> None:
    data = b'\x00"status":"pulling manifest"}\n' + PULL.read_bytes()
    whole = _kinds(outcome([data], "ollama"))
    assert whole[1] is WireFormatError
    for cut in range(1, 300):
        assert _kinds(outcome([data[:cut], data[cut:]], "ollama")) == whole
