"""The emulator's endpoints: the capture a request names, the format its endpoint speaks,
non-stream bodies, and refusals in each endpoint's own error shape."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletion
from openai.types.responses import Response as OpenAIResponse

import llm_rx
from llm_rx import operators as lxo
from llm_rx.data import bundled_folder
from llm_rx.serve import CaptureIndex, EmulatorThread
from tests.captures import CAPTURES, HERE, Capture, capture

from .replies import model_of, params

SERVED = [cap for cap in CAPTURES if "pull" not in cap.name]
PATHS = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "ollama": "/api/chat",
    "openai-completions": "/v1/completions",
    "cohere": "/v2/chat",
    "gemini-interactions": "/v1/interactions",
}
CONTENT_TYPES = {
    "/v1/messages": "text/event-stream",
    "/v1beta/models/gemini__sse-thought-parts:streamGenerateContent?alt=sse": "text/event-stream",
    "/v1beta/models/gemini__sse-thought-parts:streamGenerateContent": "application/json",
    "/api/generate": "application/x-ndjson",
    "/model/bedrock__converse-stream-text/converse-stream": "application/vnd.amazon.eventstream",
}


def url_for(server: EmulatorThread, cap: Capture) -> str:
    model = model_of(cap)
    if cap.provider == "gemini":
        alt = "?alt=sse" if cap.name.endswith(".sse") else ""
        return f"{server.url}/v1beta/models/{model}:streamGenerateContent{alt}"
    if cap.provider == "bedrock-converse":
        return f"{server.url}/model/{model}/converse-stream"
    if "generate" in cap.name and cap.provider == "ollama":
        return f"{server.url}/api/generate"
    return server.url + PATHS[cap.provider]


@pytest.mark.parametrize("cap", params(SERVED))
def test_serve_stream_read_by_llm_rx_is_the_reassembled_reply(
    llm_rx_server: EmulatorThread, cap: Capture
) -> None:
    async def fetch() -> llm_rx.Response:
        async with (
            httpx.AsyncClient(timeout=10.0) as client,
            client.stream("POST", url_for(llm_rx_server, cap),
                          json={"model": model_of(cap), "stream": True}) as response,
        ):
            assert response.status_code == 200
            events = llm_rx.from_async_bytes(response.aiter_bytes(), cap.provider)
            reply: llm_rx.Response = await events.pipe(lxo.to_response())
        return reply

    assert asyncio.run(fetch()) == llm_rx.reassemble(cap.path, cap.provider)


def test_serve_stream_is_the_recording_byte_for_byte(llm_rx_server: EmulatorThread) -> None:
    cap = capture("openai/chat-text-langchaingo.sse")
    reply = httpx.post(url_for(llm_rx_server, cap), json={"model": model_of(cap), "stream": True})
    assert reply.content == cap.data


@pytest.mark.parametrize(("path", "kind"), list(CONTENT_TYPES.items()))
def test_serve_stream_content_type_is_the_provider_s(
    llm_rx_server: EmulatorThread, path: str, kind: str
) -> None:
    model = "ollama__generate-gemma3-text" if path == "/api/generate" else "anthropic__text-basic"
    reply = httpx.post(llm_rx_server.url + path, json={"model": model, "stream": True})
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith(kind)


def test_serve_gemini_sse_capture_is_reframed_as_a_json_array(
    llm_rx_server: EmulatorThread,
) -> None:
    cap = capture("gemini/sse-thought-parts.sse")
    url = f"{llm_rx_server.url}/v1beta/models/{model_of(cap)}:streamGenerateContent"
    body = httpx.post(url, json={}).content
    chunks = json.loads(body)
    assert isinstance(chunks, list)
    assert len(chunks) == 23
    assert llm_rx.reassemble(body, "gemini") == llm_rx.reassemble(cap.path, "gemini")


def test_serve_gemini_json_array_capture_is_reframed_as_sse(
    llm_rx_server: EmulatorThread,
) -> None:
    cap = capture("gemini/json-array-text-thoughts.json")
    url = f"{llm_rx_server.url}/v1beta/models/{model_of(cap)}:streamGenerateContent?alt=sse"
    body = httpx.post(url, json={}).content
    assert body.startswith(b"data: {")
    assert llm_rx.reassemble(body, "gemini") == llm_rx.reassemble(cap.path, "gemini")


def test_serve_capture_header_overrides_the_model(llm_rx_server: EmulatorThread) -> None:
    cap = capture("anthropic/text-basic.sse")
    reply = httpx.post(f"{llm_rx_server.url}/v1/messages",
                       json={"model": "claude-sonnet-4-5", "stream": True},
                       headers=llm_rx_server.headers("anthropic/text-basic"))
    assert reply.content == cap.data


@pytest.mark.parametrize(("path", "check"), [
    ("/v1/chat/completions", lambda e: e["error"]["code"] == "model_not_found"),
    ("/v1/messages", lambda e: e["error"]["type"] == "not_found_error"),
    ("/v1beta/models/nope:generateContent", lambda e: e["error"]["status"] == "NOT_FOUND"),
    ("/api/chat", lambda e: "no capture" in e["error"]),
    ("/model/nope/converse", lambda e: "no capture" in e["message"]),
])
def test_serve_unknown_capture_is_a_404_in_the_endpoint_shape(
    llm_rx_server: EmulatorThread, path: str, check: object
) -> None:
    reply = httpx.post(llm_rx_server.url + path, json={"model": "nope"})
    assert reply.status_code == 404
    assert callable(check)
    assert check(reply.json())


def test_serve_capture_of_another_provider_is_served_translated(
    llm_rx_server: EmulatorThread,
) -> None:
    # DESIGN section 6: the endpoint decides the format
    reply = httpx.post(f"{llm_rx_server.url}/v1/chat/completions",
                       json={"model": "anthropic__text-basic", "stream": True})
    assert reply.status_code == 200
    data = capture("anthropic/text-basic.sse").data
    assert reply.content == llm_rx.translate(data, "openai-chat", "anthropic")


def test_serve_capture_of_another_provider_on_generate_is_a_400(
    llm_rx_server: EmulatorThread,
) -> None:
    reply = httpx.post(f"{llm_rx_server.url}/api/generate",
                       json={"model": "anthropic__text-basic"})
    assert reply.status_code == 400
    assert "no translation" in reply.json()["error"]


def test_serve_ollama_chat_capture_on_generate_is_a_400(llm_rx_server: EmulatorThread) -> None:
    reply = httpx.post(f"{llm_rx_server.url}/api/generate",
                       json={"model": "ollama__chat-gemma3-text"})
    assert reply.status_code == 400
    assert "chat" in reply.json()["error"]


def test_serve_unknown_path_is_a_404(llm_rx_server: EmulatorThread) -> None:
    assert httpx.post(f"{llm_rx_server.url}/v2/nothing", json={}).status_code == 404


def test_serve_body_that_is_not_json_is_a_400(llm_rx_server: EmulatorThread) -> None:
    reply = httpx.post(f"{llm_rx_server.url}/v1/messages", content=b"{not json")
    assert reply.status_code == 400
    assert reply.json()["type"] == "error"


def test_serve_non_stream_chat_validates_as_chat_completion(
    llm_rx_server: EmulatorThread,
) -> None:
    cap = capture("openai/chat-parallel-tool-calls.sse")
    with openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test",
                       max_retries=0) as client:
        completion = client.chat.completions.create(model=model_of(cap), messages=[])
    assert isinstance(completion, ChatCompletion)
    expected = llm_rx.to_native(llm_rx.reassemble(cap.path), "openai-chat")
    assert completion.to_dict(mode="json", warnings=False) == expected


def test_serve_non_stream_responses_validates_as_response(llm_rx_server: EmulatorThread) -> None:
    cap = capture("openai/responses-function-call.sse")
    with openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test",
                       max_retries=0) as client:
        response = client.responses.create(model=model_of(cap), input="hi")
    assert isinstance(response, OpenAIResponse)
    native = llm_rx.to_native(llm_rx.reassemble(cap.path), "openai-responses")
    assert response.id == native["id"]
    assert [item.type for item in response.output] == [item["type"] for item in native["output"]]


def test_serve_bundled_captures_by_default() -> None:
    with EmulatorThread() as server:
        assert "openai__chat-text-basic" in server.captures
        reply = httpx.post(f"{server.url}/v1/chat/completions",
                           json={"model": "openai__chat-text-basic", "stream": True})
    assert llm_rx.reassemble(reply.content).complete


def test_serve_paced_stream_is_the_recording_in_frames(llm_rx_server: EmulatorThread) -> None:
    cap = capture("anthropic/text-basic.sse")  # 7 frames at 100 per second: 60 ms
    headers = llm_rx_server.headers(pace=100)
    with httpx.stream("POST", f"{llm_rx_server.url}/v1/messages", headers=headers,
                      json={"model": model_of(cap), "stream": True}) as reply:
        reads = list(reply.iter_raw())
    assert b"".join(reads) == cap.data
    assert len(reads) > 1  # one write per frame, each after the last one's tick


def test_serve_bundled_captures_cover_every_provider_with_provenance() -> None:
    index = CaptureIndex.load([bundled_folder()])
    assert {cap.provider for cap in index} == set(llm_rx.PROVIDERS)
    provenance = (bundled_folder() / "PROVENANCE.tsv").read_text().splitlines()[1:]
    recorded = {line.split("\t", 1)[0] for line in provenance}
    assert {cap.path.relative_to(bundled_folder()).as_posix() for cap in index} == recorded


def test_serve_bundled_captures_have_the_ids_of_the_same_files_elsewhere() -> None:
    bundled = {cap.id: cap.data for cap in CaptureIndex.load([bundled_folder()])}
    shared = {cap.id: cap.data for cap in CaptureIndex.load([HERE])}
    assert "anthropic__thinking-signature" in bundled
    assert {name: shared.get(name) for name in bundled} == bundled  # same id, same bytes


def test_a_folder_with_a_browsers_stream_serves_its_provider_recordings(tmp_path: Path) -> None:
    # a UI stream (AI SDK, AG-UI) answers no provider's endpoint: left out, not a crash
    (tmp_path / "ui.sse").write_bytes((HERE / "vercel-ui" / "langgraph-hitl-request.sse")
                                      .read_bytes())
    (tmp_path / "chat.sse").write_bytes((HERE / "openai" / "chat-text-basic.sse").read_bytes())
    assert [cap.id for cap in CaptureIndex.load([tmp_path])] == ["chat"]
