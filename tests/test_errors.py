"""Bad input: a typed error that carries the frame, reached through on_error; nothing lost."""

from __future__ import annotations

import pytest
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import (
    FrameTooLargeError,
    IncompleteStreamError,
    LlmRxError,
    ProviderError,
    WireFormatError,
)
from llm_rx.events import Event, MessageStart, TextDelta

from .captures import capture
from .helpers import CountedReads
from .streams import DONE, chat_chunk, sse

BAD_FRAME = b'{"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "x"'


def _malformed_midstream() -> bytes:
    return (
        sse(chat_chunk({"role": "assistant", "content": "Hello"}), chat_chunk({"content": " you"}))
        + b"data: " + BAD_FRAME + b"\n\n"
        + sse(chat_chunk({"content": " never"}), chat_chunk({}, "stop"))
        + DONE
    )


def test_malformed_json_reaches_on_error_with_the_raw_frame() -> None:
    seen: list[Event] = []
    errors: list[Exception] = []
    llm_rx.from_bytes(_malformed_midstream(), "openai-chat").subscribe(
        seen.append, errors.append
    )
    (error,) = errors
    assert isinstance(error, WireFormatError)
    assert isinstance(error, LlmRxError)
    assert error.raw == BAD_FRAME.decode()
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["Hello", " you"]


def test_malformed_json_to_response_keeps_what_arrived_marked_incomplete() -> None:
    response = llm_rx.from_bytes(_malformed_midstream(), "openai-chat").pipe(
        lxo.to_response()
    ).run()
    assert response.text == "Hello you"
    assert response.complete is False
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "wire_format"
    assert response.error.raw == BAD_FRAME.decode()


def test_malformed_json_in_the_same_chunk_as_good_frames_loses_nothing() -> None:
    # All in one chunk: the frames before the bad one are still emitted before on_error.
    events = llm_rx.from_bytes([_malformed_midstream()], "openai-chat").pipe(
        ops.materialize(), ops.to_list()
    ).run()
    kinds = [n.kind for n in events]
    assert kinds[-1] == "E"
    assert sum(1 for n in events if n.kind == "N" and isinstance(n.value, TextDelta)) == 2


def test_not_a_stream_raises_wire_format_error() -> None:
    body = b'{"status":"pulling manifest"}\n{"status":"success"}\n'
    with pytest.raises(WireFormatError):
        llm_rx.reassemble(body)
    with pytest.raises(WireFormatError):
        llm_rx.reassemble(b"<html>502 Bad Gateway</html>", "openai-chat")


def test_empty_body_with_provider_is_an_interrupted_response() -> None:
    response = llm_rx.reassemble(b"", "anthropic")
    assert response.content == []
    assert response.complete is False
    assert response.stop_reason == "interrupted"


def test_empty_body_without_provider_cannot_be_told() -> None:
    with pytest.raises(WireFormatError, match="empty"):
        llm_rx.reassemble(b"")


def test_first_frame_cut_in_half_is_truncation_not_wire_format() -> None:
    data = capture("openai/chat-text-basic.sse").data[:60]
    response = llm_rx.reassemble(data, "openai-chat")
    assert response.stop_reason == "interrupted"
    assert response.error is not None
    assert response.error.kind == "incomplete"


def test_in_band_error_before_content_gives_a_response() -> None:
    body = sse({"error": {"message": "Rate limit", "code": 429}})
    response = llm_rx.reassemble(body, "openai-chat")
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert response.error.message == "Rate limit"


def test_groq_error_event_is_a_provider_error() -> None:
    errors: list[Exception] = []
    llm_rx.from_bytes(capture("groq/error-event-tool-use-failed.sse").data).subscribe(
        on_error=errors.append
    )
    assert isinstance(errors[0], ProviderError)
    assert errors[0].raw is not None
    assert "tool_use_failed" in errors[0].raw


def test_frame_larger_than_the_limit_is_refused() -> None:
    body = b"data: " + b"x" * 5000
    with pytest.raises(FrameTooLargeError):
        llm_rx.reassemble([body[:3000], body[3000:]], "openai-chat", max_frame=4096)


def test_byte_source_failure_after_content_is_interrupted() -> None:
    def chunks() -> object:
        yield sse(chat_chunk({"content": "partial"}))
        raise ConnectionResetError("peer went away")

    response = llm_rx.from_bytes(chunks(), "openai-chat").pipe(lxo.to_response()).run()  # type: ignore[arg-type]
    assert response.text == "partial"
    assert response.stop_reason == "interrupted"
    assert response.error is not None
    assert "peer went away" in response.error.message


def test_byte_source_failure_before_anything_is_an_error() -> None:
    def chunks() -> object:
        raise ConnectionRefusedError("no server")
        yield b""

    errors: list[Exception] = []
    llm_rx.from_bytes(chunks(), "openai-chat").pipe(lxo.to_response()).subscribe(  # type: ignore[arg-type]
        on_error=errors.append
    )
    assert isinstance(errors[0], IncompleteStreamError)
    assert isinstance(errors[0].__cause__, ConnectionRefusedError)


def test_str_is_refused_by_reassemble() -> None:
    with pytest.raises(TypeError):
        llm_rx.reassemble("data: [DONE]")  # type: ignore[arg-type]


def test_a_delta_for_a_closed_block_is_a_protocol_error_with_content_kept() -> None:
    from .streams import anthropic_events, block_delta, block_start, block_stop, message_start

    data = anthropic_events(
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "kept"}),
        block_stop(0),
        block_delta(0, {"type": "text_delta", "text": "late"}),
    )
    response = llm_rx.reassemble(data, "anthropic")
    assert response.text == "kept"
    assert response.error is not None
    assert response.error.kind == "protocol"
    assert response.stop_reason == "error"


def test_message_start_is_first_even_when_the_stream_fails_at_once() -> None:
    events: list[Event] = []
    llm_rx.from_bytes(sse({"error": {"message": "nope"}}), "openai-chat").subscribe(
        events.append, lambda e: None
    )
    assert isinstance(events[0], MessageStart)


def test_frame_too_large_keeps_the_frames_completed_in_the_same_chunk() -> None:
    body = sse(chat_chunk({"content": "kept"})) + b"data: " + b"x" * 5000
    response = llm_rx.reassemble([body], "openai-chat", max_frame=4096)
    assert response.text == "kept"
    assert response.error is not None
    assert response.error.kind == "wire_format"
    assert response.error.raw is not None
    assert response.error.raw.startswith("data: xxx")


class _TransportError(Exception):
    """Stands for a client library's own error (httpx's are not OSError)."""


def test_reassemble_source_failure_of_any_kind_is_interrupted_not_raised() -> None:
    def chunks() -> object:
        yield sse(chat_chunk({"content": "partial"}))
        raise _TransportError("connection reset by peer")

    response = llm_rx.reassemble(chunks())  # type: ignore[arg-type]
    stream = llm_rx.from_bytes(chunks()).pipe(lxo.to_response()).run()  # type: ignore[arg-type]
    assert response.model_dump() == stream.model_dump()  # the same engine, the same answer
    assert response.stop_reason == "interrupted"
    assert response.text == "partial"


def test_a_consumer_bug_goes_to_on_error_as_itself_and_stops_the_reading() -> None:
    # bug class: an exception in a subscriber's on_next lost by the source (the reading
    # goes on, or the pipeline hangs), or reported as a cut stream
    errors: list[Exception] = []
    seen: list[object] = []
    reads = CountedReads(capture("openai/chat-gpt41-nano-text.sse").data, 64)

    def broken(event: object) -> None:
        seen.append(event)
        raise ZeroDivisionError("the consumer's own bug")

    llm_rx.from_bytes(reads).subscribe(broken, errors.append)
    (error,) = errors
    assert isinstance(error, ZeroDivisionError)
    assert len(seen) == 1  # nothing after the failure
    assert reads.pulled < len(reads.reads) // 2  # the reading stopped


def test_a_consumer_bug_without_on_error_raises_from_subscribe() -> None:
    # (RxPY's default on_error raises: the bug is not swallowed)
    def broken(_: object) -> None:
        raise ZeroDivisionError("the consumer's own bug")

    with pytest.raises(ZeroDivisionError):
        llm_rx.from_bytes(capture("openai/chat-text-basic.sse").data).subscribe(broken)


def test_reassemble_missing_path_raises_file_not_found(tmp_path: object) -> None:
    from pathlib import Path

    with pytest.raises(FileNotFoundError):
        llm_rx.reassemble(Path(str(tmp_path)) / "missing.sse")


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai-chat", sse(chat_chunk({"content": "a"}), chat_chunk({"content": "b"}),
                            {"id": "x", "model": "m", "choices": [None]})),
        ("anthropic", b'event: message_start\ndata: {"type":"message_start","message":'
                      b'{"id":"m"}}\n\nevent: message_delta\ndata: {"type":"message_delta",'
                      b'"delta":[1]}\n\n'),
    ],
    ids=["openai-choice-null", "anthropic-delta-list"],
)
def test_valid_json_of_an_unexpected_shape_is_a_wire_format_error(
    provider: str, body: bytes
) -> None:
    errors: list[Exception] = []
    llm_rx.from_bytes(body, provider).subscribe(on_error=errors.append)
    (error,) = errors
    assert isinstance(error, WireFormatError)
    assert "unexpected shape" in error.message
    assert error.raw is not None
    response = llm_rx.reassemble(body, provider)
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "wire_format"
