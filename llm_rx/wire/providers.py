"""The provider ids, as a type mypy checks: a misspelt provider is caught before it runs.

``ProviderId`` names a wire format the library decodes (and encodes with ``to_native``);
``ProviderAlias`` the older short names still accepted where a stream is read (``"openai"``
for ``openai-chat``, ``"claude"`` for ``anthropic``). This module imports nothing of the
package, so every layer can use the types.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["ALIASES", "PROVIDERS", "ProviderAlias", "ProviderId", "ProviderName", "provider_id"]

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
#: What the functions that read a stream accept: an id or an alias.
ProviderName = ProviderId | ProviderAlias

#: Every provider id, in the order of the type (sorted).
PROVIDERS: Final[tuple[ProviderId, ...]] = get_args(ProviderId)
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
