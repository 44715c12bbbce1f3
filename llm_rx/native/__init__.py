"""``to_native(response, provider)``: the body the provider's non-streamed call returns.

Fields the stream carried come back in the provider's own spelling (``system_fingerprint``,
``service_tier``, host extras, ``reasoning_content`` / ``reasoning`` / ``reasoning_details``,
Mistral's array content, Anthropic ``stop_details``). A response from another provider is
re-encoded from its canonical fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..response import Response
from .anthropic import to_anthropic
from .openai_chat import to_openai_chat

__all__ = ["to_native"]

_ENCODERS: dict[str, Callable[[Response], dict[str, Any]]] = {
    "anthropic": to_anthropic,
    "openai-chat": to_openai_chat,
}


def to_native(response: Response, provider: str) -> dict[str, Any]:
    """The non-stream JSON body (a ``dict``) of ``provider`` for ``response``."""
    encoder = _ENCODERS.get(provider)
    if encoder is None:
        raise ValueError(
            f"no native encoder for {provider!r}; available: {', '.join(sorted(_ENCODERS))}"
        )
    return encoder(response)
