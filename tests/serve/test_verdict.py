"""``check_client``: a client run under each fault, judged in llm-rx's terms. A deliberately
careless client (it reads to the end of whatever arrives and calls it finished) is flagged;
clients built on llm-rx's own sources pass, on several wires."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from google import genai

import llm_rx
from llm_rx import operators as lxo
from llm_rx.serve import EmulatorThread
from llm_rx.testing import check_client, reply


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return {}  # (what a prefix could not be parsed into: no arguments)


def careless_chat(server: EmulatorThread) -> llm_rx.Response:
    """Reads OpenAI chat chunks by hand and calls whatever arrived the answer."""
    text: list[str] = []
    calls: dict[int, list[str]] = {}
    usage: dict[str, int] = {}
    try:
        with httpx.Client(timeout=10) as client, client.stream(
                "POST", f"{server.url}/v1/chat/completions",
                json={"model": "gpt-4o", "messages": [], "stream": True,
                      "stream_options": {"include_usage": True}}) as answer:
            for line in answer.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                try:
                    chunk = json.loads(line[6:])
                except ValueError:
                    continue  # (a frame it cannot read: skipped, the stream goes on)
                if chunk.get("usage"):
                    usage = {"input_tokens": chunk["usage"]["prompt_tokens"],
                             "output_tokens": chunk["usage"]["completion_tokens"]}
                for choice in chunk.get("choices") or ():
                    delta = choice.get("delta") or {}
                    text.append(delta.get("content") or "")
                    for call in delta.get("tool_calls") or ():
                        got = calls.setdefault(call["index"], ["", ""])
                        got[0] += call.get("function", {}).get("name") or ""
                        got[1] += call.get("function", {}).get("arguments") or ""
    except httpx.HTTPError:
        pass  # (a cut connection: what arrived is the answer)
    tool_calls = [(name, _arguments(raw)) for name, raw in calls.values()]
    return reply("".join(text), tool_calls=tool_calls, usage=usage or None)


def llm_rx_client(path: str, provider: str, **body: Any) -> Any:
    def client(server: EmulatorThread) -> llm_rx.Response:
        with httpx.Client(timeout=10) as http, http.stream(
                "POST", server.url + path, json={"model": "m", "stream": True, **body}) as answer:
            response: llm_rx.Response = llm_rx.from_httpx(answer, provider).pipe(
                lxo.to_response()).run()
            return response
    return client


def test_a_careless_client_is_flagged(llm_rx_server: EmulatorThread) -> None:
    verdict = check_client(llm_rx_server, careless_chat)
    problems = {(finding.fault, finding.problem) for finding in verdict.findings}
    assert ("cut in a tool call", "called a cut stream complete") in problems
    assert ("cut in a tool call", "kept a partial tool call as final") in problems
    assert ("malformed frame", "called a cut stream complete") in problems
    assert ("none", "dropped a signature") in problems  # (chat carries reasoning_content's)
    assert not verdict.ok
    with pytest.raises(AssertionError, match="called a cut stream complete"):
        verdict.assert_ok()


@pytest.mark.parametrize(("path", "provider", "body"), [
    ("/v1/chat/completions", "openai-chat", {"stream_options": {"include_usage": True}}),
    ("/v1/messages", "anthropic", {"max_tokens": 9}),
    ("/v1/responses", "openai-responses", {}),
    ("/api/chat", "ollama", {}),
])
def test_llm_rx_sources_pass(llm_rx_server: EmulatorThread, path: str, provider: str,
                             body: dict[str, Any]) -> None:
    verdict = check_client(llm_rx_server, llm_rx_client(path, provider, **body))
    assert verdict.ok, str(verdict)
    assert verdict.runs["none"] == "returned complete"
    assert verdict.runs["cut in a tool call"] == "returned incomplete"


def test_the_server_is_left_as_it_was(llm_rx_server: EmulatorThread) -> None:
    llm_rx_server.fault("drop-after=5")
    check_client(llm_rx_server, llm_rx_client("/v1/messages", "anthropic", max_tokens=9),
                 faults=["malformed frame"])
    assert llm_rx_server.emulator.fault == "drop-after=5"
    assert len(llm_rx_server.emulator.script) == 0


def test_the_verdict_judges_the_reply_request_not_the_last_request(
    llm_rx_server: EmulatorThread,
) -> None:
    reads = llm_rx_client("/v1/messages", "anthropic", max_tokens=9)

    def client(server: EmulatorThread) -> llm_rx.Response:
        response: llm_rx.Response = reads(server)
        httpx.get(f"{server.url}/v1/models", timeout=10)  # (a request after the reply's)
        return response

    verdict = check_client(llm_rx_server, client, faults=["cut before the end"])
    assert verdict.ok, str(verdict)
    assert verdict.runs == {"none": "returned complete",
                            "cut before the end": "returned incomplete"}


def genai_client(server: EmulatorThread) -> llm_rx.Response:
    """The Gemini client of the docs: google-genai's stream read by ``from_sdk``."""
    with genai.Client(api_key="test", http_options={"base_url": server.url}) as client:
        chunks = client.models.generate_content_stream(model="any", contents="Hi")
        response: llm_rx.Response = llm_rx.from_sdk(chunks).pipe(lxo.to_response()).run()
        return response


def test_the_documented_gemini_client_passes(llm_rx_server: EmulatorThread) -> None:
    # (google-genai reads thoughtSignature as base64 bytes: the stand-in signature must be
    # base64 it gives back unchanged, or the verdict says the signature was dropped)
    verdict = check_client(llm_rx_server, genai_client, faults=["cut before the end"])
    assert verdict.ok, str(verdict)
    assert verdict.runs["none"] == "returned complete"
