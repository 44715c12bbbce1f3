"""Key layouts shared between streams, for :class:`~llm_rx.wire.changed.ChangedFields`.

Objects of one stream mostly share one key layout, and so do the streams of one host: the
fields of a layout outside a known set are worked out once per process and looked up after
(a new stream, whose first frames are on the way to its first delta, finds its layout here).
With the shortcuts off nothing is shared (:func:`layouts_for` gives a stream its own cache).
"""

from __future__ import annotations

from .. import fast

__all__ = ["LAYOUTS_KEPT", "keep_layout", "layouts_for"]

Layouts = dict[tuple[str, ...], tuple[str, ...]]

_LAYOUTS: dict[frozenset[str], Layouts] = {}
LAYOUTS_KEPT = 64  # layouts per set of known fields, keys per layout (they come from the wire)
# The key names come from the wire and the cache lives as long as the process: a layout
# whose names are longer than a real one's is not kept, nor any once the cache holds so many
# characters of names (a stream of huge keys must not pin its keys after it ended).
_LAYOUT_CHARS = 4 * 1024
_LAYOUTS_CHARS = 1024 * 1024
_layouts_chars = [0]  # characters of key names held by the cache


def layouts_for(known: frozenset[str]) -> Layouts:
    """The layout cache for objects whose fields outside ``known`` are sought: the one the
    process shares, or (with the shortcuts off) a new one of the caller's own."""
    return _LAYOUTS.setdefault(known, {}) if fast.active() else {}


def keep_layout(
    layouts: Layouts, known: frozenset[str], keys: tuple[str, ...], extra: tuple[str, ...]
) -> None:
    """Cache a layout if there is room and its key names are of a real layout's size (and,
    in the process-wide cache, if the cache holds few enough characters of names)."""
    if len(layouts) >= LAYOUTS_KEPT or len(keys) > LAYOUTS_KEPT:
        return
    shared = layouts is _LAYOUTS.get(known)
    chars = sum(map(len, keys))
    if chars > _LAYOUT_CHARS or (shared and _layouts_chars[0] + chars > _LAYOUTS_CHARS):
        return
    layouts[keys] = extra
    if shared:
        _layouts_chars[0] += chars
