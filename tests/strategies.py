"""Hypothesis strategies for arbitrary valid ``Response`` objects (and their parts).

Every value a ``Response`` can legally hold once a decoder built it: JSON values wherever a
field is the provider's own (``raw``, ``meta``, ``extra``, the native stop reason, usage
``native``), with the keys the encoders look for mixed in so their special paths run on
values of every shape. Values stay within what a decoder can produce from JSON text: no
``NaN`` or infinities, integers within 64 bits, no lone surrogates (``orjson`` gives none of
these).
"""

from __future__ import annotations

from typing import Any, get_args

import orjson
from hypothesis import strategies as st

from llm_rx.errors import ErrorKind
from llm_rx.native import ENCODERS
from llm_rx.response import (
    ApprovalRequestBlock,
    Block,
    Choice,
    ErrorInfo,
    OpaqueBlock,
    RefusalBlock,
    Response,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)

__all__ = [
    "blocks",
    "choices",
    "json_dicts",
    "json_values",
    "responses",
    "usages",
]

PROVIDERS = (*sorted(ENCODERS), "unknown")

# Keys some encoder reads from a block's meta, an ``extra`` or a choice's own fields.
_META_KEYS = ("field", "detail_type", "plain", "format", "id", "item_id", "item", "part",
              "channel", "toolUse", "endpoint", "type", "call.index", "function.index",
              "caller")
_EXTRA_KEYS = ("created", "created_at", "stop_sequence", "stop_details", "metrics", "context",
               "x_groq", "promptFeedback", "total_duration", "load_duration",
               "prompt_eval_duration", "eval_duration", "status", "output", "usage",
               "model", "id", "choices", "message", "candidates", "usageMetadata",
               "finishReason", "safetyRatings", "index", "logprobs", "content", "tool_calls")

# Keys some encoder reads inside those values (an item's fields, a part, host extras).
_INNER_KEYS = ("type", "content", "summary", "status", "id", "index", "text", "url_citation",
               "usage_breakdown", "annotations", "logprobs", "stop_reason", "stop_details")

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)


def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value (what ``orjson.loads`` can give); objects often have keys some encoder
    looks for."""
    keys = st.sampled_from(_INNER_KEYS) | st.text(max_size=6)
    return st.recursive(
        _scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=max_leaves,
    )


def json_dicts(keys: tuple[str, ...] = ()) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object; with ``keys``, mostly of those keys (which some code looks for)."""
    anything = st.dictionaries(st.text(max_size=6), json_values(), max_size=4)
    if not keys:
        return anything
    return st.dictionaries(st.sampled_from(keys), json_values(), max_size=4) | anything


_maybe_text = st.none() | st.text(max_size=10)
_metas = st.none() | json_dicts(_META_KEYS)


def _tool_calls() -> st.SearchStrategy[ToolCallBlock]:
    raw = st.text(max_size=12) | json_values().map(lambda value: _compact(value))
    return st.builds(
        ToolCallBlock,
        id=_maybe_text,
        name=_maybe_text,
        arguments=json_values(),
        raw_arguments=raw,
        signature=_maybe_text,
        meta=_metas,
    )


def _compact(value: Any) -> str:
    return orjson.dumps(value).decode()


def blocks() -> st.SearchStrategy[Block]:
    """A content block of any kind, with any legal field values."""
    return st.one_of(
        st.builds(TextBlock, text=st.text(max_size=12), signature=_maybe_text,
                  citations=st.lists(json_values(4), max_size=2), meta=_metas),
        st.builds(ThinkingBlock, text=st.text(max_size=12), signature=_maybe_text,
                  redacted=st.booleans(), meta=_metas),
        _tool_calls(),
        st.builds(RefusalBlock, text=st.text(max_size=12), meta=_metas),
        st.builds(OpaqueBlock, kind=st.text(max_size=10) | st.sampled_from(
            ("delta.annotations", "delta.audio", "server_tool_use", "executableCode")),
            raw=json_values(), meta=_metas),
        st.builds(ApprovalRequestBlock, id=_maybe_text, name=_maybe_text,
                  arguments=json_values(), server=_maybe_text,
                  raw=json_values() | st.just({"type": "mcp_approval_request", "id": "r"}),
                  meta=_metas),
    )


_counts = st.none() | st.integers(min_value=0, max_value=10**7)


def usages() -> st.SearchStrategy[Usage]:
    """Usage with any counts reported or not, with or without a provider object."""
    return st.builds(
        Usage,
        input_tokens=_counts,
        output_tokens=_counts,
        cache_read_tokens=_counts,
        cache_write_tokens=_counts,
        reasoning_tokens=_counts,
        native=st.none() | json_dicts(),
    )


_stop_reasons = st.none() | st.sampled_from(get_args(StopReason))
_logprobs = st.none() | st.dictionaries(
    st.sampled_from(("content", "refusal")) | st.text(max_size=4),
    st.lists(json_values(4), max_size=2), max_size=2)


def choices() -> st.SearchStrategy[Choice]:
    return st.builds(
        Choice,
        index=st.integers(min_value=0, max_value=8),
        content=st.lists(blocks(), max_size=3),
        stop_reason=_stop_reasons,
        logprobs=_logprobs,
        native_stop_reason=json_values(4),
        extra=json_dicts(_EXTRA_KEYS),
    )


_errors = st.none() | st.builds(
    ErrorInfo, kind=st.sampled_from(get_args(ErrorKind)), message=st.text(max_size=10),
    raw=_maybe_text)


def responses(providers: tuple[str, ...] = PROVIDERS) -> st.SearchStrategy[Response]:
    """A ``Response`` of any shape a decoder may build (and some only a caller would)."""
    return st.builds(
        Response,
        provider=st.sampled_from(providers),
        model=_maybe_text,
        id=_maybe_text,
        content=st.lists(blocks(), max_size=4),
        stop_reason=_stop_reasons,
        complete=st.booleans(),
        usage=usages(),
        stop_details=_maybe_text,
        choices=st.just([]) | st.lists(choices(), min_size=2, max_size=3),
        error=_errors,
        logprobs=_logprobs,
        extra=json_dicts(_EXTRA_KEYS),
        native_stop_reason=json_values(4),
        choice_extra=json_dicts(_EXTRA_KEYS),
    )
