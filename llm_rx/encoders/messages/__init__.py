"""``to_message(response, provider)``: the assistant turn to append to the next request.

The turn is in ``provider``'s *request* shape, every signature byte for byte and the blocks
in their order (a lost or moved signature gets the next request rejected). A reply of
another provider is carried as far as the target has places for it; what it has none for is
left out by the rules of `DROPPED` and reported in ``dropped`` when a list is given.
"""

from __future__ import annotations

from typing import Any, Literal, overload

from ...response import Response
from ._drops import DROPPED, MessageDrop, carried
from ._shapes import SHAPES

__all__ = ["DROPPED", "MESSAGE_PROVIDERS", "MessageDrop", "to_message"]

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
) -> list[dict[str, Any]]: ...


@overload
def to_message(
    response: Response,
    provider: Literal[
        "anthropic", "bedrock-converse", "gemini", "ollama", "openai-chat"
    ],
    *,
    dropped: list[MessageDrop] | None = None,
) -> dict[str, Any]: ...


def to_message(
    response: Response,
    provider: MessageProvider,
    *,
    dropped: list[MessageDrop] | None = None,
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

    Args:
        response: The reply to continue from.
        provider: The provider the next request goes to.
        dropped: A list to append a `MessageDrop` to for each thing left out.

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
    return message
