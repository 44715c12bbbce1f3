"""Each provider's model list: which request asks for one, and the body it answers with.

::

    GET /v1/models                 openai-chat (the default of the three on this path)
    GET /v1/models + anthropic-version header         anthropic
    GET /v1/models + X-Fern-SDK-Name: cohere          cohere
    GET /v1beta/models (/v1alpha; /v1 from google-genai) gemini
    GET /api/tags                                     ollama
    GET /foundation-models                            bedrock-converse (control plane)

and ``GET <list path>/{id}`` for one model, where the provider has it. The ids are the
emulator's: every one of them can be asked for on any endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..wire.providers import ProviderId

__all__ = ["find_model_list", "model_list_body", "model_body"]

_CREATED = 1_700_000_000  # (a fixed time: the same body on every run)
_CREATED_AT = "2023-11-14T22:13:20Z"


def find_model_list(path: str, headers: Mapping[str, str]) -> tuple[ProviderId, str | None] | None:
    """The provider whose model list (or one model of it: the id) ``path`` asks for."""
    path = path.rstrip("/")
    for prefix, provider in (("/v1/models", None), ("/v1beta/models", "gemini"),
                             ("/v1alpha/models", "gemini"), ("/api/tags", "ollama"),
                             ("/foundation-models", "bedrock-converse")):
        if path == prefix or path.startswith(prefix + "/"):
            model = path[len(prefix) + 1 :] or None
            if provider is None:
                provider = ("anthropic" if "anthropic-version" in headers else
                            "gemini" if "x-goog-api-client" in headers else
                            "cohere" if headers.get("x-fern-sdk-name") == "cohere" else
                            "openai-chat")
            if provider == "ollama" and model is not None:
                return None
            return provider, model  # type: ignore[return-value]
    return None


def model_body(provider: ProviderId, model: str) -> dict[str, Any]:
    """One model's entry in ``provider``'s list (also the body of ``GET .../{id}``)."""
    if provider == "anthropic":
        return {"type": "model", "id": model, "display_name": model, "created_at": _CREATED_AT}
    if provider == "gemini":
        return {"name": f"models/{model}", "displayName": model, "version": "llm-rx",
                "supportedGenerationMethods": ["generateContent", "streamGenerateContent"]}
    if provider == "cohere":
        return {"name": model, "endpoints": ["chat"], "finetuned": False, "features": []}
    if provider == "ollama":
        return {"name": model, "model": model, "modified_at": _CREATED_AT, "size": 0,
                "digest": "0" * 64, "details": {"format": "gguf", "family": "llm-rx"}}
    if provider == "bedrock-converse":
        return {"modelId": model, "modelName": model, "providerName": "llm-rx",
                "modelArn": f"arn:aws:bedrock:us-east-1::foundation-model/{model}",
                "inputModalities": ["TEXT"], "outputModalities": ["TEXT"],
                "responseStreamingSupported": True, "inferenceTypesSupported": ["ON_DEMAND"]}
    return {"id": model, "object": "model", "created": _CREATED, "owned_by": "llm-rx"}


def model_list_body(provider: ProviderId, models: Sequence[str]) -> dict[str, Any]:
    """The body of ``provider``'s model list holding ``models`` (one page: all of them)."""
    entries = [model_body(provider, model) for model in models]
    if provider == "anthropic":
        return {"data": entries, "has_more": False,
                "first_id": models[0] if models else None,
                "last_id": models[-1] if models else None}
    if provider in ("gemini", "cohere", "ollama"):
        return {"models": entries}
    if provider == "bedrock-converse":
        return {"modelSummaries": entries}
    return {"object": "list", "data": entries}
