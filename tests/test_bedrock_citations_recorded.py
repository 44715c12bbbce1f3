"""Recorded Bedrock replies with citations (documents sent with ``citations: {enabled:
true}``): two ConverseStream bodies, where each cited block opens with its ``citation`` delta
and then its text deltas (no ``contentBlockStart``), and the Converse bodies of the same kind,
whose cited text is a ``citationsContent`` block."""

from __future__ import annotations

import json
from typing import Any

import pytest

import llm_rx
from llm_rx.response import TextBlock
from tests.captures import CAPTURES, HERE, Capture
from tests.test_native_bedrock_citations import _botocore_parse
from tests.test_native_ollama_bedrock import eventstream_payloads

CITED = [cap for cap in CAPTURES if "citation_delta" in cap.features]


def _blocks(cap: Capture) -> dict[int, tuple[str, list[dict[str, Any]]]]:
    """Block index -> (its text, its citations), read from the wire's deltas."""
    blocks: dict[int, tuple[str, list[dict[str, Any]]]] = {}
    for payload in eventstream_payloads(cap.data):
        delta = payload.get("delta")
        if not isinstance(delta, dict):
            continue
        text, citations = blocks.get(payload["contentBlockIndex"], ("", []))
        blocks[payload["contentBlockIndex"]] = (
            text + delta.get("text", ""), citations + ([delta["citation"]] if "citation" in delta
                                                       else []))
    return blocks


def test_the_cited_streams_are_there() -> None:
    assert len(CITED) == 2


@pytest.mark.parametrize("cap", CITED, ids=lambda c: c.name)
def test_a_recorded_cited_stream_reads_as_text_blocks_with_their_citations(cap: Capture) -> None:
    reply = llm_rx.reassemble(cap.data)
    wire = _blocks(cap)
    assert (reply.complete, reply.stop_reason) == (True, "end_turn")
    assert all(isinstance(block, TextBlock) for block in reply.content)
    assert [(block.text, block.citations) for block in reply.content] == [  # type: ignore[union-attr]
        wire[index] for index in sorted(wire)]
    assert any(citations for _, citations in wire.values())


@pytest.mark.parametrize("cap", CITED, ids=lambda c: c.name)
def test_to_native_of_a_recorded_cited_stream_has_the_converse_shape(cap: Capture) -> None:
    native = llm_rx.to_native(llm_rx.reassemble(cap.data), "bedrock-converse")
    content = native["output"]["message"]["content"]
    wire = _blocks(cap)
    assert content == [
        {"citationsContent": {"content": [{"text": text}], "citations": citations}}
        if citations else {"text": text} for text, citations in (wire[i] for i in sorted(wire))]
    assert _botocore_parse(native)["output"] == native["output"]  # (nothing outside the model)


def test_to_native_of_the_recorded_cited_stream_is_its_recorded_body() -> None:
    # (the same request made without streaming, which gave the same words)
    [cap] = [c for c in CITED if c.nonstream is not None]
    assert cap.nonstream is not None
    body = json.loads(cap.nonstream.read_text())
    native = llm_rx.to_native(llm_rx.reassemble(cap.data), "bedrock-converse")
    assert (native["output"], native["stopReason"]) == (body["output"], body["stopReason"])


CITED_BODIES = ["bedrock/converse-stream-document-citations.nonstream.json",
                "bedrock/converse-pdf-citations.nonstream.json"]


@pytest.mark.parametrize("name", CITED_BODIES)
def test_a_recorded_cited_body_comes_back_from_native_whole(name: str) -> None:
    body = json.loads((HERE / name).read_text())
    assert llm_rx.to_native(llm_rx.from_native(body), "bedrock-converse") == body


@pytest.mark.parametrize("name", CITED_BODIES)
def test_from_native_of_a_recorded_cited_body_reads_the_cited_text(name: str) -> None:
    body = json.loads((HERE / name).read_text())
    reply = llm_rx.from_native(body)
    expected = []
    for block in body["output"]["message"]["content"]:
        cited = block.get("citationsContent")
        expected.append(("text", "".join(part["text"] for part in cited["content"]),
                         cited["citations"]) if cited else ("text", block["text"], []))
    assert [(b.type, getattr(b, "text", None), getattr(b, "citations", None))
            for b in reply.content] == expected
