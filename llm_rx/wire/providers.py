"""The provider ids, as a type mypy checks: a misspelt provider is caught before it runs.

``ProviderId`` names a wire format the library decodes (and encodes with ``to_native``);
``UIStreamId`` a browser protocol it reads and writes but that has no non-stream body
(``ag-ui``, ``vercel-ui``); ``ProviderAlias`` the older short names still accepted where a
stream is read (``"openai"`` for ``openai-chat``, ``"claude"`` for ``anthropic``). This
module imports nothing of the package, so every layer can use the types.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "ALIASES",
    "PROVIDERS",
    "UI_STREAMS",
    "ProviderAlias",
    "ProviderId",
    "ProviderName",
    "StreamId",
    "UIStreamId",
    "provider_id",
    "stream_id",
]

ProviderId = Literal[
    "anthropic",
    "bedrock-converse",
    "cohere",
    "gemini",
    "gemini-interactions",
    "ollama",
    "openai-chat",
    "openai-completions",
    "openai-responses",
]
ProviderAlias = Literal["claude", "openai"]
#: The browser protocols: streams llm-rx reads and writes, with no non-stream body.
UIStreamId = Literal["ag-ui", "vercel-ui"]
#: Every stream a decoder reads: a provider's wire or a browser protocol.
StreamId = ProviderId | UIStreamId
#: What the functions that read a stream accept: an id, an alias or a browser protocol.
ProviderName = ProviderId | ProviderAlias | UIStreamId

#: Every provider id, in the order of the type (sorted).
PROVIDERS: Final[tuple[ProviderId, ...]] = get_args(ProviderId)
#: The browser protocols' ids (read by a decoder, written by an encoder; no ``to_native``).
UI_STREAMS: Final[tuple[UIStreamId, ...]] = get_args(UIStreamId)
ALIASES: Final[dict[ProviderAlias, ProviderId]] = {"openai": "openai-chat", "claude": "anthropic"}


def provider_id(name: str) -> ProviderId:
    """The provider id ``name`` is (or is an alias of); ``ValueError`` if none: the check a
    name read at run time (a command-line option, a stored reply's ``provider``) goes through.
    """
    name = ALIASES.get(name, name)  # type: ignore[call-overload]
    for known in PROVIDERS:
        if known == name:
            return known
    raise ValueError(f"unknown provider {name!r}; known: {', '.join(PROVIDERS)}")


def stream_id(name: str) -> StreamId:
    """The stream ``name`` names: a browser protocol's id (`UI_STREAMS`), or what
    `provider_id` gives; ``ValueError`` if none."""
    for known in UI_STREAMS:
        if known == name:
            return known
    try:
        return provider_id(name)
    except ValueError:
        raise ValueError(f"unknown provider {name!r}; known: "
                         f"{', '.join(sorted((*PROVIDERS, *UI_STREAMS)))}") from None
