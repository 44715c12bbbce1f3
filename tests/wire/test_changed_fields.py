"""ChangedFields: the fields outside a known set that changed, whichever streams came before."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from llm_rx.wire.base import ChangedFields

_KEYS = st.sampled_from(["id", "model", "x", "y", "z"])
_OBJECTS = st.lists(st.dictionaries(_KEYS, st.none() | st.integers(0, 2), max_size=5),
                    max_size=6)


def _plain(known: frozenset[str], objects: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """What ``changes`` reports, computed from scratch for every object."""
    values: dict[str, Any] = {}
    reports: list[dict[str, Any] | None] = []
    for obj in objects:
        changed = {key: value for key, value in obj.items()
                   if key not in known and not (key in values and (
                       value is None or values[key] == value))}
        values.update(changed)
        reports.append(changed or None)
    return reports


@settings(max_examples=60, deadline=None)
@given(streams=st.lists(st.tuples(st.sampled_from([frozenset({"id"}), frozenset({"id", "x"})]),
                                  _OBJECTS), max_size=4))
def test_changed_fields_of_each_stream_whatever_came_before(
    streams: list[tuple[frozenset[str], list[dict[str, Any]]]],
) -> None:
    # bug class: key layouts shared between streams gave one stream another's fields (a
    # layout seen with another set of known fields, or from the previous stream)
    for known, objects in streams:
        fields = ChangedFields(known)
        assert [fields.changes(obj) for obj in objects] == _plain(known, objects)


def test_changed_fields_keeps_few_layouts_from_the_wire() -> None:
    known = frozenset({"a-field-no-stream-has"})
    for n in range(200):
        fields = ChangedFields(known)
        assert fields.changes({f"k{n}": 1, **{f"pad{i}": 0 for i in range(n)}}) == {
            f"k{n}": 1, **{f"pad{i}": 0 for i in range(n)}}
    assert len(fields._layouts) <= 64
    assert all(len(keys) <= 64 for keys in fields._layouts)


def test_changed_fields_layout_cache_bounded_in_bytes() -> None:
    # bug class: a layout cache bounded only in count: 64 streams whose key names were 8 MiB
    # each kept 536 MiB alive after they ended
    known = frozenset({"a-field-no-other-test-has"})
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(32):
            fields = ChangedFields(known)
            huge = f"{n}-" + "k" * (256 * 1024)
            assert fields.changes({"id": 1, huge: 2}) == {"id": 1, huge: 2}
            del fields, huge
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 256 * 1024  # (32 streams of 256 KiB names: 8 MiB if their layouts stayed)
