"""The fields of a stream of objects outside a known set: what a reply's metadata is made of."""

from __future__ import annotations

from itertools import filterfalse
from typing import Any

__all__ = ["ChangedFields"]

#: Key layouts a stream keeps, and keys in a layout kept (the keys come from the wire).
LAYOUTS_KEPT = 64
# A layout whose key names are longer than a real one's is not kept.
_LAYOUT_CHARS = 4 * 1024


class ChangedFields:
    """The fields of a stream of objects outside a known set, reporting those that changed.

    Objects of one stream mostly share one key layout, so the fields outside the known set
    are worked out once per layout (a few layouts are kept, for the stream's own objects
    only). A field's first value is recorded
    even when `null` (it is what the wire said); a later `null` does not erase a value.

    Args:
        known: The fields the decoder reads itself (never reported).
    """

    __slots__ = ("_extra_keys", "_keys", "_layouts", "known", "values")

    def __init__(self, known: frozenset[str]) -> None:
        self.known = known
        self.values: dict[str, Any] = {}
        self._keys: tuple[str, ...] = ()
        self._extra_keys: tuple[str, ...] = ()
        self._layouts: dict[tuple[str, ...], tuple[str, ...]] = {}

    def changes(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """The fields of `obj` outside the known set whose value changed.

        Args:
            obj: The stream's next object.

        Returns:
            Those fields and their new values, or `None` when none changed.
        """
        keys = tuple(obj)
        if keys != self._keys:
            self._keys = keys
            extra = self._layouts.get(keys)
            if extra is None:
                extra = tuple(filterfalse(self.known.__contains__, keys))  # (C level)
                if (len(self._layouts) < LAYOUTS_KEPT and len(keys) <= LAYOUTS_KEPT
                        and sum(map(len, keys)) <= _LAYOUT_CHARS):
                    self._layouts[keys] = extra
            self._extra_keys = extra
        changed: dict[str, Any] | None = None
        values = self.values
        for key in self._extra_keys:
            value = obj[key]
            if key in values and (value is None or values[key] == value):
                continue
            values[key] = value
            if changed is None:
                changed = {}
            changed[key] = value
        return changed
