"""The official ``cohere`` client (``ClientV2(base_url=...)``: ``chat_stream`` and ``chat``)
against the emulator's ``/v2/chat``, over a real socket: every Cohere capture streamed and
not, another provider's reply translated to Cohere's stream, an in-band error and an HTTP
error in Cohere's shape. The client only logs a frame it cannot build and goes on, so every
test also checks that it logged nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from typing import Any

import cohere
import pytest

import llm_rx
from llm_rx.serve import EmulatorThread
from tests.captures import CAPTURES, Capture, capture

from .replies import Reply, assert_same, model_of, params, reply_of

pytestmark = pytest.mark.oracle

COHERE = [cap for cap in CAPTURES if cap.provider == "cohere"]
MESSAGES: Any = [{"role": "user", "content": "hi"}]
FINISH = {"COMPLETE": "end_turn", "MAX_TOKENS": "max_tokens", "TOOL_CALL": "tool_use",
          "STOP_SEQUENCE": "stop_sequence"}


@pytest.fixture(scope="module")
def client(llm_rx_server: EmulatorThread) -> Iterator[cohere.ClientV2]:
    with cohere.ClientV2(api_key="test", base_url=llm_rx_server.url, max_retries=0) as made:
        yield made


@pytest.fixture(autouse=True)
def nothing_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    with caplog.at_level(logging.WARNING):
        yield
    assert not caplog.records, [record.getMessage() for record in caplog.records]


def _stop(finish: str | None, calls: list[Any]) -> str | None:
    stop = FINISH.get(finish or "", finish)
    return "tool_use" if stop == "end_turn" and calls else stop


def _tokens(usage: Any) -> tuple[int | None, int | None]:
    tokens = usage.tokens if usage is not None else None
    if tokens is None:
        return None, None
    return (None if tokens.input_tokens is None else int(tokens.input_tokens),
            None if tokens.output_tokens is None else int(tokens.output_tokens))


def _arguments(text: str) -> Any:
    """Arguments as an application reads Cohere's string: JSON, or the free text itself."""
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text


def cohere_reply(events: Iterable[Any]) -> Reply:
    """What an application folds from ``chat_stream``'s typed events."""
    text: list[str] = []
    kinds: dict[int, str] = {}
    calls: dict[int, list[Any]] = {}
    finish, usage = None, None
    for event in events:
        message = getattr(getattr(event, "delta", None), "message", None)
        if event.type == "content-start":
            kinds[event.index] = message.content.type
        if event.type in ("content-start", "content-delta") and kinds[event.index] == "text":
            text.append(message.content.text or "")
        elif event.type == "tool-call-start":
            call = message.tool_calls
            calls[event.index] = [call.id, call.function.name, call.function.arguments or ""]
        elif event.type == "tool-call-delta":
            calls[event.index][2] += message.tool_calls.function.arguments or ""
        elif event.type == "message-end":
            finish, usage = event.delta.finish_reason, event.delta.usage
    tool_calls = [(i, n, _arguments(a)) for i, n, a in calls.values()]
    return Reply("".join(text), tool_calls, _stop(finish, tool_calls), _tokens(usage))


@pytest.mark.parametrize("cap", params(COHERE))
def test_cohere_client_stream_gets_the_reassembled_reply(
    client: cohere.ClientV2, cap: Capture
) -> None:
    assert_same(cohere_reply(client.chat_stream(model=model_of(cap), messages=MESSAGES)),
                cap, {})


@pytest.mark.parametrize("cap", params(COHERE))
def test_cohere_client_non_stream_gets_the_reassembled_reply(
    client: cohere.ClientV2, cap: Capture
) -> None:
    reply = client.chat(model=model_of(cap), messages=MESSAGES)
    assert isinstance(reply, cohere.V2ChatResponse)
    message = reply.message
    text = "".join(item.text for item in message.content or () if item.type == "text")
    calls = [(call.id, call.function.name, json.loads(call.function.arguments or "{}"))
             for call in message.tool_calls or ()]
    assert_same(Reply(text, calls, _stop(reply.finish_reason, calls), _tokens(reply.usage)),
                cap, {})
    original = llm_rx.reassemble(cap.data, cap.provider)
    thinking = "".join(item.thinking for item in message.content or ()
                       if item.type == "thinking")
    assert (message.tool_plan or "") + thinking == "".join(
        block.text for block in original.content if block.type == "thinking")


def test_cohere_client_reads_a_reply_with_thinking_translated_from_anthropic(
    client: cohere.ClientV2,
) -> None:
    cap = capture("anthropic/thinking-signature.sse")
    events = list(client.chat_stream(model=model_of(cap), messages=MESSAGES))
    thinking = "".join(event.delta.message.content.thinking or "" for event in events
                       if event.type == "content-delta"
                       and event.delta.message.content.thinking is not None)
    original = llm_rx.reassemble(cap.data, cap.provider)
    assert thinking == original.content[0].text  # type: ignore[union-attr]
    assert cohere_reply(events) == reply_of(original)


def test_cohere_client_sees_an_in_band_error_as_the_message_end(
    llm_rx_server: EmulatorThread,
) -> None:
    headers = llm_rx_server.headers(fault="error-after=3")
    with cohere.ClientV2(api_key="test", base_url=llm_rx_server.url, max_retries=0) as made:
        events = list(made.chat_stream(model="cohere__v2-tool-call", messages=MESSAGES,
                                       request_options={"additional_headers": headers}))
    end = events[-1]
    assert end.type == "message-end"
    assert end.delta.finish_reason == "ERROR"
    assert "error-after=3" in (end.delta.error or "")


def test_cohere_client_raises_too_many_requests(llm_rx_server: EmulatorThread) -> None:
    headers = llm_rx_server.headers(fault="status=429")
    with (
        cohere.ClientV2(api_key="test", base_url=llm_rx_server.url, max_retries=0) as made,
        pytest.raises(cohere.TooManyRequestsError) as caught,
    ):
        list(made.chat_stream(model="cohere__v2-tool-call", messages=MESSAGES,
                              request_options={"additional_headers": headers}))
    assert caught.value.status_code == 429
    assert "status=429" in caught.value.body["message"]
