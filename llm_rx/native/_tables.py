"""The stop and usage tables of every provider wire, written once: the non-stream bodies
(``to_native``) and the stream encoders (:mod:`llm_rx.encoders._tables`, which reproduces
them in the translation guide) both read them.

* ``STOP``: the canonical stop reason of a reply that ended -> the provider's own stop
  value, the same in its stream's terminal frame and in its body.
* ``BODY_STOP``: where a body's table is more than ``STOP`` (a value only a body writes).
* ``*_usage``: canonical usage -> the provider's usage object, with only the counts that
  were reported (a count nobody reported is left out, never written as ``0``); ``None``
  when there is nothing to write.
* ``*_body_usage``: where a body's usage object is not the stream's, the body's, built
  from the stream's with the difference said once.

The Responses usage object is :func:`._responses_resource.resource_usage`, beside the
``response`` object that holds it in a stream's snapshots and a body alike.
"""

from __future__ import annotations

from typing import Any

from ..response import StopReason, Usage

__all__ = [
    "ANTHROPIC_CITATIONS",
    "BODY_STOP",
    "STOP",
    "anthropic_body_usage",
    "anthropic_usage",
    "bedrock_usage",
    "cohere_usage",
    "gemini_body_usage",
    "gemini_interactions_usage",
    "gemini_usage",
    "interactions_status",
    "ollama_usage",
    "openai_chat_body_usage",
    "openai_chat_usage",
    "openai_completions_body_usage",
    "put_count",
]

#: The citation types an Anthropic text block carries (another provider's citation objects,
#: Bedrock's or OpenAI's, are no Anthropic citation: left out of what is written for it).
ANTHROPIC_CITATIONS = frozenset({
    "char_location", "page_location", "content_block_location", "web_search_result_location",
    "search_result_location",
})

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
    "gemini-interactions": {  # (the interaction's status)
        "end_turn": "completed", "stop_sequence": "completed", "refusal": "completed",
        "content_filter": "completed", "tool_use": "requires_action",
        "max_tokens": "incomplete", "pause_turn": "requires_continuation",
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
}

#: What a body's stop table has beyond ``STOP``. A reply that failed (``error``, or
#: ``interrupted`` when cut or stopped) still has a body, and Gemini and Cohere have a stop
#: value for it; a stream never writes one: its failure is its own error frame (or, cut, no
#: terminal frame at all), and no ``MessageStop`` carries those two reasons. A legacy
#: completion has no tool calls, so a stop after calls is a plain ``stop`` there.
BODY_STOP: dict[str, dict[StopReason, str]] = {
    "gemini": {**STOP["gemini"], "error": "OTHER"},
    "cohere": {**STOP["cohere"], "error": "ERROR", "interrupted": "ERROR"},
    "openai-completions": {**STOP["openai-chat"], "tool_use": "stop"},
}


def put_count(out: dict[str, Any], key: str, value: int | None) -> None:
    """``out[key] = value`` for a count that was reported (``None`` is not ``0``)."""
    if value is not None:
        out[key] = value


# -- OpenAI chat (and the legacy completions' body) ---------------------------------------


def _openai_counts(prompt: int, completion: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _openai_details(out: dict[str, Any], usage: Usage, *, cache_write: bool) -> dict[str, Any]:
    read = usage.cache_read_tokens
    write = usage.cache_write_tokens if cache_write else None
    if read is not None or write is not None:
        details: dict[str, Any] = {}
        put_count(details, "cached_tokens", read)
        put_count(details, "cache_write_tokens", write)
        out["prompt_tokens_details"] = details
    if usage.reasoning_tokens is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return out


def openai_chat_usage(usage: Usage) -> dict[str, Any] | None:
    """The usage chunk's object, required whole (``prompt_tokens``, ``completion_tokens``,
    ``total_tokens``): written only when the input and output counts are known."""
    if usage.input_tokens is None or usage.output_tokens is None:
        return None
    counts = _openai_counts(usage.input_tokens, usage.output_tokens)
    return _openai_details(counts, usage, cache_write=True)


def openai_chat_body_usage(usage: Usage) -> dict[str, Any]:
    """The ``chat.completion`` body's usage, unlike the stream's chunk written as soon as any
    count was reported: its three counts are required, so an unreported input or output
    count is ``0`` there; and the body has no ``cache_write_tokens`` (the chunk has)."""
    counts = _openai_counts(usage.input_tokens or 0, usage.output_tokens or 0)
    return _openai_details(counts, usage, cache_write=False)


def openai_completions_body_usage(usage: Usage) -> dict[str, Any]:
    """The ``text_completion`` body's usage: the chat body's three counts, no details."""
    return _openai_counts(usage.input_tokens or 0, usage.output_tokens or 0)


# -- Anthropic ------------------------------------------------------------------------------


def anthropic_usage(usage: Usage) -> dict[str, Any]:
    """Anthropic's input split back: uncached + cache read + cache write (its input_tokens
    is the uncached part only)."""
    out: dict[str, Any] = {}
    if usage.input_tokens is not None:
        out["input_tokens"] = (
            usage.input_tokens - (usage.cache_read_tokens or 0) - (usage.cache_write_tokens or 0)
        )
    put_count(out, "cache_creation_input_tokens", usage.cache_write_tokens)
    put_count(out, "cache_read_input_tokens", usage.cache_read_tokens)
    put_count(out, "output_tokens", usage.output_tokens)
    return out


def anthropic_body_usage(usage: Usage) -> dict[str, Any]:
    """The ``message`` body's usage, written even when nothing was reported: its
    ``input_tokens`` and ``output_tokens`` are required there, so a count nobody reported
    is ``0`` (the stream's frames write only the counts known); the keys in the body's
    order (the two counts, then the cache read and write)."""
    counts = anthropic_usage(usage)
    out = {"input_tokens": counts.get("input_tokens", 0),
           "output_tokens": counts.get("output_tokens", 0)}
    for key in ("cache_read_input_tokens", "cache_creation_input_tokens"):
        if key in counts:
            out[key] = counts[key]
    return out


# -- Gemini ---------------------------------------------------------------------------------


def gemini_usage(usage: Usage) -> dict[str, Any] | None:
    if not usage.reported:
        return None
    out: dict[str, Any] = {}
    put_count(out, "promptTokenCount", usage.input_tokens)
    put_count(out, "cachedContentTokenCount", usage.cache_read_tokens)
    if usage.output_tokens is not None:
        out["candidatesTokenCount"] = usage.output_tokens - (usage.reasoning_tokens or 0)
    put_count(out, "thoughtsTokenCount", usage.reasoning_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        out["totalTokenCount"] = usage.input_tokens + usage.output_tokens
    return out


def gemini_body_usage(usage: Usage) -> dict[str, Any]:
    """The body's ``usageMetadata``: the stream's, and always a ``totalTokenCount`` (of the
    counts reported; the stream's last chunk has one only when input and output are both
    known)."""
    out = gemini_usage(usage) or {}
    out.setdefault("totalTokenCount", (usage.input_tokens or 0) + (usage.output_tokens or 0))
    return out


# -- Ollama, Bedrock, Cohere: the stream's object and the body's are the same --------------


def ollama_usage(usage: Usage) -> dict[str, Any]:
    out: dict[str, Any] = {}
    put_count(out, "prompt_eval_count", usage.input_tokens)
    put_count(out, "eval_count", usage.output_tokens)
    return out


def bedrock_usage(usage: Usage) -> dict[str, Any] | None:
    """Converse's ``inputTokens`` is the uncached part (cache counts beside it)."""
    if not usage.reported:
        return None
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    out: dict[str, Any] = {}
    if usage.input_tokens is not None:
        out["inputTokens"] = usage.input_tokens - (read or 0) - (write or 0)
    put_count(out, "outputTokens", usage.output_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        out["totalTokens"] = usage.input_tokens + usage.output_tokens
    put_count(out, "cacheReadInputTokens", read)
    put_count(out, "cacheWriteInputTokens", write)
    return out


def cohere_usage(usage: Usage) -> dict[str, Any] | None:
    """Cohere's ``tokens`` (every token; its input includes the cache read, as the canonical
    count does), ``cached_tokens`` the cache read; ``billed_units`` is Cohere's own (fewer
    than the tokens), never made up from them."""
    if not usage.reported:
        return None
    tokens: dict[str, Any] = {}
    put_count(tokens, "input_tokens", usage.input_tokens)
    put_count(tokens, "output_tokens", usage.output_tokens)
    out: dict[str, Any] = {"tokens": tokens} if tokens else {}
    put_count(out, "cached_tokens", usage.cache_read_tokens)
    return out


def interactions_status(response: Any, same_provider: bool) -> str:
    """An interaction's ``status`` for a ``Response``: its own for one of this wire, else
    the one its stop names (``in_progress`` for a reply that did not end, ``failed`` for
    one that ended in an error, ``cancelled`` for a cancelled one)."""
    native = response.native_stop_reason
    if same_provider and isinstance(native, str) and native:
        return native
    error = response.error
    if error is not None and error.kind == "cancelled":
        return "cancelled"
    if response.stop_reason == "error":
        return "failed"
    if not response.complete or response.stop_reason is None:
        return "in_progress"
    status = STOP["gemini-interactions"].get(response.stop_reason, "completed")
    called = any(block.type == "tool_call" for block in response.content)
    return "completed" if status == "requires_action" and not called else status


def gemini_interactions_usage(usage: Usage) -> dict[str, Any] | None:
    """An interaction's ``usage`` from canonical counts, split as ``gemini_usage`` splits
    them: ``total_output_tokens`` = output less the thoughts (``total_thought_tokens``), so
    the totals read back are the ones given; ``total_tokens`` when input and output are
    both known."""
    if not usage.reported:
        return None
    out: dict[str, Any] = {}
    put_count(out, "total_input_tokens", usage.input_tokens)
    put_count(out, "total_cached_tokens", usage.cache_read_tokens)
    if usage.output_tokens is not None:
        out["total_output_tokens"] = usage.output_tokens - (usage.reasoning_tokens or 0)
    put_count(out, "total_thought_tokens", usage.reasoning_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        out["total_tokens"] = usage.input_tokens + usage.output_tokens
    return out
