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
"""

from __future__ import annotations

from typing import Any

from ..native._responses_resource import resource_usage
from ..response import StopReason, Usage

__all__ = [
    "DROPPED",
    "SPEC",
    "STOP",
    "WAITS",
    "ag_ui_usage",
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
    "openai-chat": {
        "end_turn": "stop", "stop_sequence": "stop", "refusal": "stop", "pause_turn": "stop",
        "max_tokens": "length", "tool_use": "tool_calls", "content_filter": "content_filter",
    },
    "openai-responses": {  # (the response's status; ``incomplete_details.reason`` for these)
        "max_tokens": "max_output_tokens", "content_filter": "content_filter",
    },
    "anthropic": {
        "end_turn": "end_turn", "max_tokens": "max_tokens", "tool_use": "tool_use",
        "stop_sequence": "stop_sequence", "refusal": "refusal", "pause_turn": "pause_turn",
        "content_filter": "refusal",
    },
    "gemini": {
        "end_turn": "STOP", "tool_use": "STOP", "stop_sequence": "STOP", "pause_turn": "STOP",
        "max_tokens": "MAX_TOKENS", "content_filter": "SAFETY", "refusal": "SAFETY",
    },
    "ollama": {
        "end_turn": "stop", "tool_use": "stop", "stop_sequence": "stop", "refusal": "stop",
        "pause_turn": "stop", "content_filter": "stop", "max_tokens": "length",
    },
    "bedrock-converse": {
        "end_turn": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens",
        "stop_sequence": "stop_sequence", "content_filter": "content_filtered",
        "refusal": "end_turn", "pause_turn": "end_turn",
    },
    "cohere": {
        "end_turn": "COMPLETE", "tool_use": "TOOL_CALL", "max_tokens": "MAX_TOKENS",
        "stop_sequence": "STOP_SEQUENCE", "refusal": "COMPLETE", "pause_turn": "COMPLETE",
        "content_filter": "COMPLETE",
    },
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
        "opaque:*": "another provider's server-side block or frame",
        "signature": "a signature on a block that is no reasoning (Gemini's on a call)",
        "citation": "a citation that names no URL",
    },
    "openai-responses": {
        "opaque:*": "another provider's block or frame",
        "signature": "a signature on a block that is no reasoning",
        "citation": "a citation that names no URL",
        "logprobs": "log-probabilities of no text part",
        "choice": "a block of another choice than 0 (an n>1 reply: choice 0 is the reply)",
    },
    "anthropic": {
        "opaque:*": "another provider's block or frame",
        "signature": "a signature on a block that is no reasoning",
        "citation": "another provider's citation (no Anthropic citation type)",
        "logprobs": "log-probabilities",
        "choice": "a block of another choice than 0 (an n>1 reply: choice 0 is the reply)",
    },
    "gemini": {
        "opaque:*": "another provider's block or frame",
        "redacted_thinking": "redacted reasoning",
        "citation": "a citation",
        "logprobs": "log-probabilities",
        "raw_arguments": "(not lost) arguments that are no JSON object go as "
                         '{"_raw_arguments": "..."}',
    },
    "ollama": {
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
        "opaque:*": "another provider's block or frame",
        "signature": "a signature on a block that is no reasoning",
        "redacted_thinking": "redacted data that is no base64 (redactedContent is bytes)",
        "citation": "another provider's citation",
        "logprobs": "log-probabilities",
        "choice": "a block of another choice than 0 (an n>1 reply: choice 0 is the reply)",
    },
    "cohere": {
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


def _put(out: dict[str, Any], key: str, value: int | None) -> None:
    if value is not None:
        out[key] = value


def openai_chat_usage(usage: Usage) -> dict[str, Any] | None:
    """The usage chunk's object, required whole (``prompt_tokens``, ``completion_tokens``,
    ``total_tokens``): written only when the input and output counts are known."""
    if usage.input_tokens is None or usage.output_tokens is None:
        return None
    out: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens is not None or usage.cache_write_tokens is not None:
        details: dict[str, Any] = {}
        _put(details, "cached_tokens", usage.cache_read_tokens)
        _put(details, "cache_write_tokens", usage.cache_write_tokens)
        out["prompt_tokens_details"] = details
    if usage.reasoning_tokens is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return out


def responses_usage(usage: Usage) -> dict[str, Any] | None:
    """Responses' usage object is required whole: written only when the input and output
    counts are known (its detail counts, required too, are then ``0`` when unreported)."""
    return resource_usage(usage)


def anthropic_usage(usage: Usage) -> dict[str, Any]:
    """Anthropic's input split back: uncached + cache read + cache write (its input_tokens
    is the uncached part only)."""
    out: dict[str, Any] = {}
    if usage.input_tokens is not None:
        out["input_tokens"] = (
            usage.input_tokens - (usage.cache_read_tokens or 0) - (usage.cache_write_tokens or 0)
        )
    _put(out, "cache_creation_input_tokens", usage.cache_write_tokens)
    _put(out, "cache_read_input_tokens", usage.cache_read_tokens)
    _put(out, "output_tokens", usage.output_tokens)
    return out


def gemini_usage(usage: Usage) -> dict[str, Any] | None:
    if not usage.reported:
        return None
    out: dict[str, Any] = {}
    _put(out, "promptTokenCount", usage.input_tokens)
    _put(out, "cachedContentTokenCount", usage.cache_read_tokens)
    if usage.output_tokens is not None:
        out["candidatesTokenCount"] = usage.output_tokens - (usage.reasoning_tokens or 0)
    _put(out, "thoughtsTokenCount", usage.reasoning_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        out["totalTokenCount"] = usage.input_tokens + usage.output_tokens
    return out


def ollama_usage(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _put(out, "prompt_eval_count", usage.input_tokens)
    _put(out, "eval_count", usage.output_tokens)
    return out


def bedrock_usage(usage: Usage) -> dict[str, Any] | None:
    """ConverseStream's ``inputTokens`` is the uncached part (cache counts beside it)."""
    if not usage.reported:
        return None
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    out: dict[str, Any] = {}
    if usage.input_tokens is not None:
        out["inputTokens"] = usage.input_tokens - (read or 0) - (write or 0)
    _put(out, "outputTokens", usage.output_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        out["totalTokens"] = usage.input_tokens + usage.output_tokens
    _put(out, "cacheReadInputTokens", read)
    _put(out, "cacheWriteInputTokens", write)
    return out


def cohere_usage(usage: Usage) -> dict[str, Any] | None:
    """Cohere's ``tokens`` (every token; its input includes the cache read, as the canonical
    count does), ``cached_tokens`` the cache read; ``billed_units`` is Cohere's own (fewer
    than the tokens), never made up from them."""
    if not usage.reported:
        return None
    tokens: dict[str, Any] = {}
    _put(tokens, "input_tokens", usage.input_tokens)
    _put(tokens, "output_tokens", usage.output_tokens)
    out: dict[str, Any] = {"tokens": tokens} if tokens else {}
    _put(out, "cached_tokens", usage.cache_read_tokens)
    return out


def vercel_ui_usage(usage: Usage) -> dict[str, Any] | None:
    """The AI SDK's ``LanguageModelUsage`` names (totals; cache and reasoning counts are
    parts of them), only the counts reported."""
    if not usage.reported:
        return None
    out: dict[str, Any] = {}
    _put(out, "inputTokens", usage.input_tokens)
    _put(out, "outputTokens", usage.output_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        out["totalTokens"] = usage.input_tokens + usage.output_tokens
    _put(out, "reasoningTokens", usage.reasoning_tokens)
    _put(out, "cachedInputTokens", usage.cache_read_tokens)
    details: dict[str, Any] = {}
    _put(details, "cacheReadTokens", usage.cache_read_tokens)
    _put(details, "cacheWriteTokens", usage.cache_write_tokens)
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
    _put(out, "inputTokens", usage.input_tokens)
    _put(out, "outputTokens", usage.output_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        out["totalTokens"] = usage.input_tokens + usage.output_tokens
    _put(out, "reasoningTokens", usage.reasoning_tokens)
    _put(out, "cachedInputTokens", usage.cache_read_tokens)
    _put(out, "cacheWriteInputTokens", usage.cache_write_tokens)
    return out
