"""The ``bedrock-converse`` decoder: ConverseStream events on the AWS event stream.

Recorded captures (values read off their frames, by hand and by a length walk that does not
use llm-rx) and hand-built streams for the cases no capture has: reasoning with a signature,
a tool call cut mid-input (PITFALLS 21), in-band exceptions, a bad CRC mid-stream.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

import orjson
import pytest

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
    UsageUpdate,
)
from llm_rx.response import OpaqueBlock, TextBlock, ThinkingBlock, ToolCallBlock, Usage
from llm_rx.wire.bedrock import BedrockDecoder
from llm_rx.wire.eventstream import encode_message
from llm_rx.wire.registry import sniff

from ..captures import capture
from ..helpers import decode_events, outcome, split_at

PROVIDER = "bedrock-converse"


def ev(kind: str, payload: dict[str, Any]) -> bytes:
    return encode_message(
        {":event-type": kind, ":content-type": "application/json", ":message-type": "event"},
        orjson.dumps({**payload, "p": "abcdef"}),
    )


def exception(kind: str, message: str) -> bytes:
    return encode_message(
        {":exception-type": kind, ":content-type": "application/json",
         ":message-type": "exception"},
        orjson.dumps({"message": message}),
    )


def delta(index: int, **value: Any) -> bytes:
    return ev("contentBlockDelta", {"contentBlockIndex": index, "delta": value})


def stop(index: int) -> bytes:
    return ev("contentBlockStop", {"contentBlockIndex": index})


START = ev("messageStart", {"role": "assistant"})
END = ev("messageStop", {"stopReason": "end_turn"})
METADATA = ev("metadata", {"usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12},
                           "metrics": {"latencyMs": 42}})


def reassemble(*frames: bytes) -> llm_rx.Response:
    return llm_rx.reassemble(b"".join(frames), PROVIDER)


def payloads(name: str, kind: str) -> list[dict[str, Any]]:
    """The JSON payloads of the capture's ``kind`` events, read by a length walk."""
    data = capture(name).data
    out = []
    pos = 0
    while pos < len(data):
        total, headers = struct.unpack_from(">II", data, pos)
        head = data[pos + 12 : pos + 12 + headers]
        if b":event-type\x07" + len(kind).to_bytes(2, "big") + kind.encode() in head:
            out.append(orjson.loads(data[pos + 12 + headers : pos + total - 4]))
        pos += total
    return out


# -- recorded captures ---------------------------------------------------------------------


def test_bedrock_text_capture() -> None:
    name = "bedrock/converse-stream-text.eventstream"
    response = llm_rx.reassemble(capture(name).data)  # sniffed: a leading NUL byte
    wire_text = "".join(p["delta"]["text"] for p in payloads(name, "contentBlockDelta"))
    assert response.provider == PROVIDER
    assert response.text == wire_text
    assert response.text.startswith("The capital of France is Paris.")
    assert response.complete
    assert response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (13, 82)
    assert response.usage.cache_read_tokens is None  # not reported: absent, not 0
    assert response.extra == {"metrics": {"latencyMs": 522}}  # AWS padding `p` is dropped
    assert response.model is None  # a Converse stream never names the model


def test_bedrock_redacted_reasoning_signatures_byte_identical() -> None:
    name = "bedrock/converse-stream-redacted-reasoning.eventstream"
    response = llm_rx.reassemble(capture(name).data, PROVIDER)
    redacted = [p["delta"]["reasoningContent"]["redactedContent"]
                for p in payloads(name, "contentBlockDelta") if "reasoningContent" in p["delta"]]
    assert len(redacted) == 2
    kinds = [(type(b).__name__, getattr(b, "redacted", None)) for b in response.content]
    assert kinds == [("ThinkingBlock", True), ("ThinkingBlock", True), ("TextBlock", None)]
    assert [b.signature for b in response.content[:2]] == redacted  # each on its own block
    assert all(isinstance(b, ThinkingBlock) and b.text == "" for b in response.content[:2])
    assert (response.usage.input_tokens, response.usage.output_tokens) == (92, 253)


def test_bedrock_empty_text_delta_keeps_its_block_and_order() -> None:
    # gpt-oss: an empty text block, then reasoning, then the answer (pydantic-ai's case).
    response = llm_rx.reassemble(
        capture("bedrock/converse-stream-gpt-oss-empty-text-delta.eventstream").data, PROVIDER
    )
    assert [b.type for b in response.content] == ["text", "thinking", "text"]
    assert isinstance(response.content[0], TextBlock)
    assert response.content[0].text == ""
    assert response.content[1].text.startswith('The user just says "Hi".')
    assert response.text == "Hello! How can I help you today?"
    assert response.usage.native is not None
    assert response.usage.native["serverToolUsage"] == {}


def test_bedrock_server_tool_blocks_are_opaque_and_client_call_is_a_tool_call() -> None:
    name = "bedrock/converse-stream-server-tool-result.eventstream"
    response = llm_rx.reassemble(capture(name).data, PROVIDER)
    first, second, third = response.content
    assert isinstance(first, OpaqueBlock)
    assert first.kind == "server_tool_use"
    assert first.raw == {"toolUse": {
        "name": "nova_code_interpreter", "toolUseId": "tooluse_VQNZJRUFMoqZzszVsRd4og",
        "type": "server_tool_use", "input": {"snippet": "1234 * 5678"}}}
    assert isinstance(second, OpaqueBlock)
    assert second.kind == "nova_code_interpreter_result"
    assert second.raw["toolResult"]["content"] == [
        {"json": {"stdOut": "7006652", "stdErr": "", "exitCode": 0, "isError": False}}
    ]
    assert isinstance(third, ToolCallBlock)
    assert (third.id, third.name) == ("tooluse_ptgCcZ0uQu-UUMz0abqoWw", "final_result")
    assert third.raw_arguments == '{"result":7006652.0}'
    assert third.arguments == {"result": 7006652.0}
    assert response.tool_calls == [third]
    assert response.stop_reason == "tool_use"


@pytest.mark.parametrize("name", [
    "bedrock/converse-stream-text.eventstream",
    "bedrock/converse-stream-redacted-reasoning.eventstream",
    "bedrock/converse-stream-gpt-oss-empty-text-delta.eventstream",
    "bedrock/converse-stream-server-tool-result.eventstream",
])
def test_bedrock_capture_sniffed_from_its_first_byte(name: str) -> None:
    data = capture(name).data
    assert sniff(data[:1]) == PROVIDER
    assert outcome([data]) == outcome([data], PROVIDER)


# -- events --------------------------------------------------------------------------------


def test_bedrock_event_sequence() -> None:
    events, error = decode_events([START, delta(0, text="Hi"), stop(0), END, METADATA], PROVIDER)
    assert error is None
    usage = Usage(input_tokens=5, output_tokens=7,
                  native={"inputTokens": 5, "outputTokens": 7, "totalTokens": 12})
    assert events == [
        MessageStart(PROVIDER),
        BlockStart(0, "text"),
        TextDelta(0, "Hi"),
        BlockStop(0),
        ChoiceEnd(0, "end_turn", "end_turn"),
        MetadataUpdate({"metrics": {"latencyMs": 42}}),
        UsageUpdate(usage),
        MessageStop("end_turn", None, "end_turn"),
    ]


def test_bedrock_split_at_every_offset_same_events() -> None:
    body = b"".join([START, delta(0, reasoningContent={"text": "hm\u00e9"}),
                     delta(0, reasoningContent={"signature": "sig"}), stop(0),
                     delta(1, text="\U0001f600 ok"), stop(1), END, METADATA])
    whole = outcome([body], PROVIDER)
    for cut in range(len(body) + 1):
        assert outcome(split_at(body, [cut]), PROVIDER) == whole, cut


# -- reasoning and tools -------------------------------------------------------------------


def test_bedrock_reasoning_text_and_signature_stay_on_their_block() -> None:
    response = reassemble(
        START,
        delta(0, reasoningContent={"text": "Let me "}),
        delta(0, reasoningContent={"text": "think."}),
        delta(0, reasoningContent={"signature": "EqQBCkYIARgCIkA"}),
        stop(0),
        delta(1, text="Answer."),
        stop(1),
        delta(2, reasoningContent={"text": "Again."}),
        delta(2, reasoningContent={"signature": "second"}),
        stop(2),
        END, METADATA,
    )
    assert [(b.type, b.text, b.signature) for b in response.content] == [
        ("thinking", "Let me think.", "EqQBCkYIARgCIkA"),
        ("text", "Answer.", None),
        ("thinking", "Again.", "second"),
    ]


def test_bedrock_redacted_content_in_pieces_is_one_blob() -> None:
    blob = bytes(range(256)) * 3
    pieces = [base64.b64encode(blob[:100]).decode(), base64.b64encode(blob[100:]).decode()]
    response = reassemble(
        START,
        *(delta(0, reasoningContent={"redactedContent": piece}) for piece in pieces),
        stop(0), END,
    )
    (block,) = response.content
    assert isinstance(block, ThinkingBlock)
    assert block.redacted
    assert block.signature is not None
    assert base64.b64decode(block.signature) == blob


def test_bedrock_tool_use_input_fragments_joined_at_block_end() -> None:
    response = reassemble(
        START,
        ev("contentBlockStart", {"contentBlockIndex": 0, "start": {
            "toolUse": {"toolUseId": "t1", "name": "get_weather"}}}),
        delta(0, toolUse={"input": '{"city": "Pa'}),
        delta(0, toolUse={"input": 'ris", "days": 2}'}),
        stop(0),
        ev("contentBlockStart", {"contentBlockIndex": 1, "start": {
            "toolUse": {"toolUseId": "t2", "name": "now"}}}),
        stop(1),
        ev("messageStop", {"stopReason": "tool_use"}),
    )
    first, second = response.tool_calls
    assert (first.id, first.name, first.raw_arguments) == (
        "t1", "get_weather", '{"city": "Paris", "days": 2}')
    assert first.arguments == {"city": "Paris", "days": 2}
    assert (second.arguments, second.raw_arguments) == ({}, "")  # no input: {} as unstreamed
    assert response.stop_reason == "tool_use"
    assert response.complete


def test_bedrock_cut_mid_tool_input_is_truncation_not_a_call() -> None:
    # PITFALLS 21: HTTP 200, then the body stops inside toolUse input; no messageStop.
    response = reassemble(
        START,
        ev("contentBlockStart", {"contentBlockIndex": 0, "start": {
            "toolUse": {"toolUseId": "t1", "name": "run"}}}),
        delta(0, toolUse={"input": '{"cmd": "ls"'}),
        delta(0, toolUse={"input": "}"}),  # the prefix now parses: still not a finished call
    )
    (call,) = response.tool_calls
    assert call.raw_arguments == '{"cmd": "ls"}'
    assert call.arguments is None
    assert response.complete is False
    assert response.stop_reason == "interrupted"
    assert response.error is not None
    assert response.error.kind == "incomplete"


# -- end of stream -------------------------------------------------------------------------


def test_bedrock_metadata_after_message_stop_is_read() -> None:
    response = reassemble(START, delta(0, text="Hi"), stop(0), END, METADATA)
    assert response.complete
    assert response.usage.output_tokens == 7
    assert response.extra["metrics"] == {"latencyMs": 42}


def test_bedrock_eof_after_message_stop_is_complete_without_usage() -> None:
    response = reassemble(START, delta(0, text="Hi"), stop(0), END)
    assert response.complete
    assert response.stop_reason == "end_turn"
    assert response.usage.input_tokens is None
    assert response.usage.output_tokens is None


def test_bedrock_metadata_cut_in_half_after_message_stop_is_still_complete() -> None:
    response = reassemble(START, delta(0, text="Hi"), stop(0), END, METADATA[:20])
    assert response.complete
    assert response.text == "Hi"


def test_bedrock_eof_before_message_stop_is_interrupted() -> None:
    response = reassemble(START, delta(0, text="Hi"), stop(0))
    assert response.text == "Hi"
    assert response.complete is False
    assert response.stop_reason == "interrupted"


def test_bedrock_eof_inside_a_frame_is_interrupted() -> None:
    frame = delta(0, text="lost")
    response = reassemble(START, delta(0, text="Hi"), frame[: len(frame) // 2])
    assert response.text == "Hi"
    assert response.stop_reason == "interrupted"
    assert response.error is not None
    assert "unfinished frame" in response.error.message


def test_bedrock_frames_after_the_end_are_ignored() -> None:
    decoder = BedrockDecoder()
    events = decoder.decode(START + delta(0, text="Hi") + stop(0) + END + METADATA
                            + delta(5, text="late") + END)
    assert isinstance(events[-1], MessageStop)
    assert decoder.ignored_frames == 2
    assert decoder.flush() == []


def test_bedrock_another_frame_after_message_stop_ends_the_reply_first() -> None:
    response = reassemble(START, delta(0, text="Hi"), stop(0), END,
                          exception("throttlingException", "late"))
    assert response.complete
    assert response.error is None


def test_bedrock_stop_reasons() -> None:
    def reason(native: str) -> tuple[str | None, str | None]:
        response = reassemble(START, delta(0, text="x"), stop(0),
                              ev("messageStop", {"stopReason": native}))
        return response.stop_reason, response.stop_details

    assert reason("max_tokens") == ("max_tokens", None)
    assert reason("stop_sequence") == ("stop_sequence", None)
    assert reason("guardrail_intervened") == ("content_filter", "guardrail_intervened")
    assert reason("content_filtered") == ("content_filter", "content_filtered")
    assert reason("model_context_window_exceeded") == ("max_tokens",
                                                       "model_context_window_exceeded")


def test_bedrock_message_stop_extras_and_usage_with_cache_as_totals() -> None:
    response = reassemble(
        START, delta(0, text="x"), stop(0),
        ev("messageStop", {"stopReason": "end_turn",
                           "additionalModelResponseFields": {"stop_sequence": None}}),
        ev("metadata", {"usage": {"inputTokens": 10, "outputTokens": 3, "totalTokens": 113,
                                  "cacheReadInputTokens": 60, "cacheWriteInputTokens": 40}}),
    )
    usage = response.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (110, 60, 40)
    assert usage.input_tokens + (usage.output_tokens or 0) == 113  # the wire's total
    assert response.extra == {"additionalModelResponseFields": {"stop_sequence": None}}


# -- errors --------------------------------------------------------------------------------


def test_bedrock_bad_crc_mid_stream_is_wire_format_error_keeping_what_arrived() -> None:
    bad = bytearray(delta(0, text=" lost"))
    bad[-6] ^= 0x01
    response = reassemble(START, delta(0, text="kept"), bytes(bad), stop(0), END)
    assert response.text == "kept"
    assert response.complete is False
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "wire_format"
    assert "CRC" in response.error.message
    assert response.error.raw is not None
    assert "contentBlockDelta" in response.error.raw  # the frame, not garbage text


def test_bedrock_bad_crc_first_frame_is_no_stream() -> None:
    bad = bytearray(START)
    bad[-1] ^= 0x01
    with pytest.raises(WireFormatError, match="CRC"):
        llm_rx.reassemble(bytes(bad), PROVIDER)


def test_bedrock_json_error_body_is_no_stream() -> None:
    with pytest.raises(WireFormatError):
        llm_rx.reassemble(b'{"message":"The security token included in the request is invalid."}',
                          PROVIDER)


def test_bedrock_short_non_eventstream_body_is_no_stream() -> None:
    # Fewer bytes than a prelude, but their announced length is impossible: not a cut frame.
    with pytest.raises(WireFormatError, match="not an AWS event stream"):
        llm_rx.reassemble(b"<html>", PROVIDER)


def test_bedrock_body_cut_inside_the_first_prelude_is_interrupted() -> None:
    response = llm_rx.reassemble(START[:6], PROVIDER)
    assert response.content == []
    assert response.stop_reason == "interrupted"


def test_bedrock_exception_mid_stream_is_provider_error() -> None:
    response = reassemble(START, delta(0, text="Par"),
                          exception("modelStreamErrorException", "Model stream errored"))
    assert response.text == "Par"
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert response.error.message == "modelStreamErrorException: Model stream errored"
    assert response.error.raw == '{"message":"Model stream errored"}'


def test_bedrock_exception_before_content_gives_a_response() -> None:
    response = reassemble(exception("throttlingException", "Too many requests"))
    assert response.stop_reason == "error"
    assert response.content == []
    assert response.error is not None
    assert response.error.kind == "provider"


def test_bedrock_delta_after_its_block_stopped_is_protocol_error() -> None:
    response = reassemble(START, delta(0, text="a"), stop(0), delta(0, text="b"), END)
    assert response.text == "a"
    assert response.error is not None
    assert response.error.kind == "protocol"


def test_bedrock_delta_of_another_kind_for_an_open_block_is_protocol_error() -> None:
    response = reassemble(START, delta(0, text="a"),
                          delta(0, reasoningContent={"text": "b"}), stop(0), END)
    assert response.text == "a"
    assert response.error is not None
    assert response.error.kind == "protocol"


def test_bedrock_unknown_event_and_delta_pass_through_as_opaque() -> None:
    response = reassemble(START, ev("newEvent", {"x": 1}), delta(0, text="a"),
                          delta(0, image={"source": "..."}), stop(0), END)
    assert response.complete
    assert response.text == "a"
    opaque = [b for b in response.content if isinstance(b, OpaqueBlock)]
    assert [b.kind for b in opaque] == ["newEvent", "delta.image"]
    assert opaque[0].raw == {"x": 1}


def test_bedrock_delta_before_message_start_is_kept() -> None:
    # (with no messageStart at all the reply is a tail: kept, but not complete)
    response = reassemble(delta(0, text="early"), stop(0), END)
    assert response.text == "early"
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "protocol"
