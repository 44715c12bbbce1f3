"""The ``openai-responses`` encoder's ``response.failed`` frame: the error and the usage, not
the text so far again (issue 31 follow-up).

Every item of a reply that fails has gone out whole before the failed frame (its deltas,
its ``.done`` events and ``output_item.done``), so the frame need not repeat them: the SDK's
``Response`` model and the Open Responses specification's ``ResponseResource`` take an
empty ``output``, as the API reference's own ``response.failed`` example has it, and the
openai SDK's stream helper builds its snapshot from the items, not from this frame. The
reply is a recorded one (the longest text of the captures), failed after its last block.
"""

from __future__ import annotations

from typing import Any

import openai
import orjson
import pytest
from openai.types.responses import ResponseFailedEvent

import llm_rx
from llm_rx.encoders import make_encoder
from llm_rx.errors import ProviderError
from llm_rx.events import ChoiceEnd, Event, MessageStop, TextDelta
from tests.captures import capture
from tests.loopback import serving
from tests.open_responses import body_errors, event_errors, events_of, sequence_errors

SOURCE = capture("huggingface/together-deepseek-r1-think-tags.sse")
FAILURE = ProviderError("The server had an error while processing your request",
                        error_type="server_error", code="server_error")


def _failed(repeat: int = 1) -> tuple[bytes, llm_rx.Response]:
    """The recorded reply's events (its text ``repeat`` times over) ended by a provider
    error instead of its stop, written as a Responses stream; and that reply."""
    events: list[Event] = []
    llm_rx.from_bytes(SOURCE.data, SOURCE.provider).subscribe(events.append)
    body = [e for e in events if not isinstance(e, (MessageStop, ChoiceEnd))]
    if repeat > 1:  # (the text of the reply's first delta, 1 KiB of it, repeat times more)
        first = next(n for n, e in enumerate(body) if isinstance(e, TextDelta))
        more = TextDelta(body[first].index, "x" * 1024)  # type: ignore[union-attr]
        body = [*body[:first + 1], *[more] * repeat, *body[first + 1:]]
    encoder = make_encoder("openai-responses")
    stream = encoder.encode(body) + encoder.finish(FAILURE)
    return stream, llm_rx.reassemble(stream, "openai-responses")


def _failed_frame(stream: bytes) -> tuple[bytes, dict[str, Any]]:
    [raw] = [block for block in stream.split(b"\n\n") if b"event: response.failed" in block]
    return raw, orjson.loads(raw.split(b"data: ", 1)[1])


def test_responses_failed_frame_is_the_error_not_the_text_again() -> None:
    stream, reply = _failed()
    assert len(reply.text) > 1000
    raw, frame = _failed_frame(stream)
    assert reply.text[:200].encode() not in raw.replace(b"\\n", b"\n")
    assert len(raw) < 1500  # (the error, the usage and the response's fields)
    response = frame["response"]
    assert response["status"] == "failed"
    assert response["error"] == {"code": "server_error", "message": FAILURE.message}
    assert response["output"] == []
    ResponseFailedEvent.model_validate(frame)  # (the SDK's own model of the event)
    events = list(events_of(stream))
    assert [e for event in events for e in event_errors(event)] == []
    assert sequence_errors(events) == []
    assert body_errors(response) == []


@pytest.mark.parametrize("repeat", [10, 1000])
def test_responses_failed_frame_size_does_not_grow_with_the_reply(repeat: int) -> None:
    small, _ = _failed_frame(_failed()[0])
    stream, reply = _failed(repeat)
    assert len(reply.text) > repeat * 1024
    raw, _ = _failed_frame(stream)
    assert abs(len(raw) - len(small)) < 8  # (the sequence number's digits)


def test_responses_failed_reply_reads_the_same_through_llm_rx_and_the_sdk() -> None:
    stream, reply = _failed()
    original = llm_rx.reassemble(SOURCE.data, SOURCE.provider)
    assert reply.text == original.text
    assert not reply.complete
    assert reply.error is not None
    assert reply.error.kind == "provider"
    assert FAILURE.message in reply.error.message  # (as "server_error: <its words>")
    with serving(stream) as url, openai.OpenAI(base_url=url + "/v1", api_key="k",
                                               max_retries=0) as client, \
            client.responses.stream(model="m", input="hi") as events:
        seen = list(events)
    text = "".join(e.delta for e in seen if e.type == "response.output_text.delta")
    assert text == original.text  # (the text went out in its deltas: nothing lost)
    failed = seen[-1]
    assert failed.type == "response.failed"
    assert failed.response.error is not None
    assert failed.response.error.message == FAILURE.message
