"""The Cohere encoder's own frames: a Cohere capture comes back byte for byte, the tool plan
as ``tool-plan-delta``, Cohere's citations where they arrived, another provider's usage with
only its reported counts (no ``billed_units`` made up), an in-band error as Cohere's own
``message-end``. The contract every target keeps is in ``test_rules.py`` and
``test_round_trip.py``."""

from __future__ import annotations

import pytest

import llm_rx
from llm_rx import Dropped
from tests.captures import CAPTURES, Capture, capture
from tests.wire.test_cohere import end, frame, start, text

from .oracles import cohere, sse_payloads

OWN = [cap for cap in CAPTURES if cap.provider == "cohere"]


def _content_start(index: int, kind: str = "text") -> bytes:
    return frame("content-start", index=index,
                 delta={"message": {"content": {"type": kind, kind: ""}}})


# Captures of Cohere's bytes as sent (the others were re-framed from parsed chunks, which lost
# it): Cohere ends its v2 stream with ``data: [DONE]`` (no event name) after message-end.
_AS_SENT = {"cohere/v2-text-stream.sse", "cohere/v2-tool-call-stream.sse"}
# The encoder ends at message-end (the SDK reads both alike): those captures come back but
# for that last line, and only it.
_DONE = b"data: [DONE]\n\n"


@pytest.mark.parametrize("cap", OWN, ids=lambda cap: cap.name)
def test_cohere_capture_comes_back_byte_for_byte(cap: Capture) -> None:
    again = llm_rx.translate(cap.data, "cohere", "cohere")
    assert again + _DONE == cap.data if cap.name in _AS_SENT else again == cap.data


def test_cohere_tool_plan_is_tool_plan_deltas_before_the_calls() -> None:
    out = llm_rx.translate(capture("cohere/v2-tool-call.sse").data, "cohere", "cohere")
    names = [name for name, _ in sse_payloads(out)]
    assert names[1] == "tool-plan-delta"
    assert names.index("tool-call-start") > max(
        i for i, name in enumerate(names) if name == "tool-plan-delta")
    read = cohere(out)
    assert read.thinking.startswith("I will use the weather tool")


def test_cohere_citations_and_unknown_frames_round_trip() -> None:
    citation = {"start": 0, "end": 2, "text": "Hi", "type": "TEXT_CONTENT",
                "sources": [{"type": "document", "id": "doc:0", "document": {"id": "doc:0"}}]}
    body = b"".join([
        start(), _content_start(0), text(0, "Hi"),
        frame("citation-start", index=0, delta={"message": {"citations": citation}}),
        frame("citation-end", index=0), frame("debug", prompt="the prompt"),
        frame("content-end", index=0), end(),
    ])
    out = llm_rx.translate(body, "cohere", "cohere")
    again = llm_rx.reassemble(out, "cohere")
    assert again.model_dump(mode="json") == llm_rx.reassemble(body, "cohere").model_dump(
        mode="json")
    assert [name for name, _ in sse_payloads(out)].count("citation-start") == 1
    assert b'"type":"debug"' in out


def test_cohere_another_providers_citation_and_signature_are_dropped() -> None:
    lost: list[Dropped] = []
    llm_rx.translate(capture("anthropic/web-search-citations.sse").data, "cohere",
                     on_dropped=lost.append)
    assert {"citation", "opaque:server_tool_use"} <= {item.what for item in lost}
    lost.clear()
    llm_rx.translate(capture("anthropic/thinking-signature.sse").data, "cohere",
                     on_dropped=lost.append)
    assert [item.what for item in lost] == ["signature"]


def test_cohere_usage_of_another_provider_has_only_its_reported_counts() -> None:
    out = llm_rx.translate(capture("openai/chat-parallel-tool-calls.sse").data, "cohere")
    assert sse_payloads(out)[-1][0] == "message-end"
    assert b"billed_units" not in out
    assert b"cached_tokens" not in out  # (OpenAI reported none)
    assert cohere(out).usage == {"tokens": {"input_tokens": 149.0, "output_tokens": 60.0}}


def test_cohere_native_body_of_another_provider_has_only_its_reported_counts() -> None:
    reply = llm_rx.reassemble(capture("openai/chat-parallel-tool-calls.sse").data)
    body = llm_rx.to_native(reply, "cohere")
    assert body["usage"] == {"tokens": {"input_tokens": 149, "output_tokens": 60}}
    again = llm_rx.from_native(body, "cohere")
    assert (again.usage.input_tokens, again.usage.output_tokens) == (149, 60)
    silent = reply.model_copy(update={"usage": llm_rx.Usage()})
    assert "usage" not in llm_rx.to_native(silent, "cohere")


def test_cohere_in_band_error_of_cohere_is_given_back_as_it_came() -> None:
    failing = end("ERROR", error="the model overloaded")
    body = start() + _content_start(0) + text(0, "Hi") + failing
    out = llm_rx.translate(body, "cohere", "cohere")
    assert out.endswith(failing)
    again = llm_rx.reassemble(out, "cohere")
    assert (again.text, again.stop_reason) == ("Hi", "error")
    assert again.error is not None
    assert "overloaded" in again.error.message
