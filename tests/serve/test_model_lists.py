"""Each provider's model list on the emulator, read by the official SDK's own list call: the
ids are the captures the emulator serves."""

from __future__ import annotations

import anthropic
import boto3
import cohere
import httpx
import ollama
import openai
import pytest
from google import genai

from llm_rx.serve import EmulatorThread


def test_openai_models_list_and_retrieve(llm_rx_server: EmulatorThread) -> None:
    with openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test",
                       max_retries=0) as client:
        assert [model.id for model in client.models.list()] == llm_rx_server.captures
        one = llm_rx_server.captures[0]
        assert client.models.retrieve(one).id == one
        assert [(e.method, e.path) for e in llm_rx_server.requests] == [
            ("GET", "/v1/models"), ("GET", f"/v1/models/{one}")]
        with pytest.raises(openai.NotFoundError, match="no-such-model"):
            client.models.retrieve("no-such-model")


def test_anthropic_models_list(llm_rx_server: EmulatorThread) -> None:
    with anthropic.Anthropic(base_url=llm_rx_server.url, api_key="test",
                             max_retries=0) as client:
        models = list(client.models.list())
    assert [model.id for model in models] == llm_rx_server.captures
    assert {model.type for model in models} == {"model"}


def test_genai_models_list(llm_rx_server: EmulatorThread) -> None:
    with genai.Client(api_key="test", http_options={"base_url": llm_rx_server.url}) as client:
        names = [model.name for model in client.models.list()]
    assert names == [f"models/{name}" for name in llm_rx_server.captures]


def test_ollama_list(llm_rx_server: EmulatorThread) -> None:
    client = ollama.Client(host=llm_rx_server.url)
    try:
        assert [model.model for model in client.list().models] == llm_rx_server.captures
    finally:
        client._client.close()


def test_cohere_models_list(llm_rx_server: EmulatorThread) -> None:
    with cohere.ClientV2(api_key="test", base_url=llm_rx_server.url, max_retries=0) as client:
        listed = client.models.list()
    assert [model.name for model in listed.models] == llm_rx_server.captures


def test_bedrock_list_foundation_models(llm_rx_server: EmulatorThread) -> None:
    client = boto3.client("bedrock", endpoint_url=llm_rx_server.url, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
    try:
        summaries = client.list_foundation_models()["modelSummaries"]
    finally:
        client.close()
    assert [model["modelId"] for model in summaries] == llm_rx_server.captures


def test_a_get_on_no_list_is_a_404(llm_rx_server: EmulatorThread) -> None:
    answer = httpx.get(f"{llm_rx_server.url}/v1/chat/completions", timeout=10)
    assert answer.status_code == 404
    assert "no model list" in answer.json()["error"]["message"]
