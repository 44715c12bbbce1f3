"""A recorded reply's timing (``<name>.timing.json`` beside its capture), read and replayed.

::

    {"first_byte": 0.412, "reads": [[0.0, 231], [0.021, 118], [0.019, 97], ...]}

``first_byte``: seconds from the request to the first read; ``reads``: each read's seconds
since the read before it (the first's is 0) and its size in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

__all__ = ["Timing", "timing_of"]


@dataclass(frozen=True)
class Timing:
    """How a reply arrived: ``first_byte`` seconds after the request, then ``reads``: each
    read's ``(seconds since the read before, bytes)`` (the first read's gap is 0)."""

    first_byte: float
    reads: tuple[tuple[float, int], ...]

    def to_json(self) -> bytes:
        return orjson.dumps({"first_byte": round(self.first_byte, 6),
                             "reads": [[round(gap, 6), size] for gap, size in self.reads]},
                            option=orjson.OPT_INDENT_2)

    def schedule(self, speed: float = 1.0) -> tuple[float, ...]:
        """Each read's time after the first one, at ``speed`` times the recorded pace."""
        at, out = 0.0, []
        for index, (gap, _) in enumerate(self.reads):
            at += gap if index else 0.0
            out.append(at / speed)
        return tuple(out)

    def split(self, data: bytes) -> list[bytes] | None:
        """``data`` cut as it was read (``None``: the sizes are not this body's)."""
        if sum(size for _, size in self.reads) != len(data):
            return None
        pieces, at = [], 0
        for _, size in self.reads:
            pieces.append(data[at : at + size])
            at += size
        return pieces


def timing_of(capture: Path) -> Timing | None:
    """The timing recorded beside a capture (``name.sse`` -> ``name.timing.json``), if any."""
    path = capture.with_name(capture.name.rsplit(".", 1)[0] + ".timing.json")
    if not path.is_file():
        return None
    try:
        raw: Any = orjson.loads(path.read_bytes())
        reads = tuple((float(gap), int(size)) for gap, size in raw["reads"])
        return Timing(float(raw["first_byte"]), reads)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
