"""The mapping tables of every encoder, in one place (reproduced in docs/how-to/translation.md).

* ``STOP``: the canonical stop reason -> the target's own stop value. A reply from the
  target's own stream gives back the provider's original value instead (``MessageStop.native``).
* ``*_usage``: canonical usage -> the target's usage object, with only the counts that were
  reported (a count nobody reported is left out, never written as ``0``; a usage object the
  target requires whole is written only once its required counts are known). A reply from the
  target's own stream gives back the provider's usage object verbatim.
* ``DROPPED``: what each target has no place for; each such thing is reported as a
  :class:`~llm_rx.events.Dropped` and not written.
* ``WAITS``: where a target's grammar makes the encoder hold something back.
* ``SPEC``: where a target follows its provider, not the open specification of its wire
  (the provider's name -> the specification's name of the same thing).

A provider wire's stop table and usage function are its native body's too: they are written
once, in :mod:`llm_rx.native._tables` (the Responses usage object in
:mod:`llm_rx.native._responses_resource`), and given here under the names the encoders use;
only the browser targets' (``vercel-ui``, ``ag-ui``), which have no body, are written here.
"""

from __future__ import annotations

from typing import Any

from ..native._responses_resource import resource_usage as responses_usage
from ..native._tables import STOP as _PROVIDER_STOP
from ..native._tables import (
    anthropic_body_usage,
    anthropic_usage,
    bedrock_usage,
    cohere_usage,
    gemini_usage,
    ollama_usage,
    openai_chat_usage,
    put_count,
)
from ..response import StopReason, Usage

__all__ = [
    "DROPPED",
    "SPEC",
    "STOP",
    "WAITS",
    "ag_ui_usage",
    "anthropic_body_usage",
    "anthropic_usage",
    "bedrock_usage",
    "cohere_usage",
    "gemini_usage",
    "ollama_usage",
    "openai_chat_usage",
    "responses_usage",
    "vercel_ui_usage",
]

STOP: dict[str, dict[StopReason, str]] = {
    **_PROVIDER_STOP,
    "vercel-ui": {  # (the finish chunk's finishReason; the stop reason is in its metadata)
        "end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
        "tool_use": "tool-calls", "content_filter": "content-filter",
        "refusal": "content-filter", "pause_turn": "other",
    },
}

#: target -> what it cannot carry: ``Dropped.what`` -> when. Everywhere, ``opaque:<kind>`` is
#: a block or frame of another provider the target has no type for (server tools and their
#: results, images, grounding), and ``logprobs`` are dropped where the table lists them.
DROPPED: dict[str, dict[str, str]] = {
    "openai-chat": {
        "custom:*": "an application's event (`Custom`): no provider wire has a place for one",
        "approval_request": "an approval request (no place to ask the user before a tool "
                            "runs)",
        "opaque:*": "another provider's server-side block or frame",
        "signature": "a signature on a block that is no reasoning (Gemini's on a call)",
        "citation": "a citation that names no URL",
    },
    "openai-responses": {
        "custom:*": "an application's event (`Custom`): no provider wire has a place for one",
        "opaque:*": "another provider's block or frame",
        "signature": "a signature on a block that is no reasoning",
        "citation": "a citation that names no URL",
        "logprobs": "log-probabilities of no text part",
        "choice": "a block of another choice than 0 (an n>1 reply: choice 0 is the reply)",
    },
    "anthropic": {
        "custom:*": "an application's event (`Custom`): no provider wire has a place for one",
        "approval_request": "an approval request (no place to ask the user before a tool "
                            "runs)",
        "opaque:*": "another provider's block or frame",
        "signature": "a signature on a block that is no reasoning",
        "citation": "another provider's citation (no Anthropic citation type)",
        "logprobs": "log-probabilities",
        "choice": "a block of another choice than 0 (an n>1 reply: choice 0 is the reply)",
    },
    "gemini": {
        "custom:*": "an application's event (`Custom`): no provider wire has a place for one",
        "approval_request": "an approval request (no place to ask the user before a tool "
                            "runs)",
        "opaque:*": "another provider's block or frame",
        "redacted_thinking": "redacted reasoning",
        "citation": "a citation",
        "logprobs": "log-probabilities",
        "raw_arguments": "(not lost) arguments that are no JSON object go as "
                         '{"_raw_arguments": "..."}',
    },
    "gemini-interactions": {
        "custom:*": "an application's event (`Custom`): no provider wire has a place for one",
        "approval_request": "an approval request (no place to ask the user before a tool "
                            "runs)",
        "opaque:*": "another provider's block or frame",
        "signature": "another provider's signature (no Gemini thought signature)",
        "redacted_thinking": "another provider's redacted reasoning",
        "citation": "a citation that names no URL",
        "logprobs": "log-probabilities",
        "choice": "a block of another choice than 0 (an n>1 reply: choice 0 is the reply)",
    },
    "ollama": {
        "custom:*": "an application's event (`Custom`): no provider wire has a place for one",
        "approval_request": "an approval request (no place to ask the user before a tool "
                            "runs)",
        "opaque:*": "any server-side block or frame",
        "signature": "a signature",
        "redacted_thinking": "redacted reasoning",
        "citation": "a citation",
        "logprobs": "another provider's log-probabilities",
        "raw_arguments": "(not lost) arguments that are no JSON object go as "
                         '{"_raw_arguments": "..."}',
        "choice": "a block of another choice than 0 (an n>1 reply: choice 0 is the reply)",
    },
    "bedrock-converse": {
        "custom:*": "an application's event (`Custom`): no provider wire has a place for one",
        "approval_request": "an approval request (no place to ask the user before a tool "
                            "runs)",
        "opaque:*": "another provider's block or frame",
        "signature": "a signature on a block that is no reasoning",
        "redacted_thinking": "redacted data that is no base64 (redactedContent is bytes)",
        "citation": "another provider's citation",
        "logprobs": "log-probabilities",
        "choice": "a block of another choice than 0 (an n>1 reply: choice 0 is the reply)",
    },
    "cohere": {
        "custom:*": "an application's event (`Custom`): no provider wire has a place for one",
        "approval_request": "an approval request (no place to ask the user before a tool "
                            "runs)",
        "opaque:*": "another provider's block or frame",
        "signature": "a signature",
        "redacted_thinking": "redacted reasoning",
        "citation": "another provider's citation",
        "logprobs": "log-probabilities",
        "choice": "a block of another choice than 0 (an n>1 reply: choice 0 is the reply)",
    },
    "vercel-ui": {
        "opaque:*": "a block or frame that is no tool (compaction, a fallback notice), or a "
                    "server tool's result whose call is not in the reply",
        "citation": "a citation that names no URL and no title",
        "logprobs": "log-probabilities",
        "choice": "every choice but the first (a UI message is one choice)",
        "signature": "a signature that arrives after its block ended",
    },
    "ag-ui": {
        "opaque:*": "a block or frame that is no tool (compaction, a fallback notice), or a "
                    "server tool's result whose call is not in the reply",
        "citation": "a citation (AG-UI has no place for sources)",
        "logprobs": "log-probabilities",
        "choice": "every choice but the first (a run's reply is one message)",
        "signature": "a signature that arrives after its block ended",
    },
}

for _target, _table in DROPPED.items():  # (the targets whose stream carries one response)
    if _target not in ("anthropic", "openai-responses", "vercel-ui", "ag-ui"):
        _table["response"] = ("each response after the first on the same stream (one is "
                              "written: split them with responses() and write each)")

#: target -> where its grammar holds something back (everything else goes out at once).
WAITS: dict[str, str] = {
    "all": "the opening frame waits for the message-level metadata that follows the start "
           "(MessageStart; the first content event sends it); the stop and the final usage "
           "wait for the reply's end, so usage that arrives after the stop is in them and "
           "a cut source gets no terminal frame; a tool call's argument fragments that "
           "arrive before its id and name wait in the decoder until they come",
    "openai-chat": "the finish chunks wait for the reply's end (a finish_reason for every "
                   "choice reads as a finished reply)",
    "openai-responses": "the .done events of a part and an item wait for its end (they "
                        "repeat its whole text); an item of several parts ends when a block "
                        "of another item starts (another provider's texts and refusals in a "
                        "row are the parts of one message)",
    "anthropic": "message_delta (stop reason, final usage) waits for the reply's end; a "
                 "redacted_thinking block waits for its data",
    "gemini": "a functionCall waits for its block's end (its args are whole); from Gemini "
              "itself a block's first part waits for the next event (a signature that "
              "follows goes on it); the finishReason chunk waits for the reply's end",
    "gemini-interactions": "interaction.completed (status, usage) and [DONE] wait for the "
                           "reply's end; every step goes out as it arrives",
    "ollama": "a tool call waits for its block's end (whole arguments); the done line "
              "waits for the reply's end",
    "bedrock-converse": "messageStop and metadata wait for the reply's end",
    "cohere": "message-end (finish_reason, usage) waits for the reply's end",
    "vercel-ui": "tool-input-available waits for its call's end (its input is parsed "
                 "whole; a signature on a call goes with it); finish waits for the reply's "
                 "end, and sources a reply lists on its message (grounding) go just before",
    "ag-ui": "RUN_FINISHED (outcome, usage) waits for the reply's end; a call's closing "
             "arguments ({} for none, the end of free text) wait for its end",
}

#: target -> where it follows its provider rather than the open specification of its wire
#: (the Open Responses specification for ``openai-responses``): the provider's event name
#: -> the specification's event of the same fields. Everything else validates against the
#: specification as written (``tests/open_responses.py``).
SPEC: dict[str, dict[str, str]] = {
    "openai-responses": {
        "response.reasoning_text.delta": "response.reasoning.delta",
        "response.reasoning_text.done": "response.reasoning.done",
    },
}


def vercel_ui_usage(usage: Usage) -> dict[str, Any] | None:
    """The AI SDK's ``LanguageModelUsage`` names (totals; cache and reasoning counts are
    parts of them), only the counts reported."""
    if not usage.reported:
        return None
    out: dict[str, Any] = {}
    put_count(out, "inputTokens", usage.input_tokens)
    put_count(out, "outputTokens", usage.output_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        out["totalTokens"] = usage.input_tokens + usage.output_tokens
    put_count(out, "reasoningTokens", usage.reasoning_tokens)
    put_count(out, "cachedInputTokens", usage.cache_read_tokens)
    details: dict[str, Any] = {}
    put_count(details, "cacheReadTokens", usage.cache_read_tokens)
    put_count(details, "cacheWriteTokens", usage.cache_write_tokens)
    if details:
        out["inputTokenDetails"] = details
    return out


def ag_ui_usage(usage: Usage, provider: str | None, model: str | None) -> dict[str, Any] | None:
    """AG-UI's ``TokenUsage``: the same accounting as llm-rx's (totals, with the cache and
    reasoning counts parts of them), labelled with the provider and the served model."""
    if not usage.reported:
        return None
    out: dict[str, Any] = {}
    if provider:
        out["provider"] = provider
    if model:
        out["model"] = model
    put_count(out, "inputTokens", usage.input_tokens)
    put_count(out, "outputTokens", usage.output_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        out["totalTokens"] = usage.input_tokens + usage.output_tokens
    put_count(out, "reasoningTokens", usage.reasoning_tokens)
    put_count(out, "cachedInputTokens", usage.cache_read_tokens)
    put_count(out, "cacheWriteInputTokens", usage.cache_write_tokens)
    return out
