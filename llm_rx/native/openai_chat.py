"""A ``Response`` as an OpenAI ``chat.completion`` body (and its hosts' dialects)."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..response import (
    Block,
    OpaqueBlock,
    RefusalBlock,
    Response,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from ._shared import choice_bodies, url_citation, usage_body
from ._tables import STOP, openai_chat_body_usage

__all__ = ["to_openai_chat"]

_FINISH = STOP["openai-chat"]


def _thinking(message: dict[str, Any], blocks: list[ThinkingBlock]) -> None:
    if not blocks:
        return
    meta = blocks[0].meta or {}
    field = meta.get("field")
    if not isinstance(field, str):  # (the dialect's spelling, as its decoder noted it)
        field = "reasoning_content"
    text = "".join(block.text for block in blocks)
    if field == "reasoning_details":
        details = []
        for position, block in enumerate(blocks):
            bmeta = block.meta or {}
            kind = bmeta.get("detail_type") or (
                "reasoning.encrypted" if block.redacted else "reasoning.text"
            )
            item: dict[str, Any] = {"type": kind}
            if kind == "reasoning.encrypted":
                item["data"] = block.signature
            elif kind == "reasoning.summary":
                item["summary"] = block.text
            else:
                item["text"] = block.text
                if block.signature is not None:
                    item["signature"] = block.signature
            if "id" in bmeta:
                item["id"] = bmeta["id"]
            item["format"] = bmeta.get("format")
            item["index"] = position
            details.append(item)
        if meta.get("plain"):
            message["reasoning"] = text
        message["reasoning_details"] = details
    elif field != "content_parts":
        message[field] = text


def _message(blocks: list[Block]) -> dict[str, Any]:
    texts = [block for block in blocks if isinstance(block, TextBlock)]
    thinking = [block for block in blocks if isinstance(block, ThinkingBlock)]
    refusals = [block for block in blocks if isinstance(block, RefusalBlock)]
    calls = [block for block in blocks if isinstance(block, ToolCallBlock)]
    message: dict[str, Any] = {"role": "assistant"}
    text = "".join(block.text for block in texts)
    parts_style = any((block.meta or {}).get("field") == "content_parts" for block in thinking)
    if parts_style:  # Mistral: thinking and text as typed parts of content
        parts: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": [{"type": "text", "text": block.text}]}
            for block in thinking
        ]
        if text:
            parts.append({"type": "text", "text": text})
        message["content"] = parts
    else:
        message["content"] = text if texts and (text or not calls) else None
    message["refusal"] = "".join(block.text for block in refusals) if refusals else None
    _thinking(message, thinking)
    legacy = [call for call in calls if (call.meta or {}).get("type") == "function_call"]
    if legacy:  # the legacy ``function_call`` comes back as it came
        message["function_call"] = {"name": legacy[0].name or "",
                                    "arguments": legacy[0].raw_arguments}
        calls = [call for call in calls if call not in legacy]
    if calls:
        message["tool_calls"] = [_tool_call(call) for call in calls]
    citations = [citation for block in texts for citation in block.citations]
    if citations:
        message["annotations"] = citations
    opaque = [block for block in blocks if isinstance(block, OpaqueBlock)]
    for block in opaque:  # a delta field nobody models, given back under its own name
        if block.kind.startswith("delta.") and isinstance(block.raw, dict):
            key = block.kind[len("delta."):]
            value = block.raw.get(key)
            previous = message.get(key)
            if isinstance(previous, list) and isinstance(value, list):
                message[key] = _merge_indexed(previous, value)
            else:
                message[key] = value
    return message


def _tool_call(call: ToolCallBlock) -> dict[str, Any]:
    """A ``tool_calls`` entry: a custom tool's free-text input as a ``custom`` call, and a
    call that got no arguments as ``"{}"`` (what the non-stream API gives for it)."""
    kind = (call.meta or {}).get("type", "function")
    if kind == "custom":
        return {"id": call.id or "", "type": "custom",
                "custom": {"name": call.name or "", "input": call.raw_arguments}}
    arguments = call.raw_arguments or ("{}" if call.arguments == {} else "")
    return {"id": call.id or "", "type": kind,
            "function": {"name": call.name or "", "arguments": arguments}}


def _foreign(block: Block) -> Block:
    """Another provider's block without its spelling notes; what it means in chat terms
    stays: a Responses custom tool call stays a custom call, a citation becomes a
    ``url_citation`` (one that names no URL has no place in a chat completion)."""
    meta = None
    if isinstance(block, ToolCallBlock):
        item = (block.meta or {}).get("item")
        if isinstance(item, dict) and item.get("type") == "custom_tool_call":
            meta = {"type": "custom"}
    update: dict[str, Any] = {"meta": meta}
    if isinstance(block, TextBlock) and block.citations:
        cited = (url_citation(citation) for citation in block.citations)
        update["citations"] = [citation for citation in cited if citation is not None]
    return block.model_copy(update=update)


def _merge_indexed(previous: list[Any], update: list[Any]) -> list[Any]:
    """Later list items with the ``index`` of an earlier one replace it (a server tool is
    announced, then repeated with its output); others are appended."""
    merged = list(previous)
    positions = {
        key: position
        for position, item in enumerate(merged)
        if (key := _index_of(item)) is not None
    }
    for item in update:
        key = _index_of(item)
        if key is not None and key in positions:
            merged[positions[key]] = item
        else:
            if key is not None:
                positions[key] = len(merged)
            merged.append(item)
    return merged


def _index_of(item: Any) -> str | int | float | None:
    """A list item's ``index``, when it has one that can key it (a JSON scalar)."""
    key = item.get("index") if isinstance(item, dict) else None
    return key if isinstance(key, (str, int, float)) else None


def _logprobs(logprobs: dict[str, list[Any]] | None) -> dict[str, Any] | None:
    if not logprobs:
        return None
    return {"content": logprobs.get("content"), "refusal": logprobs.get("refusal")}


def _choice(
    index: int,
    blocks: list[Block],
    reason: StopReason | None,
    native: Any,
    logprobs: dict[str, list[Any]] | None,
    extra: dict[str, Any],
    same_provider: bool,
) -> dict[str, Any]:
    if not same_provider:  # another provider's spelling notes mean nothing here
        blocks = [_foreign(block) for block in blocks]
    out: dict[str, Any] = {
        "index": index,
        "message": _message(blocks),
        "logprobs": _logprobs(logprobs),
        "finish_reason": _finish(reason, native, same_provider),
    }
    if same_provider:
        for key, value in extra.items():
            out.setdefault(key, value)
    return out


def _finish(reason: StopReason | None, native: Any, same_provider: bool) -> Any:
    if same_provider and isinstance(native, str):
        return native
    return _FINISH.get(reason) if reason is not None else None


def _deepseek(response: Response) -> bool:
    """Whether the reply came from DeepSeek's own API: its usage's cache counts, or its own
    model ids (``deepseek-chat``, ``deepseek-reasoner``; other hosts spell them otherwise)."""
    usage = response.usage.native
    if isinstance(usage, dict) and "prompt_cache_hit_tokens" in usage:
        return True
    return (response.model or "").startswith("deepseek-")


def to_openai_chat(response: Response) -> dict[str, Any]:
    """The ``chat.completion`` body; ``n>1`` replies give every choice."""
    same = response.provider == "openai-chat"
    extra = dict(response.extra) if same else {}
    created = extra.pop("created", 0)
    body: dict[str, Any] = {
        "id": response.id or "",
        "object": "chat.completion",
        "created": created,
        "model": response.model or "",
    }
    body["choices"] = choice_bodies(response, partial(_choice, same_provider=same))
    if same and _deepseek(response):
        for choice in body["choices"]:
            calls = choice["message"].get("tool_calls")
            if calls:  # (DeepSeek's own body numbers its calls, as its stream does)
                choice["message"]["tool_calls"] = [
                    {"index": position, **call} for position, call in enumerate(calls)
                ]
    usage = usage_body(response.usage, same, openai_chat_body_usage)
    if usage is not None:
        body["usage"] = usage
    x_groq = extra.get("x_groq")
    if isinstance(x_groq, dict) and "usage_breakdown" in x_groq:
        body.setdefault("usage_breakdown", x_groq["usage_breakdown"])  # Groq's non-stream place
    for key, value in extra.items():
        body.setdefault(key, value)
    return body
