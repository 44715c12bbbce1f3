"""The compiled core's entry point, ``scan`` (``llm_rx/speed/_scan.c``), as a regular
expression and orjson: what the property tests and the fuzzer compare it with."""

from __future__ import annotations

import re

import orjson

__all__ = ["twin"]

_HOLES = {
    "S": rb'((?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+)',
    "A": rb"[\x20\x21\x23-\x5b\x5d-\x7e]*+",
    "N": rb"[A-Za-z0-9]++",
    "I": rb"(0|[1-9][0-9]{0,17}+)(?![0-9])",
    "P": rb" *+",
}


def twin(data: bytes, pos: int, pieces: tuple[bytes, ...], holes: bytes,
         most: int) -> tuple[tuple[int, int, int, int, bool], list[str]]:
    """What ``scan`` gives, read with a regular expression and orjson (see ``_scan.c``)."""
    body = b"".join(re.escape(piece) + _HOLES[chr(hole)]
                    for piece, hole in zip(pieces, holes, strict=False)) + re.escape(pieces[-1])
    frame = re.compile(body)
    values: list[str] = []
    first = last = -1
    count, same, digits = 0, True, None
    at = pos
    while at < len(data):
        found = frame.match(data[: at + most] if most < len(data) - at else data, at)
        if found is None or found.end() == at:  # (an empty frame is none)
            break
        groups = found.groups()
        strings = [g for g, h in zip(groups, _group_kinds(holes), strict=True) if h == "S"]
        numbers = [g for g, h in zip(groups, _group_kinds(holes), strict=True) if h == "I"]
        try:
            decoded = [orjson.loads(b'"' + inside + b'"') for inside in strings]
        except orjson.JSONDecodeError:
            break
        if len(strings) > 1:
            break
        values += decoded
        if count == 0:
            first, digits = at, numbers
        elif numbers != digits:
            same = False
        last = at
        count += 1
        at = found.end()
    return (at, count, first, last, same), values


def _group_kinds(holes: bytes) -> list[str]:
    return [chr(h) for h in holes if chr(h) in "SI"]
