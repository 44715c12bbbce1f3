"""``to_native(response, provider)``: the body the provider's non-streamed call returns.

Fields the stream carried come back in the provider's own spelling (``system_fingerprint``,
``service_tier``, host extras, ``reasoning_content`` / ``reasoning`` / ``reasoning_details``,
Mistral's array content, Anthropic ``stop_details``). A response from another provider is
re-encoded from its canonical fields.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..response import Response
from ..wire.providers import ProviderId
from .anthropic import to_anthropic
from .bedrock import to_bedrock
from .cohere import to_cohere
from .gemini import to_gemini
from .gemini_interactions import to_gemini_interactions
from .ollama import to_ollama
from .openai_chat import to_openai_chat
from .openai_completions import to_openai_completions
from .openai_responses import to_openai_responses

__all__ = ["ENCODERS", "to_native"]

ENCODERS: dict[ProviderId, Callable[[Response], dict[str, Any]]] = {
    "anthropic": to_anthropic,
    "bedrock-converse": to_bedrock,
    "cohere": to_cohere,
    "gemini": to_gemini,
    "gemini-interactions": to_gemini_interactions,
    "ollama": to_ollama,
    "openai-chat": to_openai_chat,
    "openai-completions": to_openai_completions,
    "openai-responses": to_openai_responses,
}


def to_native(response: Response, provider: ProviderId) -> dict[str, Any]:
    """The non-stream JSON body (a ``dict``) of ``provider`` for ``response``.

    The body is the caller's own: nothing in it is shared with the (frozen) ``response``.

    Args:
        response: Any `Response` (from any provider, or read back from JSON).
        provider: The provider whose non-stream body to give.

    Returns:
        The body, as the provider's own non-stream endpoint returns it.
    """
    encoder = ENCODERS.get(provider)
    if encoder is None:
        raise ValueError(
            f"no native encoder for {provider!r}; available: {', '.join(sorted(ENCODERS))}"
        )
    return copy.deepcopy(encoder(response))
