"""Each target's official SDK reading a translated stream with its own parser and accumulator.

The bytes are split here naively (SSE events on blank lines, NDJSON on newlines, event-stream
messages by botocore's own parser), never through llm-rx. Each oracle gives a :class:`Read`:
what an application using that SDK gets out of the stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import ollama
from anthropic.lib.streaming._messages import accumulate_event
from botocore.eventstream import EventStreamBuffer
from cohere.v2.types.v2chat_stream_response import V2ChatStreamResponse
from google.genai import interactions as genai_interactions
from google.genai import types as genai
from openai import omit
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

__all__ = ["ORACLES", "Read", "sse_payloads"]


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments  # (a custom tool's input is free text)

_RESPONSE_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
_COHERE_EVENT: TypeAdapter[Any] = TypeAdapter(V2ChatStreamResponse)
_INTERACTION_EVENT: TypeAdapter[Any] = TypeAdapter(genai_interactions.InteractionSSEEvent)


@dataclass
class Read:
    text: str = ""
    thinking: str = ""
    calls: list[tuple[str | None, str | None, Any]] = field(default_factory=list)
    stop: Any = None
    usage: dict[str, Any] = field(default_factory=dict)


def sse_payloads(data: bytes) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    for block in data.decode().replace("\r\n", "\n").split("\n\n"):
        event, lines = None, []
        for line in block.split("\n"):
            if line.startswith("data:"):
                lines.append(line[5:].removeprefix(" "))
            elif line.startswith("event:"):
                event = line[6:].strip()
        if lines:
            out.append((event, "\n".join(lines)))
    return out


def openai_chat(data: bytes) -> Read:
    state = ChatCompletionStreamState()
    for _, payload in sse_payloads(data):
        if payload == "[DONE]":
            break
        state.handle_chunk(ChatCompletionChunk.model_validate(json.loads(payload)))
    choice = state.current_completion_snapshot.choices[0]
    message = choice.message
    extra = message.model_extra or {}
    calls = [(call.id, call.function.name, _parsed(call.function.arguments))
             for call in message.tool_calls or ()]
    usage = state.current_completion_snapshot.usage
    thinking = extra.get("reasoning_content") or extra.get("reasoning") or ""
    return Read(message.content or "", str(thinking), calls,
                choice.finish_reason, usage.model_dump(exclude_none=True) if usage else {})


def openai_responses(data: bytes) -> Read:
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    final = None
    for _, payload in sse_payloads(data):
        event = _RESPONSE_EVENT.validate_python(json.loads(payload))
        state.handle_event(event)
        if event.type in ("response.completed", "response.incomplete"):
            final = event.response
    assert final is not None
    read = Read(stop=final.status, usage=final.usage.model_dump() if final.usage else {})
    for item in final.output:
        if item.type == "message":
            read.text += "".join(part.text for part in item.content if part.type == "output_text")
        elif item.type == "reasoning":
            read.thinking += "".join(part.text for part in item.content or ())
            read.thinking += "".join(part.text for part in item.summary)
        elif item.type == "function_call":
            read.calls.append((item.call_id, item.name, _parsed(item.arguments)))
    return read


def anthropic(data: bytes) -> Read:
    snapshot: Any = None
    bufs: dict[int, bytes] = {}
    for event, payload in sse_payloads(data):
        if event == "ping":
            continue
        snapshot = accumulate_event(event=json.loads(payload), current_snapshot=snapshot,
                                    json_bufs=bufs)
    read = Read(stop=snapshot.stop_reason, usage=snapshot.usage.model_dump(exclude_none=True))
    for block in snapshot.content:
        if block.type == "text":
            read.text += block.text
        elif block.type == "thinking":
            read.thinking += block.thinking
        elif block.type == "tool_use":
            read.calls.append((block.id, block.name, block.input))
    return read


def _gemini_chunks(data: bytes) -> list[Any]:
    if data.lstrip().startswith(b"["):
        return list(json.loads(data))
    return [json.loads(payload) for _, payload in sse_payloads(data)]


def gemini(data: bytes) -> Read:
    read = Read()
    for raw in _gemini_chunks(data):
        chunk = genai.GenerateContentResponse.model_validate(raw)
        if chunk.usage_metadata is not None:
            read.usage = chunk.usage_metadata.model_dump(exclude_none=True)
        for candidate in chunk.candidates or ():
            if candidate.finish_reason is not None:
                read.stop = candidate.finish_reason.value
            for part in (candidate.content.parts if candidate.content else None) or ():
                if part.function_call is not None:
                    call = part.function_call
                    read.calls.append((call.id, call.name, call.args))
                elif part.text is not None:
                    if part.thought:
                        read.thinking += part.text
                    else:
                        read.text += part.text
    return read


def gemini_interactions(data: bytes) -> Read:
    """google-genai's interaction event types, each event read as a type it knows (the SDK
    has no accumulator: the steps are added up as its docs show)."""
    read = Read()
    calls: dict[int, list[Any]] = {}
    for _, payload in sse_payloads(data):
        if payload == "[DONE]":
            continue
        event = _INTERACTION_EVENT.validate_json(payload)
        for part in (event, getattr(event, "step", None), getattr(event, "delta", None)):
            assert not getattr(part, "is_unknown", False), payload
        if event.event_type == "step.start" and event.step.type == "function_call":
            calls[event.index] = [event.step.id, event.step.name, ""]
        elif event.event_type == "step.delta":
            delta = event.delta
            if delta.type == "text":
                read.text += delta.text
            elif delta.type == "thought_summary" and delta.content is not None:
                read.thinking += delta.content.text
            elif delta.type == "arguments_delta":
                calls[event.index][2] += delta.arguments or ""
        elif event.event_type == "interaction.completed":
            read.stop = event.interaction.status
            usage = event.interaction.usage
            read.usage = usage.model_dump(exclude_none=True) if usage is not None else {}
    read.calls = [(id_, name, _parsed(args) if args else {})
                  for id_, name, args in calls.values()]
    return read


def ollama_native(data: bytes) -> Read:
    read = Read()
    for line in data.splitlines():
        body = json.loads(line)
        if "response" in body:
            chunk: Any = ollama.GenerateResponse.model_validate(body)
            read.text += chunk.response or ""
            read.thinking += chunk.thinking or ""
        else:
            chunk = ollama.ChatResponse.model_validate(body)
            read.text += chunk.message.content or ""
            read.thinking += chunk.message.thinking or ""
            for call in chunk.message.tool_calls or ():
                read.calls.append((None, call.function.name, dict(call.function.arguments)))
        if chunk.done:
            read.stop = chunk.done_reason
            read.usage = {key: value for key in ("prompt_eval_count", "eval_count")
                          if (value := getattr(chunk, key)) is not None}
    return read


def bedrock(data: bytes) -> Read:
    buffer = EventStreamBuffer()
    buffer.add_data(data)  # (botocore checks both CRCs of every message)
    read = Read()
    calls: dict[int, list[Any]] = {}
    for message in buffer:
        headers = message.headers
        assert headers[":message-type"] == "event", headers
        payload = json.loads(message.payload)
        kind = headers[":event-type"]
        tool = payload.get("start", {}).get("toolUse") if kind == "contentBlockStart" else None
        if tool is not None and tool.get("type") in (None, "tool_use"):
            calls[payload["contentBlockIndex"]] = [tool["toolUseId"], tool["name"], ""]
        elif kind == "contentBlockDelta":
            delta = payload["delta"]
            read.text += delta.get("text", "")
            read.thinking += delta.get("reasoningContent", {}).get("text", "")
            if "toolUse" in delta:
                calls[payload["contentBlockIndex"]][2] += delta["toolUse"]["input"]
        elif kind == "messageStop":
            read.stop = payload.get("stopReason")
        elif kind == "metadata":
            read.usage = payload.get("usage", {})
    read.calls = [(i, n, json.loads(a) if a else {}) for i, n, a in calls.values()]
    return read


def cohere(data: bytes) -> Read:
    """The Cohere SDK's event models, validated (its client only logs a frame it cannot
    build and goes on), folded as an application does: the SDK has no accumulator."""
    read = Read()
    kinds: dict[int, str] = {}
    calls: dict[int, list[Any]] = {}
    for name, payload in sse_payloads(data):
        event = _COHERE_EVENT.validate_python(json.loads(payload))
        assert name == event.type, (name, event.type)  # (the SSE event names the payload)
        delta = getattr(event, "delta", None)
        message = getattr(delta, "message", None)
        if event.type == "content-start":
            kinds[event.index] = message.content.type
        if event.type in ("content-start", "content-delta"):
            content = message.content
            if kinds[event.index] == "thinking":
                read.thinking += content.thinking or ""
            else:
                read.text += content.text or ""
        elif event.type == "tool-plan-delta":
            read.thinking += message.tool_plan or ""
        elif event.type == "tool-call-start":
            call = message.tool_calls
            calls[event.index] = [call.id, call.function.name, call.function.arguments or ""]
        elif event.type == "tool-call-delta":
            calls[event.index][2] += message.tool_calls.function.arguments or ""
        elif event.type == "message-end":
            read.stop = event.delta.finish_reason
            usage = event.delta.usage
            read.usage = usage.model_dump(exclude_none=True) if usage else {}
    read.calls = [(i, n, _parsed(a)) for i, n, a in calls.values()]
    return read


ORACLES = {
    "anthropic": anthropic,
    "bedrock-converse": bedrock,
    "cohere": cohere,
    "gemini": gemini,
    "gemini-json-array": gemini,
    "gemini-interactions": gemini_interactions,
    "ollama": ollama_native,
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
}
