"""Usage as a target may write it: every count a whole number from 0 to 2**53 - 1."""

from __future__ import annotations

from typing import Any

from ..response import Usage

__all__ = ["counted"]

_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
           "reasoning_tokens")
_LARGEST = 2**53 - 1  # (the largest count a JSON reader in a browser holds exactly)


def _count_ok(value: Any) -> bool:
    return value is None or (value.__class__ is int and 0 <= value <= _LARGEST)


def _counts_ok(value: Any, key: str = "") -> bool:
    """Whether every count in a provider's usage object (a key naming tokens or a count, at
    any depth) is a whole number from 0 to 2**53 - 1, as every target's schema has it."""
    counted = _count_name(key)
    if isinstance(value, dict):  # (where a count stands, only counts: Cohere's ``tokens``)
        if counted and not (value and all(_count_name(str(name)) for name in value)):
            return False
        return all(_counts_ok(item, str(name)) for name, item in value.items())
    if isinstance(value, list):  # (a list where a count stands is no count, even empty)
        return not counted and all(_counts_ok(item, key) for item in value)
    if not counted:
        return True
    return value is not None and _count_ok(value)


def _count_name(key: str) -> bool:
    """Whether a usage key names a count (``..._tokens``, ``...Tokens``, ``...Count``)."""
    return key.lower().endswith(("tokens", "count"))


def counted(usage: Usage) -> Usage:
    """Usage as a target may write it: a negative count, or one past 2**53 - 1 (a hostile or
    broken source), is no count, and the source's own object is not given back verbatim
    when a count in it is no such whole number (every target's schema counts so)."""
    bad = [name for name in _COUNTS if not _count_ok(getattr(usage, name))]
    if not bad and (usage.native is None or _counts_ok(usage.native)):
        return usage
    return usage.model_copy(update={**dict.fromkeys(bad), "native": None})
