"""The official ``anthropic`` client against the emulator: ``messages.stream()`` and its
``get_final_message()``, for every Anthropic capture, over a real socket. Each gets the reply
``llm_rx.reassemble(file)`` gives, but for the SDK bugs named per capture.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import anthropic
import pytest
from anthropic.types import Message

from llm_rx.serve import EmulatorThread
from tests.captures import CAPTURES, Capture

from .replies import Reply, assert_same, model_of, params

pytestmark = pytest.mark.oracle

ANTHROPIC = [cap for cap in CAPTURES if cap.provider == "anthropic"]


@pytest.fixture(scope="module")
def client(llm_rx_server: EmulatorThread) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=llm_rx_server.url, api_key="test",
                             max_retries=0) as client:
        yield client


def message_reply(message: Message) -> Reply:
    text = "".join(block.text for block in message.content if block.type == "text")
    calls = [(block.id, block.name, block.input) for block in message.content
             if block.type == "tool_use"]
    usage = message.usage
    prompt = [usage.input_tokens, usage.cache_creation_input_tokens,
              usage.cache_read_input_tokens]
    return Reply(text, calls, message.stop_reason, (sum(n or 0 for n in prompt),
                                                     usage.output_tokens))


# The helper raises on these, losing what arrived (PITFALLS 29): an in-band `event: error`,
# and a stream tail with no message_start.
RAISES = {
    "anthropic/error-api-error-midstream.partial.sse": "no message_start",
    "anthropic/error-overloaded-midstream.synthetic.sse": "event: error (overloaded_error)",
}
KNOWN: dict[str, dict[str, str]] = {
    # The recording holds one message per tool round trip: the helper starts over at each
    # message_start and reports the last; llm-rx's reply ends at the first message_stop
    # (nothing after the end), so their stop reason and usage are the first message's.
    "anthropic/programmatic-tool-calling.sse": {"stop_reason": "the last message's",
                                                "usage": "the last message's"},
    # The SDK reads usage's top-level counts, which leave out the compaction iterations;
    # llm-rx counts those as billed too.
    "anthropic/compaction.sse": {"usage": "compaction iterations not counted"},
}


def final_message(client: anthropic.Anthropic, cap: Capture) -> Message:
    with client.messages.stream(model=model_of(cap), max_tokens=1024,
                                messages=[{"role": "user", "content": "hi"}]) as stream:
        return stream.get_final_message()


@pytest.mark.parametrize("cap", params(ANTHROPIC))
def test_anthropic_messages_stream_gets_the_reassembled_reply(
    client: anthropic.Anthropic, cap: Capture
) -> None:
    if cap.name in RAISES:
        with pytest.raises((anthropic.APIError, RuntimeError)):
            final_message(client, cap)
        return
    assert_same(message_reply(final_message(client, cap)), cap, KNOWN)


def test_anthropic_non_stream_body_validates_as_message(
    client: anthropic.Anthropic, llm_rx_server: EmulatorThread
) -> None:
    message = client.messages.create(model="anthropic__tool-use-input-json-delta",
                                     max_tokens=1024, messages=[{"role": "user", "content": "hi"}])
    assert isinstance(message, Message)
    cap = next(cap for cap in ANTHROPIC if cap.name == "anthropic/tool-use-input-json-delta.sse")
    assert_same(message_reply(message), cap, {})
    assert json.dumps(message.content[-1].to_dict())
