"""``to_message(response, provider)``: the assistant turn to append to the next request.

The turn is in ``provider``'s *request* shape, every signature byte for byte and the blocks
in their order (a lost or moved signature gets the next request rejected). A reply of
another provider is carried as far as the target has places for it; what it has none for is
left out by the rules of `DROPPED` and reported in ``dropped`` when a list is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, overload

from ...response import ApprovalRequestBlock, Response
from ._drops import DROPPED, MessageDrop, carried
from ._shapes import SHAPES

__all__ = ["DROPPED", "MESSAGE_PROVIDERS", "Decision", "MessageDrop", "to_message"]

#: the user's answer to an approval request: ``True`` (approve), ``False`` (deny), or
#: ``(approve, reason)`` with the reason in words
Decision = bool | tuple[bool, str]

MessageProvider = Literal[
    "anthropic", "bedrock-converse", "gemini", "gemini-interactions", "ollama", "openai-chat",
    "openai-responses",
]
MESSAGE_PROVIDERS: tuple[str, ...] = tuple(sorted(SHAPES))


@overload
def to_message(
    response: Response,
    provider: Literal["openai-responses", "gemini-interactions"],
    *,
    dropped: list[MessageDrop] | None = None,
    approvals: Mapping[str, Decision] | None = None,
) -> list[dict[str, Any]]: ...


@overload
def to_message(
    response: Response,
    provider: Literal[
        "anthropic", "bedrock-converse", "gemini", "ollama", "openai-chat"
    ],
    *,
    dropped: list[MessageDrop] | None = None,
    approvals: Mapping[str, Decision] | None = None,
) -> dict[str, Any]: ...


def to_message(
    response: Response,
    provider: MessageProvider,
    *,
    dropped: list[MessageDrop] | None = None,
    approvals: Mapping[str, Decision] | None = None,
) -> dict[str, Any] | list[dict[str, Any]]:
    """The assistant turn of ``response`` for ``provider``'s next request.

    * ``openai-chat``: a ``ChatCompletionAssistantMessageParam`` (with the host's reasoning
      field where it reads it back: ``reasoning_content``, ``reasoning_details``);
    * ``openai-responses``: a list of input items (``reasoning`` items with their ids and
      ``encrypted_content``, ``message`` and ``function_call`` items), in order;
    * ``anthropic``: a ``MessageParam`` (thinking with its signature, ``redacted_thinking``
      with its data, server-tool blocks verbatim, ``tool_use``);
    * ``gemini``: a ``Content`` (each part with its ``thoughtSignature``);
    * ``gemini-interactions``: a list of steps for a stateless interaction's ``input``
      (``thought`` steps with their signatures, ``model_output``, ``function_call``, built-in
      tool steps verbatim), in order;
    * ``ollama``: a ``Message`` (``thinking``, ``tool_calls``);
    * ``bedrock-converse``: a ``Message`` (``reasoningContent`` with its signature).

    The first choice of an ``n>1`` reply is the turn. The result is the caller's own.

    A reply that stopped to ask (its ``approval_requests``) is continued with the user's
    decisions: ``approvals={request_id: True}`` (or ``False``, or ``(False, "why")``). For
    ``openai-responses`` the turn keeps each ``mcp_approval_request`` item and adds an
    ``mcp_approval_response`` input item per decision (``approval_request_id``, ``approve``,
    ``reason``), in the order of the requests; every other target has no place for a
    request or its decision (reported in ``dropped``: ``approval_request``,
    ``approval_response``).

    Args:
        response: The reply to continue from.
        provider: The provider the next request goes to.
        dropped: A list to append a `MessageDrop` to for each thing left out.
        approvals: The user's decision on each approval request answered now, by the
            request's id (an id the reply does not hold is a `ValueError`).

    Returns:
        The assistant turn (a list of input items for ``openai-responses``, of steps for
            ``gemini-interactions``).
    """
    shape = SHAPES.get(provider)
    if shape is None:
        raise ValueError(
            f"no message shape for {provider!r}; available: {', '.join(MESSAGE_PROVIDERS)}"
        )
    kept, drops = carried(response, provider)
    if dropped is not None:
        dropped.extend(drops)
    message: dict[str, Any] | list[dict[str, Any]] = shape(kept)
    if approvals:
        decided = _decisions(response, approvals, provider)
        if isinstance(message, list) and provider == "openai-responses":
            message += [item for _, item in decided]
        elif dropped is not None:
            why = f"an approval's decision ({provider} has no place for one)"
            dropped += [MessageDrop(index, "approval_response", why) for index, _ in decided]
    return message


def _decisions(response: Response, approvals: Mapping[str, Decision],
               provider: str) -> list[tuple[int, dict[str, Any]]]:
    """Each decision as a Responses ``mcp_approval_response`` input item, beside the index of
    the request it answers, in the order of the requests."""
    asked = {block.id: index for index, block in enumerate(response.content)
             if isinstance(block, ApprovalRequestBlock) and block.id}
    unknown = [key for key in approvals if key not in asked]
    if unknown:
        raise ValueError(f"no approval request {', '.join(map(repr, unknown))} in the reply "
                         f"(it asked: {', '.join(map(repr, asked)) or 'nothing'})")
    out: list[tuple[int, dict[str, Any]]] = []
    for key, index in asked.items():
        if key not in approvals:
            continue
        decision = approvals[key]
        approve, reason = decision if isinstance(decision, tuple) else (decision, None)
        item: dict[str, Any] = {"type": "mcp_approval_response", "approval_request_id": key,
                                "approve": bool(approve)}
        if reason is not None:
            item["reason"] = reason
        out.append((index, item))
    return out
