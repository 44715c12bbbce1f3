"""The Anthropic decoder's opaque blocks (server-tool blocks and block types this library
does not model): what their deltas add, and the block they give when they end."""

from __future__ import annotations

from typing import Any

import orjson

from ..events import BlockStart
from ._checks import string

__all__ = ["OpaqueBlock", "opaque_delta", "opaque_start"]

# A server-tool (opaque) block being streamed: its index, the start's block, the
# ``input_json_delta`` fragments and each string field's deltas (all joined once, at its end).
OpaqueBlock = tuple[int, dict[str, Any], list[str], dict[str, list[str]]]


def opaque_delta(opaque: OpaqueBlock, delta: dict[str, Any]) -> None:
    """Add a delta to the block (its fragments and string fields, joined at its end)."""
    _, _, fragments, texts = opaque
    if delta.get("type") == "input_json_delta":
        fragments.append(string(delta.get("partial_json", ""), "partial_json"))
        return
    for key, value in delta.items():
        if key != "type" and isinstance(value, str):
            texts.setdefault(key, []).append(value)  # (joined once, at the end)


def opaque_start(opaque: OpaqueBlock) -> BlockStart:
    """The block as it stands: its deltas applied to its start."""
    index, block, fragments, texts = opaque
    for key, parts in texts.items():  # a string field's deltas append to the start's
        previous = block.get(key)
        block[key] = (previous if isinstance(previous, str) else "") + "".join(parts)
    joined = "".join(fragments)
    if joined:  # (an empty fragment leaves the start's input as it was)
        try:
            block["input"] = orjson.loads(joined)
        except orjson.JSONDecodeError:
            block["input"] = joined
    return BlockStart(index, "opaque", raw=block, name=str(block.get("type")))
