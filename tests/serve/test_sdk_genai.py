"""The official ``google-genai`` client against the emulator: ``generate_content_stream``
(which asks for ``?alt=sse``) for every Gemini capture, SSE and JSON-array recordings alike
(the emulator re-frames the arrays), over a real socket. Each gets the reply
``llm_rx.reassemble(file)`` gives.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google import genai
from google.genai import types
from pydantic import ValidationError

from llm_rx.serve import EmulatorThread
from tests.captures import CAPTURES, Capture

from .replies import Reply, assert_same, model_of, params

pytestmark = pytest.mark.oracle

GEMINI = [cap for cap in CAPTURES if cap.provider == "gemini"]
FINISH = {"STOP": "end_turn", "MAX_TOKENS": "max_tokens", "SAFETY": "content_filter"}


@pytest.fixture(scope="module")
def client(llm_rx_server: EmulatorThread) -> Iterator[genai.Client]:
    with genai.Client(api_key="test", http_options={"base_url": llm_rx_server.url}) as client:
        yield client


def chunks_reply(chunks: list[types.GenerateContentResponse]) -> Reply:
    text: list[str] = []
    calls: list[tuple[str | None, str, Any]] = []
    finish: str | None = None
    usage: tuple[int | None, int | None] = (None, None)
    for chunk in chunks:
        for candidate in chunk.candidates or ():
            finish = candidate.finish_reason.value if candidate.finish_reason else finish
            for part in (candidate.content.parts if candidate.content else None) or ():
                if part.text is not None and not part.thought:
                    text.append(part.text)
                if part.function_call is not None:
                    call = part.function_call
                    calls.append((call.id, call.name or "", call.args or {}))
        meta = chunk.usage_metadata
        if meta is not None and meta.prompt_token_count is not None:
            output = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
            # (Google bills the prompt tokens of its tools' results as input: PITFALLS 45)
            prompt = meta.prompt_token_count + (meta.tool_use_prompt_token_count or 0)
            usage = (prompt, output if meta.candidates_token_count is not None
                     or meta.thoughts_token_count is not None else None)
    stop = FINISH.get(finish or "", finish)
    if stop == "end_turn" and calls:
        stop = "tool_use"
    return Reply("".join(text), calls, stop, usage)


KNOWN: dict[str, dict[str, str]] = {
    # google-genai has no accumulator: a call streamed as partialArgs comes as one
    # functionCall part per chunk (a name, then bare fragments), never one call.
    "gemini/sse-streaming-function-call-args-partialargs.sse": {
        "tool_calls": "one part per chunk, not assembled"},
    "gemini/sse-streaming-args-no-args-call.sse": {
        "tool_calls": "one part per chunk, not assembled"},
    # A blocked prompt has no candidate, so no finish reason: the SDK has no stop to give
    # (the block reason is in its prompt_feedback).
    "gemini/sse-prompt-blocked.sse": {"stop_reason": "no candidate, no finish reason"},
}
# Recorded with enum-encoding=int. What google-genai does with integer enums depends on its
# version and on pydantic's: it takes them by name only and raises a ValidationError naming
# the enum (google-genai 3.6 with pydantic 2.13), fails upper-casing the integer (an
# AttributeError, with pydantic 2.14), or accepts them. This checks llm-rx (the emulator
# serves the recording as it is), not the SDK: either the SDK refuses the integers, or it
# reads the same reply llm-rx reassembles.
ENUM_INT = {"gemini/json-array-enum-int-after-tool.json", "gemini/json-array-enum-int-story.json"}


@pytest.mark.parametrize("cap", params(GEMINI))
def test_genai_generate_content_stream_gets_the_reassembled_reply(
    client: genai.Client, cap: Capture
) -> None:
    try:
        chunks = list(client.models.generate_content_stream(model=model_of(cap), contents="hi"))
    except (ValidationError, AttributeError) as error:
        refused = "enum" in str(error) or "'int' object has no attribute" in str(error)
        if cap.name not in ENUM_INT or not refused:
            raise
        return
    assert chunks
    assert_same(chunks_reply(chunks), cap, KNOWN)


def test_genai_non_stream_body_validates_as_generate_content_response(
    client: genai.Client,
) -> None:
    reply = client.models.generate_content(model="gemini__sse-thought-parts", contents="hi")
    assert isinstance(reply, types.GenerateContentResponse)
    cap = next(cap for cap in GEMINI if cap.name == "gemini/sse-thought-parts.sse")
    assert_same(chunks_reply([reply]), cap, {})
