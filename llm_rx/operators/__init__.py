"""Operators to compose over event streams, one per module, each a factory for ``.pipe()``.

Each holds its state per subscription and passes the scheduler through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import load

__all__ = [
    "Cost",
    "Keyed",
    "PartialValue",
    "StreamMetrics",
    "accumulate",
    "attach_signatures",
    "cost",
    "decode",
    "encode",
    "fan_out",
    "for_key",
    "keyed",
    "merge_usage",
    "metrics",
    "paced",
    "partial_json",
    "responses",
    "retry_backoff",
    "share",
    "smooth",
    "stop_on",
    "text_only",
    "think_tags",
    "thinking_only",
    "to_response",
    "to_responses",
    "tool_calls",
    "trace",
]

#: Where each name lives: imported on first use (a pipeline loads only its operators).
_WHERE = {
    "Cost": "._pricing",
    "Keyed": "._keyed",
    "PartialValue": "._partial_json",
    "StreamMetrics": "._metrics",
    "accumulate": "._accumulate",
    "attach_signatures": "._attach_signatures",
    "cost": "._cost",
    "decode": "._decode",
    "encode": "._encode",
    "fan_out": "._fan_out",
    "for_key": "._for_key",
    "keyed": "._keyed",
    "merge_usage": "._merge_usage",
    "metrics": "._metrics",
    "paced": "._paced",
    "partial_json": "._partial_json",
    "responses": "._responses",
    "retry_backoff": "._retry_backoff",
    "share": "._share",
    "smooth": "._smooth",
    "stop_on": "._stop_on",
    "text_only": "._text_only",
    "think_tags": "._think_tags",
    "thinking_only": "._thinking_only",
    "to_response": "._to_response",
    "to_responses": "._to_responses",
    "tool_calls": "._tool_calls",
    "trace": "._trace",
}


def __getattr__(name: str) -> Any:
    return load(__name__, _WHERE, name, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from ._accumulate import accumulate
    from ._attach_signatures import attach_signatures
    from ._cost import cost
    from ._decode import decode
    from ._encode import encode
    from ._fan_out import fan_out
    from ._for_key import for_key
    from ._keyed import Keyed, keyed
    from ._merge_usage import merge_usage
    from ._metrics import StreamMetrics, metrics
    from ._paced import paced
    from ._partial_json import PartialValue, partial_json
    from ._pricing import Cost
    from ._responses import responses
    from ._retry_backoff import retry_backoff
    from ._share import share
    from ._smooth import smooth
    from ._stop_on import stop_on
    from ._text_only import text_only
    from ._think_tags import think_tags
    from ._thinking_only import thinking_only
    from ._to_response import to_response
    from ._to_responses import to_responses
    from ._tool_calls import tool_calls
    from ._trace import trace
