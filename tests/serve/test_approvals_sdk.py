"""The emulator scripts a reply that stops to ask (a canonical ``Response`` with an
``approval_request`` block, queued as it is or as its JSON): the official ``openai`` SDK
reads it from ``/v1/responses`` as its typed ``McpApprovalRequest`` output item, streamed
and not; the next turn's decision (``to_message(approvals=...)``) is a request it sends."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pytest
from openai.types.responses.response_output_item import McpApprovalRequest

import llm_rx
from llm_rx.response import ApprovalRequestBlock, TextBlock
from llm_rx.serve import EmulatorThread
from llm_rx.testing import reply

ARGUMENTS = {"query": "llm-rx approvals", "limit": 1}
ASKS = llm_rx.Response(
    provider="scripted", model="scripted", id="resp_asks", complete=True,
    stop_reason="tool_use",
    content=[TextBlock(text="May I search the docs?"),
             ApprovalRequestBlock(id="mcpr_1", name="search_docs", arguments=ARGUMENTS,
                                  server="docs")],
    usage=llm_rx.Usage(input_tokens=9, output_tokens=4))


@pytest.fixture
def oa(llm_rx_server: EmulatorThread) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test",
                       max_retries=0) as client:
        yield client


def _asked(output: list[object]) -> McpApprovalRequest:
    [item] = [item for item in output if isinstance(item, McpApprovalRequest)]
    return item


def _check(item: McpApprovalRequest) -> None:
    assert (item.id, item.name, item.server_label) == ("mcpr_1", "search_docs", "docs")
    assert json.loads(item.arguments) == ARGUMENTS


@pytest.mark.slow  # (a server)
@pytest.mark.parametrize("queued", ["response", "json"])
def test_openai_sdk_reads_a_scripted_approval_request(llm_rx_server: EmulatorThread,
                                                      oa: openai.OpenAI, queued: str) -> None:
    for stream in (False, True):
        if queued == "json":  # (what POST /_llm_rx/queue reads: the canonical JSON)
            httpx.post(f"{llm_rx_server.url}/_llm_rx/queue",
                       json={"replies": [ASKS.model_dump(mode="json")]},
                       timeout=10).raise_for_status()
        else:
            llm_rx_server.queue(ASKS)
        if stream:
            added = []
            with oa.responses.stream(model="gpt-5", input="search") as events:
                for event in events:
                    if event.type == "response.output_item.added":
                        added.append(event.item)
                response = events.get_final_response()
            _check(_asked(added))
        else:
            response = oa.responses.create(model="gpt-5", input="search")
        _check(_asked(response.output))
        assert response.output_text == "May I search the docs?"
        assert response.status == "completed"


@pytest.mark.slow  # (a server)
def test_the_decision_goes_back_as_the_sdk_sends_it(llm_rx_server: EmulatorThread,
                                                     oa: openai.OpenAI) -> None:
    llm_rx_server.queue(ASKS)
    with oa.responses.stream(model="gpt-5", input="search") as events:
        first = events.get_final_response()
    read = llm_rx.from_native(first.model_dump(mode="json"), "openai-responses")
    [request] = read.approval_requests
    assert (request.id, request.name, request.arguments, request.server) == (
        "mcpr_1", "search_docs", ARGUMENTS, "docs")
    turn = llm_rx.to_message(read, "openai-responses", approvals={"mcpr_1": True})
    llm_rx_server.queue(reply("Found it."))
    second = oa.responses.create(model="gpt-5", input=[
        {"role": "user", "content": "search"}, *turn])  # type: ignore[list-item]
    assert second.output_text == "Found it."
    sent = [entry for entry in llm_rx_server.requests if entry.path == "/v1/responses"][-1]
    assert sent.json["input"][-2:] == [
        {"id": "mcpr_1", "type": "mcp_approval_request", "arguments": json.dumps(
            ARGUMENTS, separators=(",", ":")), "name": "search_docs", "server_label": "docs"},
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}]


def test_reply_scripts_approval_requests() -> None:
    scripted = reply("May I?", approval_requests=[
        ("search_docs", ARGUMENTS), {"name": "fetch", "arguments": '{"url":"x"}', "server": "web"},
        ApprovalRequestBlock(id="mine", name="run")], stop="tool_use")
    assert [(b.id, b.name, b.arguments, b.server) for b in scripted.approval_requests] == [
        ("mcpr_scripted_1", "search_docs", ARGUMENTS, None),
        ("mcpr_scripted_2", "fetch", {"url": "x"}, "web"),  # (a string: the raw JSON)
        ("mine", "run", None, None)]
    with pytest.raises(TypeError, match="names its tool"):
        reply(approval_requests=[{"arguments": {}}])


@pytest.mark.slow  # (a server)
def test_a_request_queued_without_an_id_gets_one(llm_rx_server: EmulatorThread,
                                                 oa: openai.OpenAI) -> None:
    body = ASKS.model_dump(mode="json")
    body["content"][1]["id"] = None  # (what a client in another language may queue)
    httpx.post(f"{llm_rx_server.url}/_llm_rx/queue", json={"replies": [body]},
               timeout=10).raise_for_status()
    response = oa.responses.create(model="gpt-5", input="search")
    assert _asked(response.output).id == "mcpr_scripted_1"
