"""The ``malformed`` fault: one frame of the stream replaced by one whose JSON does not parse,
its framing whole, on every endpoint form; llm-rx reads the reply as a wire-format error, never
as finished."""

from __future__ import annotations

import httpx
import pytest

import llm_rx
from llm_rx.serve import EmulatorThread
from llm_rx.serve._faults import MIDDLE, parse_fault
from llm_rx.serve._frames import split_frames
from llm_rx.serve._malformed import BROKEN_JSON
from llm_rx.testing import reply
from tests.captures import capture

from .replies import model_of
from .test_faults import ENDPOINTS

FORMS = {"gemini/json-array-multi-chunk.json": "json-array",
         "ollama/chat-gemma3-text.ndjson": "chat",
         "bedrock/converse-stream-text.eventstream": "eventstream"}


def test_malformed_parses_alone_and_with_a_byte() -> None:
    assert parse_fault("malformed").malformed == MIDDLE
    assert parse_fault("malformed=40, status=429").malformed == 40
    assert parse_fault("status=429,retry-after=2.5").retry_after == 2.5
    with pytest.raises(ValueError, match="retry-after"):
        parse_fault("retry-after=-1")


@pytest.mark.parametrize("name", sorted(ENDPOINTS))
def test_one_frame_is_replaced_and_the_reply_is_a_wire_format_error(
    llm_rx_server: EmulatorThread, name: str
) -> None:
    cap = capture(name)
    url = llm_rx_server.url + ENDPOINTS[name].format(model=model_of(cap))
    body = {"model": model_of(cap), "stream": True}
    with httpx.Client(timeout=10) as client:
        whole = client.post(url, json=body).content
        broken = client.post(url, json=body, headers={"x-llm-rx-fault": "malformed"}).content
    form = FORMS.get(name, "sse")
    before, after = split_frames(whole, form), split_frames(broken, form)
    assert len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [len(before) // 2]
    assert BROKEN_JSON in after[changed[0]]
    response = llm_rx.reassemble(broken, cap.provider)
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "wire_format"


def test_a_standing_fault_applies_to_scripted_replies(llm_rx_server: EmulatorThread) -> None:
    llm_rx_server.queue(reply("one two three", usage={"input_tokens": 1, "output_tokens": 3}))
    llm_rx_server.fault("malformed")
    with httpx.Client(timeout=10) as client:
        body = client.post(f"{llm_rx_server.url}/v1/messages",
                           json={"model": "x", "stream": True, "max_tokens": 9}).content
        plain = client.post(f"{llm_rx_server.url}/v1/messages",
                            json={"model": "x", "max_tokens": 9,
                                  "messages": []}, headers={"x-llm-rx-capture": "none"})
    response = llm_rx.reassemble(body, "anthropic")
    assert response.error is not None
    assert response.error.kind == "wire_format"
    assert plain.status_code == 404  # (a fault breaks bodies, not refusals)


def test_a_non_stream_body_is_replaced_whole(llm_rx_server: EmulatorThread) -> None:
    llm_rx_server.queue(reply("hi"))
    with httpx.Client(timeout=10) as client:
        answer = client.post(f"{llm_rx_server.url}/v1/chat/completions",
                             json={"model": "x", "messages": []},
                             headers={"x-llm-rx-fault": "malformed"})
    assert answer.status_code == 200
    assert answer.content == BROKEN_JSON
