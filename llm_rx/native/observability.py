"""How each provider is named outside llm-rx: by a price list, and by tracing conventions.

``cost()`` and ``trace()`` are provider-neutral operators; what they need to know about a
provider — which price list entries may hold its models, which name the OpenTelemetry GenAI
semantic conventions give it — lives here, with the other per-provider knowledge.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["price_providers", "priced_extras", "semconv_provider"]

#: The genai-prices provider ids a reply of each wire format is looked up under, in order;
#: ``None`` lets the price list find the model under any provider. The OpenAI chat wire is
#: spoken by many hosts (DeepSeek, Groq, xAI, OpenRouter...): the model name decides there.
_PRICE_PROVIDERS: Final[dict[str, tuple[str | None, ...]]] = {
    "anthropic": ("anthropic",),
    "bedrock-converse": ("aws",),
    "cohere": ("cohere",),
    "gemini": ("google",),
    "gemini-interactions": ("google",),
    "ollama": (),  # a local model: no price list entry
    "openai-chat": ("openai", None),
    "openai-completions": ("openai",),
    "openai-responses": ("openai", None),
}

#: OpenRouter's ``vendor/model`` names are priced on OpenRouter's own list.
_ROUTED: Final[tuple[str | None, ...]] = ("openrouter",)

#: ``gen_ai.provider.name`` (well-known values of the conventions where one fits).
_SEMCONV: Final[dict[str, str]] = {
    "anthropic": "anthropic",
    "bedrock-converse": "aws.bedrock",
    "cohere": "cohere",
    "gemini": "gcp.gemini",
    "gemini-interactions": "gcp.gemini",
    "ollama": "ollama",
    "openai-chat": "openai",
    "openai-completions": "openai",
    "openai-responses": "openai",
}


def price_providers(provider: str, model: str) -> tuple[str | None, ...]:
    """The price list providers to try for ``model`` served over ``provider``'s wire."""
    known = _PRICE_PROVIDERS.get(provider, (None,))
    if "/" in model and None in known:  # (a host that routes to other vendors' models)
        return (*known, *_ROUTED)
    return known


def priced_extras(provider: str, native: dict[str, Any] | None) -> dict[str, int]:
    """What the provider's own usage object reports that a price list bills apart, in
    genai-prices' usage names: Anthropic's web searches, and its cache writes kept an hour
    (``cache_creation.ephemeral_1h_input_tokens``, billed above the 5-minute rate; of the
    compaction steps too, as their other counts are)."""
    if provider != "anthropic" or not isinstance(native, dict):
        return {}
    extras: dict[str, int] = {}
    tools = native.get("server_tool_use")
    searches = _count(tools.get("web_search_requests")) if isinstance(tools, dict) else None
    if searches is not None:
        extras["web_searches"] = searches
    hour = _hour_writes(native)
    iterations = native.get("iterations")
    if isinstance(iterations, list):  # (see ``wire.anthropic_usage``: compaction is billed)
        for step in iterations:
            if isinstance(step, dict) and step.get("type") == "compaction":
                more = _hour_writes(step)
                hour = more if hour is None else hour if more is None else hour + more
    if hour:
        extras["cache_write_1h_tokens"] = hour
    return extras


def _hour_writes(usage: dict[str, Any]) -> int | None:
    """The cache writes kept an hour of an Anthropic usage object (or iteration)."""
    creation = usage.get("cache_creation")
    return _count(creation.get("ephemeral_1h_input_tokens")) if isinstance(
        creation, dict) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def semconv_provider(provider: str) -> str:
    """The ``gen_ai.provider.name`` of a reply decoded as ``provider``."""
    return _SEMCONV.get(provider, provider)
