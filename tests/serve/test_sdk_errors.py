"""The emulator's ``status=CODE`` fault read by each official SDK: its own typed error, with
the status and the provider's words from the error body (which is the provider's shape)."""

from __future__ import annotations

import anthropic
import boto3
import ollama
import openai
import pytest
from botocore.exceptions import ClientError
from google import genai
from google.genai import errors as genai_errors

from llm_rx.serve import EmulatorThread

pytestmark = pytest.mark.oracle

FAULT = "status=429"
MESSAGES = [{"role": "user", "content": "hi"}]


def test_openai_client_raises_rate_limit_error(llm_rx_server: EmulatorThread) -> None:
    headers = llm_rx_server.headers(fault=FAULT)
    with (
        openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test", max_retries=0,
                      default_headers=headers) as client,
        pytest.raises(openai.RateLimitError) as caught,
    ):
        client.chat.completions.create(model="openai__chat-text-basic", messages=MESSAGES,
                                       stream=True)
    assert caught.value.status_code == 429
    assert caught.value.code == "rate_limit_exceeded"
    assert "status=429" in caught.value.message


def test_anthropic_client_raises_rate_limit_error(llm_rx_server: EmulatorThread) -> None:
    headers = llm_rx_server.headers(fault=FAULT)
    with (
        anthropic.Anthropic(base_url=llm_rx_server.url, api_key="test", max_retries=0,
                            default_headers=headers) as client,
        pytest.raises(anthropic.RateLimitError) as caught,
    ):
        client.messages.create(model="anthropic__text-basic", max_tokens=10, messages=MESSAGES,
                               stream=True)
    assert caught.value.status_code == 429
    assert caught.value.request_id is not None


def test_genai_client_raises_client_error(llm_rx_server: EmulatorThread) -> None:
    options = {"base_url": llm_rx_server.url, "headers": llm_rx_server.headers(fault=FAULT)}
    with (
        genai.Client(api_key="test", http_options=options) as client,
        pytest.raises(genai_errors.ClientError) as caught,
    ):
        list(client.models.generate_content_stream(model="gemini__sse-thought-parts",
                                                   contents="hi"))
    assert caught.value.code == 429
    assert caught.value.status == "RESOURCE_EXHAUSTED"


def test_ollama_client_raises_response_error(llm_rx_server: EmulatorThread) -> None:
    client = ollama.Client(host=llm_rx_server.url, headers=llm_rx_server.headers(fault=FAULT))
    try:
        with pytest.raises(ollama.ResponseError) as caught:
            list(client.chat(model="ollama__chat-gemma3-text", messages=MESSAGES, stream=True))
    finally:
        client._client.close()
    assert caught.value.status_code == 429
    assert "status=429" in caught.value.error


def test_boto3_client_raises_throttling_exception(llm_rx_server: EmulatorThread) -> None:
    client = boto3.client("bedrock-runtime", endpoint_url=llm_rx_server.url,
                          region_name="us-east-1", aws_access_key_id="test",
                          aws_secret_access_key="test",
                          config=boto3.session.Config(retries={"max_attempts": 1}))

    def add_fault(request: object, **_: object) -> None:
        request.headers["x-llm-rx-fault"] = FAULT

    client.meta.events.register("before-send.bedrock-runtime.*", add_fault)
    try:
        with pytest.raises(ClientError) as caught:
            client.converse_stream(modelId="bedrock__converse-stream-text",
                                   messages=[{"role": "user", "content": [{"text": "hi"}]}])
    finally:
        client.close()
    error = caught.value.response
    assert error["Error"]["Code"] == "ThrottlingException"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 429
