"""What an assistant turn for provider P cannot carry of another provider's reply.

``DROPPED`` is the encoders' table (``opaque:<kind>``, ``signature``, ``redacted_thinking``,
``citation``, ``raw_arguments``) with what only a request refuses over it: another model's
signature, reasoning where the target needs its own ids or a signature (``thinking``). A
reply from P itself keeps everything its request shape has a place for.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...response import (
    ApprovalRequestBlock,
    Block,
    OpaqueBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from .._tables import DROPPED as ENCODING_DROPPED

__all__ = ["DROPPED", "MessageDrop", "carried"]

#: target -> what its assistant turn cannot carry: ``MessageDrop.what`` -> why. The
#: encoders' rules (:data:`llm_rx.encoders._tables.DROPPED`), with what only a request
#: refuses over them (a stream a client reads can say more than a request may).
DROPPED: dict[str, dict[str, str]] = {
    target: {**ENCODING_DROPPED.get(target, {}), **rules}
    for target, rules in {
        "openai-chat": {
            "signature": "a signature (the chat message has no place for one)",
            "redacted_thinking": "another provider's redacted reasoning",
            "citation": "a citation (annotations are no request field)",
        },
        "openai-responses": {
            "thinking": "another provider's reasoning (a reasoning item needs OpenAI's id)",
            "citation": "another provider's citation",
            "search_source": "a web search's source that is no URL (a request names URLs)",
        },
        "anthropic": {
            "signature": "another model's signature (only Claude's, from Bedrock, is read)",
            "redacted_thinking": "another model's redacted reasoning",
            "thinking": "reasoning left without a signature (Anthropic checks it)",
            "raw_arguments": "(not lost) arguments that are no JSON object go as "
                             '{"_raw_arguments": "..."}',
        },
        "gemini": {
            "signature": "another provider's signature (not a Gemini thoughtSignature)",
        },
        "gemini-interactions": {
            "thinking": "another provider's reasoning (a thought step needs Gemini's "
                        "signature)",
            "raw_arguments": "(not lost) arguments that are no JSON object go as "
                             '{"_raw_arguments": "..."}',
        },
        "ollama": {
            "tool_call_id": "a tool call's id (an Ollama message has none: results name the "
                            "tool)",
        },
        "bedrock-converse": {
            "signature": "another model's signature (only Claude's, from Anthropic, is read)",
            "redacted_thinking": "another model's redacted reasoning",
            "raw_arguments": "(not lost) arguments that are no JSON object go as "
                             '{"_raw_arguments": "..."}',
        },
    }.items()
}

# (source, target) pairs whose reasoning signatures are the same model's, read by both
# (Claude's, on Anthropic and on Bedrock); any other provider's signature is refused.
_SHARED_SIGNATURES = {("anthropic", "bedrock-converse"), ("bedrock-converse", "anthropic")}


class MessageDrop(NamedTuple):
    """Something of block ``index`` (of ``response.content``) the turn does not carry."""

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    what: str
    why: str


def _why(target: str, what: str) -> str:
    table = DROPPED[target]
    return table.get(what) or table.get(what.split(":", 1)[0] + ":*", "")


def _block(block: Block, source: str, target: str, drop: list[str]) -> Block | None:
    same = source == target
    if isinstance(block, ApprovalRequestBlock):  # (only the Responses input has a place)
        if target != "openai-responses":
            drop.append("approval_request")
            return None
        return block
    if isinstance(block, OpaqueBlock):
        if not same or target == "ollama":
            drop.append(f"opaque:{block.kind}")
            return None
        return _search_sources(block, drop) if target == "openai-responses" else block
    if isinstance(block, ThinkingBlock):
        return _thinking(block, source, target, drop)
    update: dict[str, Any] = {}
    signature = getattr(block, "signature", None)
    if signature is not None and not same:
        drop.append("signature")
        update["signature"] = None
    if isinstance(block, TextBlock) and block.citations and (
        not same or target == "openai-chat"
    ):
        drop.append("citation")
        update["citations"] = []
    if isinstance(block, ToolCallBlock) and block.id and target == "ollama":
        drop.append("tool_call_id")
    if (
        isinstance(block, ToolCallBlock)
        and not isinstance(block.arguments, dict)
        and target not in ("openai-chat", "openai-responses")
    ):
        drop.append("raw_arguments")
    return block.model_copy(update=update) if update else block


def _search_sources(block: OpaqueBlock, drop: list[str]) -> OpaqueBlock:
    """A Responses ``web_search_call`` without the sources a request cannot name (a reply
    lists ``{"type": "api", "name": ...}`` ones too; a request type knows URL ones only)."""
    raw = block.raw if isinstance(block.raw, dict) else {}
    action = raw.get("action")
    sources = action.get("sources") if isinstance(action, dict) else None
    if block.kind != "web_search_call" or not isinstance(action, dict) or not isinstance(
        sources, list
    ):
        return block
    urls = [source for source in sources
            if isinstance(source, dict) and source.get("type") == "url"]
    if len(urls) == len(sources):
        return block
    drop.append("search_source")
    return block.model_copy(update={"raw": {**raw, "action": {**action, "sources": urls}}})


def _thinking(block: ThinkingBlock, source: str, target: str, drop: list[str]) -> Block | None:
    if source == target:
        return block
    if target in ("openai-responses", "gemini-interactions"):
        drop.append("thinking")
        return None
    shared = (source, target) in _SHARED_SIGNATURES
    if block.redacted and not shared:
        drop.append("redacted_thinking")
        return None
    if block.signature is not None and not shared:
        drop.append("signature")
        block = block.model_copy(update={"signature": None})
    if target == "anthropic" and block.signature is None:
        drop.append("thinking")
        return None
    return block


def carried(response: Response, target: str) -> tuple[Response, list[MessageDrop]]:
    """``response`` with only what ``target``'s assistant turn can carry, and what was left
    out (by the rules of :data:`DROPPED`)."""
    content: list[Block] = []
    drops: list[MessageDrop] = []
    for index, block in enumerate(response.content):
        what: list[str] = []
        kept = _block(block, response.provider, target, what)
        drops += [MessageDrop(index, item, _why(target, item)) for item in what]
        if kept is not None:
            content.append(kept)
    return response.model_copy(update={"content": content, "choices": []}), drops
