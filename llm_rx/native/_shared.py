"""What every native encoder does the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..response import ToolCallBlock, Usage

__all__ = ["arguments_object", "usage_body"]


def usage_body(
    usage: Usage,
    same_provider: bool,
    encode: Callable[[Usage], dict[str, Any]],
    *,
    required: bool = False,
) -> dict[str, Any] | None:
    """The body's usage object: the provider's own, verbatim, for its own reply; else
    ``encode``'s spelling of the canonical counts, or ``None`` when nobody reported any
    (unless the body ``required`` one)."""
    if same_provider and isinstance(usage.native, dict):  # (unvalidated: check its shape)
        return dict(usage.native)
    if not usage.reported and not required:
        return None
    return encode(usage)


def arguments_object(call: ToolCallBlock) -> Any:
    """A call's arguments as the object a body carries; arguments that never parsed (or are
    not an object) come back as ``{"_raw_arguments": "..."}``, the evidence kept."""
    arguments = call.arguments
    return arguments if isinstance(arguments, dict) else {"_raw_arguments": call.raw_arguments}
