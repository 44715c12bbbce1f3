"""Canonical usage from an Anthropic ``usage`` object, compaction steps included.

A request whose context the server compacted (``context_management`` with a
``compact_*`` edit) runs more than one sampling step, and ``usage.iterations`` lists each:
``{"type": "compaction", ...}`` for the summarising step, ``{"type": "message", ...}`` for the
answer. Anthropic's rule: the top-level ``input_tokens`` and ``output_tokens`` do not include
the compaction iterations (they are the sum of the other ones), while the bill is the sum of
every iteration. So the canonical counts are the top-level ones plus, field by field
(``input_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``,
``output_tokens``), the sum over the ``compaction`` iterations; the ``message`` iterations are
already in the top-level counts and are not added again. Iterations of another model (an
``advisor_message``, a ``fallback_message``, each with its own ``model``) are not the served
model's tokens: they stay in ``native`` only.
"""

from __future__ import annotations

from typing import Any

from ..response import Usage
from .base import count_of

__all__ = ["usage_from_anthropic"]

_COUNTS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
           "output_tokens")


def _plus(left: int | None, right: int | None) -> int | None:
    """A sum where an unreported count is no count (not ``0``)."""
    return right if left is None else left if right is None else left + right


def _counts(raw: dict[str, Any]) -> list[int | None]:
    counts = [count_of(raw.get(name)) for name in _COUNTS]
    iterations = raw.get("iterations")
    if isinstance(iterations, list):  # (only when the server compacted during the request)
        for step in iterations:
            if isinstance(step, dict) and step.get("type") == "compaction":
                counts = [_plus(count, count_of(step.get(name)))
                          for count, name in zip(counts, _COUNTS, strict=True)]
    return counts


def usage_from_anthropic(raw: dict[str, Any]) -> Usage:
    """Canonical usage from an Anthropic usage object: ``input_tokens`` made a total (fresh,
    cache-write and cache-read tokens), compaction iterations added (see the module)."""
    fresh, write, read, output = _counts(raw)
    parts = [n for n in (fresh, write, read) if n is not None]
    details = raw.get("output_tokens_details") or {}
    return Usage(
        input_tokens=sum(parts) if fresh is not None else None,
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=(
            count_of(details.get("thinking_tokens")) if isinstance(details, dict) else None
        ),
        native=raw,
    )
