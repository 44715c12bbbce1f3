"""The official ``openai`` client against the emulator: chat completions (``create(stream=
True)`` folded by its ``ChatCompletionStreamState``, and the ``.stream()`` helper) and the
Responses API (``responses.stream()``), for every capture of each format, over a real socket.
Each gets the reply ``llm_rx.reassemble(file)`` gives, but for the SDK bugs named per capture.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion
from openai.types.responses import Response as OpenAIResponse

from llm_rx.serve import EmulatorThread
from tests.captures import CAPTURES, Capture
from tests.test_contract_sdk import COMPLETION_EXCLUDES_REASONING, canonical_stop

from .replies import Reply, assert_same, model_of, params

pytestmark = pytest.mark.oracle

CHAT = [cap for cap in CAPTURES if cap.provider == "openai-chat"]
RESPONSES = [cap for cap in CAPTURES if cap.provider == "openai-responses"]
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def client(llm_rx_server: EmulatorThread) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test",
                       max_retries=0) as client:
        yield client


def chat_reply(completion: ChatCompletion, name: str) -> Reply:
    choice = completion.choices[0]
    calls = [(tc.id, tc.function.name, json.loads(tc.function.arguments or "{}"))
             for tc in choice.message.tool_calls or ()]
    usage: tuple[int | None, int | None] = (None, None)
    if completion.usage is not None:
        output = completion.usage.completion_tokens
        details = completion.usage.completion_tokens_details
        if name in COMPLETION_EXCLUDES_REASONING and details is not None:
            output += details.reasoning_tokens or 0
        usage = (completion.usage.prompt_tokens, output)
    stop = canonical_stop(choice.finish_reason, calls, choice.message.refusal)
    return Reply(choice.message.content or "", calls, stop, usage)


# Hosts whose chunks ChatCompletionChunk cannot hold, or whose in-band error the client raises.
CHAT_RAISES = {
    "groq/error-event-tool-use-failed.sse": "its `event: error` frame: the client raises APIError",
    "openrouter/error-chunk-finish-length.sse": "its {'error': ...} chunk: the client raises",
    "mistral/magistral-thinking-chunks.sse": "delta.content is an array of typed parts",
    "mistral/magistral-thinking-vercel.sse": "delta.content is an array of typed parts",
    "mistral/tool-call.sse": "its tool_calls entries carry no index",
    "openrouter/web-search-annotations.sse": "delta.annotations entries carry no index",
}
CHAT_KNOWN: dict[str, dict[str, str]] = {
    # The helper reads only the top-level usage, never Groq's x_groq.usage (PITFALLS 32).
    "groq/web-search-executed-tools.sse": {"usage": "x_groq.usage is not read"},
}


def stream_state(client: openai.OpenAI, cap: Capture) -> ChatCompletion:
    state = ChatCompletionStreamState()
    stream = client.chat.completions.create(model=model_of(cap), messages=MESSAGES,
                                            stream=True)
    for chunk in stream:
        if chunk.object == "":  # Azure's content-filter chunk: `.stream()` skips it by design
            continue
        state.handle_chunk(chunk)
    try:
        return state.get_final_completion()
    except openai.LengthFinishReasonError:
        # PITFALLS 28: a plain max_tokens reply raises; the snapshot is the reply it lost.
        return state.current_completion_snapshot


@pytest.mark.parametrize("cap", params(CHAT))
def test_openai_chat_create_stream_gets_the_reassembled_reply(
    client: openai.OpenAI, cap: Capture
) -> None:
    if cap.name in CHAT_RAISES:
        # (array content comes back as a list its `str` field warns about when dumped)
        with pytest.raises((openai.APIError, TypeError, KeyError, RuntimeError, UserWarning)):
            stream_state(client, cap)
        return
    assert_same(chat_reply(stream_state(client, cap), cap.name), cap, CHAT_KNOWN)


HELPER = [cap for cap in CHAT if cap.host == "openai"]
HELPER_RAISES = {
    # PITFALLS 28: the helper raises on a plain max_tokens reply, losing it.
    "openai/chat-max-tokens-length.sse": openai.LengthFinishReasonError,
}


@pytest.mark.parametrize("cap", params(HELPER))
def test_openai_chat_stream_helper_gets_the_reassembled_reply(
    client: openai.OpenAI, cap: Capture
) -> None:
    def run() -> ChatCompletion:
        with client.chat.completions.stream(model=model_of(cap), messages=MESSAGES) as stream:
            return stream.get_final_completion()

    if cap.name in HELPER_RAISES:
        with pytest.raises(HELPER_RAISES[cap.name]):
            run()
        return
    assert_same(chat_reply(run(), cap.name), cap, CHAT_KNOWN)


# Output items the client acts on (a reply that ends in one stops for the tool's result, or
# for the user's decision on an approval request).
CLIENT_ITEMS = {"function_call", "custom_tool_call", "apply_patch_call", "local_shell_call",
                "shell_call", "computer_call", "mcp_approval_request"}
RESPONSES_STOP = {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}


def responses_reply(response: OpenAIResponse) -> Reply:
    calls = [(item.call_id, item.name, json.loads(item.arguments or "{}"))
             for item in response.output if item.type == "function_call"]
    custom = [(item.call_id, item.name, item.input) for item in response.output
              if item.type == "custom_tool_call"]
    client_run = any(item.type in CLIENT_ITEMS for item in response.output)
    stop: str | None = "tool_use" if client_run else "end_turn"
    if response.status == "incomplete" and response.incomplete_details is not None:
        stop = RESPONSES_STOP.get(response.incomplete_details.reason or "", "max_tokens")
    elif response.status == "failed":
        stop = "error"
    usage = response.usage
    tokens = (usage.input_tokens, usage.output_tokens) if usage is not None else (None, None)
    return Reply(response.output_text, calls + custom, stop, tokens)


RESPONSES_RAISES: dict[str, str] = {
    "openai/responses-error-event-failed.sse":
        "its error event: the SDK's stream raises APIError with the provider's message",
    "xai/responses-incomplete-max-output-tokens.sse":
        "no response.completed (it ends with response.incomplete): get_final_response raises",
}
RESPONSES_KNOWN: dict[str, dict[str, str]] = {}


@pytest.mark.parametrize("cap", params(RESPONSES))
def test_openai_responses_stream_gets_the_reassembled_reply(
    client: openai.OpenAI, cap: Capture
) -> None:
    def run() -> Any:
        with warnings.catch_warnings():
            # Items the SDK's output union does not fit (a newer web_search_call action) are
            # built leniently; dumping them warns, though the values are the wire's.
            warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning)
            with client.responses.stream(model=model_of(cap), input="hi") as stream:
                return stream.get_final_response()

    if cap.name in RESPONSES_RAISES:
        with pytest.raises((openai.APIError, RuntimeError, ValueError)):
            run()
        return
    assert_same(responses_reply(run()), cap, RESPONSES_KNOWN)
