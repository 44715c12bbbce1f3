"""Every capture served translated on every other provider's endpoint, read by that
provider's official client over a real socket (DESIGN section 6: the endpoint decides the
format). Each client gets the text, the tool calls (name, parsed arguments, the id where the
source had one), the stop reason (by the STOP table) and the usage llm-rx reassembles from
the original.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import boto3
import cohere
import ollama
import openai
import pytest
from google import genai

import llm_rx
from llm_rx import Dropped, ToolCallBlock
from llm_rx.serve import EmulatorThread
from tests.captures import CAPTURES, Capture
from tests.encoders.test_round_trip import _expected_stop

from .replies import Reply, model_of
from .test_sdk_anthropic import message_reply
from .test_sdk_cohere import cohere_reply
from .test_sdk_genai import chunks_reply
from .test_sdk_interactions import events_reply
from .test_sdk_ollama_bedrock import bedrock_reply, ollama_reply
from .test_sdk_openai import MESSAGES, chat_reply, responses_reply

pytestmark = pytest.mark.oracle


def _complete(cap: Capture) -> bool:
    try:
        return llm_rx.reassemble(cap.data, cap.provider).complete  # type: ignore[arg-type]
    except llm_rx.LlmRxError:
        return False


SOURCES = [cap for cap in CAPTURES if _complete(cap)]


@pytest.fixture(scope="module")
def clients(llm_rx_server: EmulatorThread) -> Iterator[dict[str, Any]]:
    url = llm_rx_server.url
    made = {
        "openai": openai.OpenAI(base_url=f"{url}/v1", api_key="test", max_retries=0),
        "anthropic": anthropic.Anthropic(base_url=url, api_key="test", max_retries=0),
        "genai": genai.Client(api_key="test", http_options={"base_url": url}),
        "ollama": ollama.Client(host=url),
        "bedrock": boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1",
                                aws_access_key_id="test", aws_secret_access_key="test"),
        "cohere": cohere.ClientV2(api_key="test", base_url=url, max_retries=0),
    }
    yield made
    made["openai"].close()
    made["anthropic"].close()
    made["genai"].close()
    made["ollama"]._client.close()
    made["bedrock"].close()
    made["cohere"]._client_wrapper.httpx_client.httpx_client.close()  # (what its __exit__ does)


def _openai_chat(clients: dict[str, Any], cap: Capture) -> Reply:
    with clients["openai"].chat.completions.stream(model=model_of(cap),
                                                   messages=MESSAGES) as stream:
        try:
            completion = stream.get_final_completion()
        except openai.LengthFinishReasonError:  # (PITFALLS 28: the helper's own refusal)
            completion = stream.current_completion_snapshot
    return chat_reply(completion, "")


def _openai_responses(clients: dict[str, Any], cap: Capture) -> Reply:
    final = None
    with clients["openai"].responses.stream(model=model_of(cap), input="hi") as stream:
        for event in stream:  # (get_final_response() raises on response.incomplete)
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
    assert final is not None
    return responses_reply(final)


def _anthropic(clients: dict[str, Any], cap: Capture) -> Reply:
    with clients["anthropic"].messages.stream(model=model_of(cap), max_tokens=1024,
                                              messages=MESSAGES) as stream:
        return message_reply(stream.get_final_message())


def _gemini(clients: dict[str, Any], cap: Capture) -> Reply:
    return chunks_reply(list(clients["genai"].models.generate_content_stream(
        model=model_of(cap), contents="hi")))


def _gemini_interactions(clients: dict[str, Any], cap: Capture) -> Reply:
    return events_reply(list(clients["genai"].interactions.create(
        model=model_of(cap), input="hi", stream=True)))


def _ollama(clients: dict[str, Any], cap: Capture) -> Reply:
    return ollama_reply(clients["ollama"].chat(model=model_of(cap), stream=True,
                                               messages=MESSAGES))


def _bedrock(clients: dict[str, Any], cap: Capture) -> Reply:
    reply = clients["bedrock"].converse_stream(
        modelId=model_of(cap), messages=[{"role": "user", "content": [{"text": "hi"}]}])
    return bedrock_reply(reply["stream"])


def _cohere(clients: dict[str, Any], cap: Capture) -> Reply:
    return cohere_reply(clients["cohere"].chat_stream(model=model_of(cap), messages=MESSAGES))


READERS: dict[str, Callable[[dict[str, Any], Capture], Reply]] = {
    "anthropic": _anthropic,
    "bedrock-converse": _bedrock,
    "cohere": _cohere,
    "gemini": _gemini,
    "gemini-interactions": _gemini_interactions,
    "ollama": _ollama,
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
}

# The arguments of a Responses custom tool are free text, which the chat client's helper
# parses as JSON (and which a chat completion cannot mark as custom in a stream).
SKIP = {("openai/responses-custom-tool.sse", "openai-chat"),
        # the chat client's helper raises on a content_filter finish (no reply to read)
        ("gemini/sse-prompt-blocked.sse", "openai-chat")}

CASES = [pytest.param(cap, target, id=f"{cap.name}->{target}")
         for cap in SOURCES for target in sorted(READERS)
         if target != cap.provider and (cap.name, target) not in SKIP]


def _arguments(call: ToolCallBlock, target: str) -> Any:
    """A call's arguments as the target's client gives them: free text (no JSON) is the
    string itself where arguments are a string (Cohere), ``{"_raw_arguments": ...}`` where
    they are an object."""
    if call.arguments is not None or target in ("openai-chat", "openai-responses"):
        return call.arguments
    return call.raw_arguments if target == "cohere" else {"_raw_arguments": call.raw_arguments}


def expected(cap: Capture, target: str) -> Reply:
    original = llm_rx.reassemble(cap.data, cap.provider)  # type: ignore[arg-type]
    lost: list[Dropped] = []
    llm_rx.translate(cap.data, target, cap.provider,  # type: ignore[arg-type]
                     on_dropped=lost.append)
    as_text = target not in ("openai-chat", "openai-responses")
    refusal = "".join(b.text for b in original.content if b.type == "refusal")
    calls = [(call.id if target != "ollama" else None, call.name or "",
              _arguments(call, target)) for call in original.tool_calls]
    usage = original.usage
    tokens = (usage.input_tokens, usage.output_tokens)
    if target == "openai-responses" and None in tokens:
        tokens = (None, None)  # (its usage object is all or nothing)
    if target == "anthropic":  # (its stream requires both counts: 0 when not reported)
        tokens = (tokens[0] or 0, tokens[1] or 0)
    stop = _expected_stop(original, target, lost)
    if target == "openai-responses" and stop == "refusal":
        stop = "end_turn"  # (the test's reading of a Responses reply has no refusal rule)
    return Reply(original.text + (refusal if as_text else ""), calls, stop, tokens)


@pytest.mark.parametrize(("cap", "target"), CASES)
def test_served_translation_is_read_by_the_targets_client(
    clients: dict[str, Any], cap: Capture, target: str
) -> None:
    got = READERS[target](clients, cap)
    want = expected(cap, target)
    ids = {call[0] for call in want.tool_calls}
    if ids == {None}:  # (the source had no ids: the target's are made up, but present)
        got = Reply(got.text, [(None, n, a) for _, n, a in got.tool_calls], got.stop_reason,
                    got.usage)
    assert got == want
