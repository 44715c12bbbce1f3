"""Bedrock citations in non-stream bodies (issue 31, item 3).

The recorded bodies with citations are read in ``test_bedrock_citations_recorded.py``; here
the replies are made up to reach every case, and the shapes are botocore's own service model for
``bedrock-runtime`` (``CitationsContentBlock``: ``content`` and ``citations``;
``CitationsDelta`` in ``ConverseStream``), and each body ``to_native`` writes is parsed by
botocore's own ``rest-json`` parser with the ``Converse`` output shape: what the parser does
not know it drops, so a body equal to its parse has only members of the model.
"""

from __future__ import annotations

from typing import Any

import boto3
import botocore.session
import orjson
import pytest
from botocore.config import Config
from botocore.parsers import create_parser

import llm_rx
from llm_rx import from_native, to_native
from llm_rx.wire.eventstream import encode_message
from llm_rx.wire.restream import restream

from .loopback import server

_HEADERS = {":content-type": "application/json", ":message-type": "event"}

DOCUMENT = {"title": "opening-hours.txt", "sourceContent": [{"text": "Open 9 to 5."}],
            "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 12}}}
WEB = {"location": {"web": {"url": "https://example.org/hours", "domain": "example.org"}}}


def _stream(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(encode_message({":event-type": name, **_HEADERS}, orjson.dumps(payload))
                    for name, payload in events)


def _cited(citation_only: bool) -> llm_rx.Response:
    """A ConverseStream reply: text with its citations at block 0 (and, when asked, a block
    of citations alone at block 1), read by llm-rx's own decoder."""
    events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    for text in ("The shop is ", "open 9 to 5."):
        events.append(("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}}))
    events.append(("contentBlockDelta", {"contentBlockIndex": 0,
                                         "delta": {"citation": DOCUMENT}}))
    events.append(("contentBlockStop", {"contentBlockIndex": 0}))
    if citation_only:
        events.append(("contentBlockDelta", {"contentBlockIndex": 1,
                                             "delta": {"citation": WEB}}))
        events.append(("contentBlockStop", {"contentBlockIndex": 1}))
    events.append(("messageStop", {"stopReason": "end_turn"}))
    events.append(("metadata", {"usage": {"inputTokens": 20, "outputTokens": 9,
                                          "totalTokens": 29}, "metrics": {"latencyMs": 300}}))
    reply = llm_rx.reassemble(_stream(events), "bedrock-converse")
    assert reply.complete
    assert reply.text == "The shop is open 9 to 5."
    return reply


def _botocore_parse(body: dict[str, Any]) -> Any:
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("Converse").output_shape
    response = {"body": orjson.dumps(body), "headers": {}, "status_code": 200}
    parsed = create_parser("rest-json").parse(response, shape)
    parsed.pop("ResponseMetadata", None)
    return parsed


@pytest.mark.parametrize("citation_only", [False, True], ids=["cited-text", "citations-alone"])
def test_bedrock_to_native_cited_text_has_the_models_shape(citation_only: bool) -> None:
    body = to_native(_cited(citation_only), "bedrock-converse")
    content = body["output"]["message"]["content"]
    assert content[0] == {"citationsContent": {
        "content": [{"text": "The shop is open 9 to 5."}], "citations": [DOCUMENT]}}
    if citation_only:  # (no made-up empty text: the API never sends one)
        assert content[1] == {"citationsContent": {"citations": [WEB]}}
    assert _botocore_parse(body)["output"] == body["output"]


@pytest.mark.parametrize("citation_only", [False, True], ids=["cited-text", "citations-alone"])
def test_bedrock_from_native_of_to_native_is_the_cited_reply(citation_only: bool) -> None:
    reply = _cited(citation_only)
    again = from_native(to_native(reply, "bedrock-converse"), "bedrock-converse")
    assert again.text == reply.text
    assert again == reply


@pytest.mark.parametrize("citation_only", [False, True], ids=["cited-text", "citations-alone"])
def test_bedrock_restream_of_a_cited_body_is_read_by_boto3_as_that_body(
    citation_only: bool,
) -> None:
    # the re-framing is a ConverseStream botocore's own event-stream parser reads (it drops
    # what its model has no member for: a citationsContent given as a contentBlockStart was
    # lost there); its blocks, assembled as a ConverseStream consumer does (text joined,
    # citations in order, per block), are the body's
    body = to_native(_cited(citation_only), "bedrock-converse")
    data = restream(body, "bedrock-converse")
    with server(data, "application/vnd.amazon.eventstream") as running:
        client = boto3.client("bedrock-runtime", region_name="us-east-1",
                              endpoint_url=running.url, aws_access_key_id="k",
                              aws_secret_access_key="s",
                              config=Config(retries={"max_attempts": 1}))
        ask = [{"role": "user", "content": [{"text": "hours?"}]}]
        events = list(client.converse_stream(modelId="m", messages=ask)["stream"])
        reply = llm_rx.from_sdk(client.converse_stream(modelId="m", messages=ask)).pipe(
            llm_rx.operators.to_response()).run()
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        delta = event.get("contentBlockDelta")
        if delta is None:
            continue
        block = blocks.setdefault(delta["contentBlockIndex"], {"text": "", "citations": []})
        block["text"] += delta["delta"].get("text", "")
        if "citation" in delta["delta"]:
            block["citations"].append(delta["delta"]["citation"])
    assembled = [{"citationsContent": {**({"content": [{"text": b["text"]}]} if b["text"]
                                          else {}), "citations": b["citations"]}}
                 for _, b in sorted(blocks.items())]
    assert assembled == body["output"]["message"]["content"]
    assert reply == from_native(body, "bedrock-converse")
