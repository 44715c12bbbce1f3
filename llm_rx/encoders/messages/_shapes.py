"""Each provider's assistant turn, taken from its non-stream body (``to_native``): the body
already spells every block, signature and dialect field as the provider reads them back;
what only a response has (ids of the reply, statuses, annotations) is left out here."""

from __future__ import annotations

from typing import Any

from ...native import to_native
from ...response import Response

__all__ = ["SHAPES"]

# The chat message's request fields, and the dialects' reasoning fields a host reads back
# (DeepSeek ``reasoning_content``, OpenRouter ``reasoning`` / ``reasoning_details``).
_CHAT_FIELDS = ("role", "content", "refusal", "name", "function_call", "tool_calls",
                "reasoning_content", "reasoning", "reasoning_details")
_OLLAMA_FIELDS = ("role", "content", "thinking", "images", "tool_name", "tool_calls")


def _kept(message: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {key: message[key] for key in fields if message.get(key) is not None}


def _openai_chat(response: Response) -> dict[str, Any]:
    message = to_native(response, "openai-chat")["choices"][0]["message"]
    out = _kept(message, _CHAT_FIELDS)
    audio = message.get("audio")
    if isinstance(audio, dict) and "id" in audio:  # (a request names the audio by its id)
        out["audio"] = {"id": audio["id"]}
    return out


def _openai_responses(response: Response) -> list[dict[str, Any]]:
    same = response.provider == "openai-responses"
    items: list[dict[str, Any]] = []
    for item in to_native(response, "openai-responses")["output"]:
        if same:
            if item.get("type") == "custom_tool_call":  # (its input item has no status)
                item = {key: value for key, value in item.items() if key != "status"}
            items.append(item)
        elif item.get("type") == "message":  # (no OpenAI item id: the plain assistant form)
            text = "".join(
                part.get("text") or part.get("refusal") or "" for part in item["content"]
            )
            items.append({"type": "message", "role": "assistant", "content": text})
        elif item.get("type") == "mcp_approval_request":  # (its id is what a decision names)
            items.append(item)
        else:
            items.append({key: value for key, value in item.items() if key != "id"})
    return items


def _anthropic(response: Response) -> dict[str, Any]:
    return {"role": "assistant", "content": to_native(response, "anthropic")["content"]}


def _gemini(response: Response) -> dict[str, Any]:
    candidates = to_native(response, "gemini").get("candidates") or [{}]
    content = candidates[0].get("content") or {}
    return {"role": "model", "parts": list(content.get("parts") or [])}


def _gemini_interactions(response: Response) -> list[dict[str, Any]]:
    return list(to_native(response, "gemini-interactions")["steps"])


def _ollama(response: Response) -> dict[str, Any]:
    body = to_native(response, "ollama")
    message = body.get("message")
    if not isinstance(message, dict):  # (an /api/generate reply: its text as the turn)
        message = {"role": "assistant", "content": body.get("response", ""),
                   "thinking": body.get("thinking")}
    out = _kept(message, _OLLAMA_FIELDS)
    if "tool_calls" in out:  # (an Ollama tool call has no id: a result names the tool)
        out["tool_calls"] = [{key: value for key, value in call.items() if key != "id"}
                             for call in out["tool_calls"]]
    return out


def _bedrock(response: Response) -> dict[str, Any]:
    message: dict[str, Any] = to_native(response, "bedrock-converse")["output"]["message"]
    for block in message["content"]:
        tool = block.get("toolUse")
        if isinstance(tool, dict) and tool.get("type") not in (None, "server_tool_use"):
            del tool["type"]  # (the reply says "tool_use"; a request knows no such type)
    return message


SHAPES: dict[str, Any] = {
    "anthropic": _anthropic,
    "bedrock-converse": _bedrock,
    "gemini": _gemini,
    "gemini-interactions": _gemini_interactions,
    "ollama": _ollama,
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
}
