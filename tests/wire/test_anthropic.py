"""The anthropic decoder, beyond the pitfalls."""

from __future__ import annotations

import pytest
from anthropic.types import Message

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import MessageStop
from llm_rx.response import OpaqueBlock, TextBlock, ToolCallBlock
from llm_rx.speed import fast_paths

from ..captures import capture
from ..helpers import decode_events, outcome
from ..streams import (
    MESSAGE_STOP,
    anthropic_events,
    block_delta,
    block_start,
    block_stop,
    message_delta,
    message_start,
    sse,
)


def test_anthropic_refusal_stop_details_kept() -> None:
    response = llm_rx.reassemble(capture("anthropic/refusal-stop-details.sse").data)
    assert response.stop_reason == "refusal"
    assert response.stop_details is not None
    assert "cyber" in response.stop_details
    native = llm_rx.to_native(response, "anthropic")
    assert native["stop_details"]["category"] == "cyber"


def test_anthropic_server_tool_use_is_opaque_with_its_input() -> None:
    response = llm_rx.reassemble(capture("anthropic/web-search-citations.sse").data)
    server = [b for b in response.content if isinstance(b, OpaqueBlock)]
    assert [b.kind for b in server][:2] == ["server_tool_use", "web_search_tool_result"]
    assert isinstance(server[0].raw["input"], dict)
    assert server[0].raw["input"]["query"]
    assert not response.tool_calls  # the client must not run a server tool


def test_anthropic_citations_on_text_blocks() -> None:
    response = llm_rx.reassemble(capture("anthropic/web-search-citations.sse").data)
    cited = [b for b in response.content if isinstance(b, TextBlock) and b.citations]
    assert cited
    assert cited[0].citations[0]["type"] == "web_search_result_location"


def test_anthropic_tool_input_given_whole_at_start() -> None:
    data = anthropic_events(
        message_start(),
        block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "roll",
                        "input": {"sides": 6, "player": "p1"}}),
        block_stop(0),
        message_delta("tool_use"),
        MESSAGE_STOP,
    )
    (call,) = llm_rx.reassemble(data, "anthropic").tool_calls
    assert call.raw_arguments == '{"sides":6,"player":"p1"}'
    assert call.arguments == {"sides": 6, "player": "p1"}


def test_anthropic_frames_after_message_stop_are_the_next_replies() -> None:
    # (a recorded body of 15 messages, one after another: each its own reply, never merged)
    data = capture("anthropic/programmatic-tool-calling.sse").data
    events, error = decode_events([data])
    assert error is None
    assert isinstance(events[-1], MessageStop)
    assert [type(e) for e in events].count(MessageStop) == 15
    replies = llm_rx.from_bytes(data).pipe(lxo.to_responses()).run()
    assert len({reply.id for reply in replies}) == 15
    assert all(reply.complete for reply in replies)
    merged = llm_rx.reassemble(data)
    assert not merged.complete
    assert merged.error is not None
    assert "another response" in merged.error.message
    response = replies[0]
    assert response.content == merged.content
    assert response.stop_reason == "tool_use"
    assert [b.type for b in response.content] == ["text", "opaque", "tool_call"]
    (call,) = [b for b in response.content if isinstance(b, ToolCallBlock)]
    assert call.meta is not None
    assert "caller" in call.meta
    assert llm_rx.to_native(response, "anthropic")["content"][2]["caller"]["type"]


def test_anthropic_unknown_event_type_passes_through() -> None:
    data = anthropic_events(
        message_start(),
        {"type": "future_event", "payload": {"x": 1}},
        block_start(0, {"type": "text", "text": "hi"}),
        block_stop(0),
        message_delta(),
        MESSAGE_STOP,
    )
    response = llm_rx.reassemble(data, "anthropic")
    assert response.complete
    assert [b.type for b in response.content] == ["opaque", "text"]
    opaque = response.content[0]
    assert isinstance(opaque, OpaqueBlock)
    assert opaque.raw == {"type": "future_event", "payload": {"x": 1}}


def test_anthropic_reencode_openai_reply() -> None:
    response = llm_rx.reassemble(capture("openai/chat-parallel-tool-calls.sse").data)
    message = Message.model_validate(llm_rx.to_native(response, "anthropic"))
    assert [b.type for b in message.content] == ["tool_use", "tool_use"]
    assert message.stop_reason == "tool_use"
    assert message.usage.input_tokens == response.usage.input_tokens


def test_to_native_body_shares_nothing_with_the_response() -> None:
    response = llm_rx.reassemble(capture("anthropic/thinking-signature.sse").data)
    body = llm_rx.to_native(response, "anthropic")
    body["usage"]["cache_creation"]["ephemeral_5m_input_tokens"] = -1  # a nested dict
    body["content"][0]["signature"] = "edited"
    assert response.usage.native is not None
    assert response.usage.native["cache_creation"]["ephemeral_5m_input_tokens"] == 0
    assert llm_rx.to_native(response, "anthropic")["content"][0]["signature"] != "edited"


def test_anthropic_late_message_start_fills_in_model_and_id() -> None:
    from ..streams import block_delta

    data = anthropic_events(
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "early"}),  # before message_start
        message_start("msg_late", "claude-late"),
        block_stop(0),
        message_delta(),
        MESSAGE_STOP,
    )
    response = llm_rx.reassemble(data, "anthropic")
    assert response.complete
    assert (response.model, response.id) == ("claude-late", "msg_late")
    assert response.text == "early"


def test_anthropic_server_tool_block_open_at_message_stop_is_closed() -> None:
    from llm_rx.events import BlockStart, BlockStop

    data = anthropic_events(
        message_start(),
        block_start(0, {"type": "server_tool_use", "id": "srv_1", "name": "web_search",
                        "input": {}}),
        message_delta(),
        MESSAGE_STOP,
    )
    events, _ = decode_events([data], "anthropic")
    starts = [e.index for e in events if isinstance(e, BlockStart)]
    stops = [e.index for e in events if isinstance(e, BlockStop)]
    assert starts == stops == [0]
    assert events.index(next(e for e in events if isinstance(e, BlockStop))) < len(events) - 1


@pytest.mark.parametrize("frame", [{"index": 0}, {"type": "", "index": 0}, {"type": None}])
def test_anthropic_frame_without_a_type_is_named_the_same_however_read(
    frame: dict[str, object],
) -> None:
    # bug class: the opaque item named after the SSE event name, which the framer drops when
    # a read holds several named events: the name then depends on where the reads end
    body = anthropic_events(message_start(), block_start(0, {"type": "text", "text": ""}))
    body += sse(frame, event="content_block_start")
    body += anthropic_events(block_stop(0), message_delta(), MESSAGE_STOP)
    events = body.split(b"\n\n")
    whole = outcome([body], "anthropic")
    one_by_one = outcome([event + b"\n\n" for event in events if event], "anthropic")
    assert whole == one_by_one
    (opaque,) = [event for event in whole[0] if event[0] == "Opaque"]
    assert opaque == ("Opaque", "unknown", frame)


@pytest.mark.parametrize("kind", [{}, [], None, 5])
def test_anthropic_delta_type_of_another_type_decodes_as_on_the_general_path(
    kind: object,
) -> None:
    # bug class: the hot path looked a delta's "type" up in a dict, so an object there
    # raised (unhashable) where the general path passes the frame through as opaque
    deltas = [block_delta(0, {"type": "text_delta", "text": f" w{i}"}) for i in range(20)]
    deltas[10] = block_delta(0, {"type": kind, "text": "x"})
    body = anthropic_events(message_start(), block_start(0, {"type": "text", "text": ""}),
                            *deltas, block_stop(0), message_delta(), MESSAGE_STOP)
    fast = outcome([body], "anthropic")
    with fast_paths(False):
        assert outcome([body], "anthropic") == fast
    assert fast[1] is None
    assert ("Opaque", str(kind), deltas[10]) in fast[0]


# -- a fallback block: the model that served the rest --------------------------------------------


def test_the_model_after_a_fallback_block_is_the_served_model() -> None:
    data = capture("anthropic/fallback-block.sse").data
    response = llm_rx.reassemble(data, "anthropic")
    assert response.model == "claude-opus-4-8"  # (the non-stream body's model)
    fallback = response.content[0]
    assert isinstance(fallback, OpaqueBlock)
    assert fallback.raw["from"] == {"model": "claude-fable-5"}  # (the requested one, kept)
    body = llm_rx.to_native(response, "anthropic")
    assert body["model"] == "claude-opus-4-8"
    assert llm_rx.from_native(body, "anthropic") == response
    for cut in range(1, len(data), 211):
        assert llm_rx.reassemble([data[:cut], data[cut:]], "anthropic") == response
