"""``python3 -m tests.fuzz.entry [-runs=N] [-max_total_time=S]``: atheris, coverage-guided,
over the compiled core's entry points (``llm_rx.speed._scan``): each input is cut into a
program (its holes and pieces), a position, a bound and the data, then read by ``scan`` and by
its twin (``tests/fuzz/twin.py``); any difference, or a crash, is a finding.
The same bytes are also read as AWS event-stream messages by ``scan_messages`` (a crash is a
finding there; what it reads, the property tests compare)."""

from __future__ import annotations

import sys
from typing import Any

_HOLES = b"SANIP"


def _case(data: bytes) -> tuple[bytes, int, tuple[bytes, ...], bytes, int]:
    """The input as (data, position, pieces, holes, bound): its first bytes the program's
    shape, the pieces cut from the next ones at their lengths."""
    if len(data) < 4:
        return data, 0, (b"",), b"", 1
    count = data[0] % 4 + 1
    holes = bytes(_HOLES[b % len(_HOLES)] for b in data[1 : 1 + count])
    if holes.count(b"S") > 1:
        holes = holes.replace(b"S", b"A")
    at = 1 + count
    pieces = []
    for _ in range(len(holes) + 1):
        size = data[at] % 8 if at < len(data) else 0
        pieces.append(data[at + 1 : at + 1 + size])
        at += 1 + size
    for i in range(len(holes)):  # (a hole's next piece stops it: a quote, never a digit)
        pieces[i + 1] = b'"' + pieces[i + 1].lstrip(b"0123456789")
    body = data[at:]
    return body, data[1] % 3 if body else 0, tuple(pieces), holes, data[2] % 200 + 1


def one_input(data: bytes) -> None:
    from llm_rx.speed import core

    from .twin import twin

    assert core.scan is not None
    assert core.scan_messages is not None
    body, pos, pieces, holes, most = _case(data)
    pos = min(pos, len(body))
    values: list[str] = []
    found: Any = core.scan(body, pos, pieces, holes, values, most)
    expected = twin(body, pos, pieces, holes, most)
    if (found, values) != expected:
        raise AssertionError(f"scan {found!r} {values!r} != twin {expected!r}")
    core.scan_messages(body, pos, pieces[0], pieces, holes, [], most)


def main() -> None:
    import atheris

    with atheris.instrument_imports(include=["tests.fuzz.twin", "llm_rx.speed"]):
        from llm_rx.speed import core  # noqa: F401

        from . import twin  # noqa: F401 - (instrumented)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
