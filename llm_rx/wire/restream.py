"""A provider's non-stream JSON body re-framed as that provider's own stream.

``from_native`` reads a non-stream body by re-framing it as the stream the same reply would
have come as, and decoding that with the provider's own decoder: the decoders stay the one
place that knows what a provider's fields mean, and invariant 4 (the stream reassembles to
the non-stream response) holds by construction for everything both shapes carry.

Each re-framing is the smallest stream its decoder reads as the whole reply: Gemini's body is
one stream chunk, Ollama's is the final NDJSON line; an OpenAI chat completion becomes one
chunk per choice (the message as the delta) and a usage chunk; an Anthropic message becomes
``message_start`` with the content given whole, ``message_delta`` and ``message_stop``; a
Responses ``response`` becomes ``response.created``, one ``output_item.done`` per item and
the terminal event its status names; a Bedrock ``Converse`` body becomes the event-stream
messages of ``ConverseStream`` (a ``citationsContent`` block as its text deltas and one
``citation`` delta per citation, as the stream gives cited text); a legacy
``text_completion`` is one chunk of its stream; a Cohere v2 chat body becomes
``message-start``, its tool plan, content, tool calls and citations, each started whole,
and ``message-end``; a Gemini interaction becomes ``interaction.created``, each step given
whole in its ``step.start`` (and its ``step.stop``), and ``interaction.completed`` with
the status and usage.

A body that is not a finished reply (`llm_rx.wire.finished.unfinished`: a Responses status
``queued``, ``in_progress``, ``cancelled`` or one nobody knows; an Anthropic, Bedrock or
Cohere body without its stop field) is re-framed without the frames that end its stream
(``response.completed``, ``message_delta`` and ``message_stop``, ``messageStop``,
``message-end``): its decoder reads it as a cut reply, never a complete one, and
`llm_rx.wire.finished.SoFar` ends that reading with what the body says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from .eventstream import encode_message
from .finished import unfinished
from .nonstream import nonstream_provider

__all__ = ["RESTREAMERS", "nonstream_provider", "restream"]


def _sse(frames: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    return b"".join(
        (b"event: %s\n" % name.encode() if name else b"") + b"data: " + orjson.dumps(frame)
        + b"\n\n"
        for name, frame in frames
    )


def _openai_chat(body: dict[str, Any]) -> bytes:
    top = {key: value for key, value in body.items() if key not in ("choices", "usage")}
    top["object"] = "chat.completion.chunk"
    choices = []
    for choice in body.get("choices") or ():
        choice = dict(choice)
        delta = dict(choice.pop("message", None) or {})
        calls = delta.get("tool_calls")
        if isinstance(calls, list):  # (a chunk's calls are keyed by their index)
            delta["tool_calls"] = [
                dict(call, index=n) if isinstance(call, dict) else call
                for n, call in enumerate(calls)
            ]
        choices.append({"index": choice.pop("index", 0), "delta": delta, **choice})
    frames: list[tuple[str | None, dict[str, Any]]] = [(None, {**top, "choices": choices})]
    if "usage" in body:
        frames.append((None, {**top, "choices": [], "usage": body["usage"]}))
    return _sse(frames) + b"data: [DONE]\n\n"


def _anthropic(body: dict[str, Any]) -> bytes:
    message = dict(body)  # (its content, given whole, is read as blocks that start and stop)
    if unfinished(body, "anthropic") is not None:  # (no stop: the stream is cut after it)
        return _sse([("message_start", {"type": "message_start", "message": message})])
    delta = {
        "stop_reason": message.pop("stop_reason", None),
        "stop_sequence": message.pop("stop_sequence", None),
    }
    if "stop_details" in message:
        delta["stop_details"] = message.pop("stop_details")
    return _sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("message_delta", {"type": "message_delta", "delta": delta}),
        ("message_stop", {"type": "message_stop"}),
    ])


_RESPONSES_END = {"incomplete": "response.incomplete", "failed": "response.failed"}


def _openai_responses(body: dict[str, Any]) -> bytes:
    ended = unfinished(body, "openai-responses") is None
    created = {**body, "output": [], "usage": None}
    if ended or "status" not in body:  # (one that did not end keeps its own status: no
        created["status"] = "in_progress"  # frame after this one says it)
    frames: list[tuple[str | None, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": created})
    ]
    for position, item in enumerate(body.get("output") or ()):
        done = {"type": "response.output_item.done", "output_index": position, "item": item}
        frames.append(("response.output_item.done", done))
    if ended:
        end = _RESPONSES_END.get(str(body.get("status")), "response.completed")
        frames.append((end, {"type": end, "response": body}))
    return _sse(frames)


def _gemini(body: dict[str, Any]) -> bytes:
    return _sse([(None, body)])  # (a GenerateContentResponse is a stream chunk already)


def _gemini_interactions(body: dict[str, Any]) -> bytes:
    ended = unfinished(body, "gemini-interactions") is None
    head = {key: value for key, value in body.items() if key not in ("steps", "usage")}
    created = {**head, "status": "in_progress"}
    frames: list[tuple[str | None, dict[str, Any]]] = [
        ("interaction.created", {"interaction": created, "event_type": "interaction.created"})
    ]
    for position, step in enumerate(body.get("steps") or ()):
        frames.append(("step.start", {"index": position, "step": step,
                                      "event_type": "step.start"}))
        frames.append(("step.stop", {"index": position, "event_type": "step.stop"}))
    if ended:
        end = {**head, **({"usage": body["usage"]} if "usage" in body else {})}
        frames.append(("interaction.completed",
                       {"interaction": end, "event_type": "interaction.completed"}))
    return _sse(frames) + (b"event: done\ndata: [DONE]\n\n" if ended else b"")


def _ollama(body: dict[str, Any]) -> bytes:
    return orjson.dumps(body) + b"\n"  # (the final line of a stream, with the whole message)


_EVENT_HEADERS = {":content-type": "application/json", ":message-type": "event"}


def _cited(value: dict[str, Any]) -> bool:
    """Whether a ``citationsContent`` block has the model's shape: ``content``, text parts,
    and ``citations``, objects (another is given whole, as an opaque block)."""
    content, citations = value.get("content") or [], value.get("citations") or []
    return (isinstance(content, list) and isinstance(citations, list)
            and all(isinstance(part, dict) and isinstance(part.get("text"), str)
                    for part in content)
            and all(isinstance(citation, dict) for citation in citations))


def _bedrock_block(position: int, block: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    at = {"contentBlockIndex": position}
    member, value = next(iter(block.items())) if block else ("", None)
    events: list[tuple[str, dict[str, Any]]] = []
    if member == "text":
        events.append(("contentBlockDelta", {**at, "delta": {"text": value}}))
    elif member == "toolUse" and isinstance(value, dict):
        start = {key: field for key, field in value.items() if key != "input"}
        arguments = orjson.dumps(value.get("input", {})).decode()
        events.append(("contentBlockStart", {**at, "start": {"toolUse": start}}))
        events.append(("contentBlockDelta", {**at, "delta": {"toolUse": {"input": arguments}}}))
    elif member == "reasoningContent" and isinstance(value, dict):
        text = value.get("reasoningText")
        if isinstance(text, dict):
            parts = [{"text": text.get("text", "")}]
            if "signature" in text:
                parts.append({"signature": text["signature"]})
        else:
            parts = [{"redactedContent": value.get("redactedContent", "")}]
        events += [("contentBlockDelta", {**at, "delta": {"reasoningContent": part}})
                   for part in parts]
    elif member == "citationsContent" and isinstance(value, dict) and _cited(value):
        # (cited text streams as its text deltas, then one citation delta per citation)
        events += [("contentBlockDelta", {**at, "delta": {"text": part["text"]}})
                   for part in value.get("content") or ()]
        events += [("contentBlockDelta", {**at, "delta": {"citation": citation}})
                   for citation in value.get("citations") or ()]
    else:  # (a block ConverseStream gives whole: an image, a server tool's)
        events.append(("contentBlockStart", {**at, "start": block}))
    events.append(("contentBlockStop", at))
    return events


def _bedrock(body: dict[str, Any]) -> bytes:
    output = body.get("output")
    message = output.get("message") if isinstance(output, dict) else None
    message = message if isinstance(message, dict) else {}
    events: list[tuple[str, dict[str, Any]]] = [
        ("messageStart", {"role": message.get("role", "assistant")})
    ]
    for position, block in enumerate(message.get("content") or ()):
        events += _bedrock_block(position, block if isinstance(block, dict) else {})
    ended = unfinished(body, "bedrock-converse") is None
    stop = {"stopReason": body.get("stopReason")}
    if "additionalModelResponseFields" in body:
        stop["additionalModelResponseFields"] = body["additionalModelResponseFields"]
    if ended:  # (else no messageStop: the stream is cut; its fields go with the metadata)
        events.append(("messageStop", stop))
    metadata: dict[str, Any] = {
        key: body[key] for key in ("usage", "metrics", "trace") if key in body
    }
    if not ended and "additionalModelResponseFields" in stop:
        metadata["additionalModelResponseFields"] = stop["additionalModelResponseFields"]
    if metadata:
        events.append(("metadata", metadata))
    return b"".join(
        encode_message({":event-type": name, **_EVENT_HEADERS}, orjson.dumps(payload))
        for name, payload in events
    )


def _openai_completions(body: dict[str, Any]) -> bytes:
    return _sse([(None, body)]) + b"data: [DONE]\n\n"  # (a chunk has the body's shape)


def _cohere(body: dict[str, Any]) -> bytes:
    message = body.get("message")
    message = message if isinstance(message, dict) else {}
    frames: list[tuple[str | None, dict[str, Any]]] = [("message-start", {
        "id": body.get("id"), "type": "message-start",
        "delta": {"message": {"role": message.get("role", "assistant")}},
    })]

    def add(kind: str, index: int | None, field: str, value: Any) -> None:
        frame: dict[str, Any] = {"type": kind}
        if index is not None:
            frame["index"] = index
        frame["delta"] = {"message": {field: value}}
        frames.append((kind, frame))

    if message.get("tool_plan"):
        add("tool-plan-delta", None, "tool_plan", message["tool_plan"])
    for index, item in enumerate(message.get("content") or ()):
        add("content-start", index, "content", item)
        frames.append(("content-end", {"type": "content-end", "index": index}))
    for index, call in enumerate(message.get("tool_calls") or ()):
        add("tool-call-start", index, "tool_calls", call)
        frames.append(("tool-call-end", {"type": "tool-call-end", "index": index}))
    for index, citation in enumerate(message.get("citations") or ()):
        add("citation-start", index, "citations", citation)
        frames.append(("citation-end", {"type": "citation-end", "index": index}))
    if unfinished(body, "cohere") is not None:  # (no finish_reason: cut before message-end)
        return _sse(frames)
    end: dict[str, Any] = {"finish_reason": body.get("finish_reason")}
    if "usage" in body:
        end["usage"] = body["usage"]
    frames.append(("message-end", {"type": "message-end", "delta": end}))
    return _sse(frames)


#: provider id -> its non-stream body re-framed as its stream
RESTREAMERS: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "anthropic": _anthropic,
    "bedrock-converse": _bedrock,
    "cohere": _cohere,
    "gemini": _gemini,
    "gemini-interactions": _gemini_interactions,
    "ollama": _ollama,
    "openai-chat": _openai_chat,
    "openai-completions": _openai_completions,
    "openai-responses": _openai_responses,
}


def restream(body: dict[str, Any], provider: str) -> bytes:
    """``body`` (``provider``'s non-stream JSON) as the bytes of ``provider``'s stream."""
    return RESTREAMERS[provider](body)
