"""The resuming reading without a network: a body cut at every byte (a clean EOF or a failing
read) and continued from its cursor reads to the unbroken body's events, with the speed
shortcuts on and off; the waits between connections."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from llm_rx import speed
from llm_rx.errors import IncompleteStreamError
from llm_rx.events import Event
from llm_rx.serve._frames import split_frames
from llm_rx.sources._engine import decode_all, new_decoder
from llm_rx.sources._resume import Resuming, decode_resuming
from llm_rx.wire.resume import Cursor

from ..captures import capture

BODY = capture("openai/responses-basic-llm.sse").data
FRAMES = split_frames(BODY, "sse")


def _kinds(events: list[Event]) -> list[tuple[Any, ...]]:
    return [(type(event), *event) for event in events]


def _reads(data: bytes, size: int = 61) -> list[bytes]:
    return [data[at : at + size] for at in range(0, len(data), size)]


def _unbroken() -> list[Event]:
    out: list[Event] = []
    decode_all(new_decoder("openai-responses"), _reads(BODY), out.extend)
    return out


def _after(cursor: Cursor) -> list[bytes]:
    """The continuation a provider sends: the events after the cursor's sequence_number."""
    after = -1 if cursor.sequence_number is None else cursor.sequence_number
    rest = [frame for number, frame in enumerate(FRAMES) if number > after]
    return _reads(b"".join(rest))


def _failing(reads: list[bytes]) -> Iterator[bytes]:
    yield from reads
    raise ConnectionResetError("peer reset")


def _resumed(first: Any, waits: list[float] | None = None) -> tuple[list[Event], list[Cursor]]:
    out: list[Event] = []
    cursors: list[Cursor] = []

    def reopen(cursor: Cursor) -> list[bytes]:
        cursors.append(cursor)
        return _after(cursor)

    resuming = Resuming(lambda: new_decoder("openai-responses"), out.extend, None,
                        16 << 20, 3, 0.0)
    decode_resuming(resuming, first, lambda: False, reopen,
                    (waits if waits is not None else []).append)
    return out, cursors


def _near_boundaries() -> list[int]:
    """Every frame's end, a byte before and after it, and its middle."""
    cuts: set[int] = set()
    end = 0
    for frame in FRAMES:
        cuts.update((end, end + 1, end + len(frame) // 2, end + len(frame) - 1))
        end += len(frame)
    return sorted(cut for cut in cuts if cut < len(BODY))


@pytest.mark.parametrize("shortcuts", [True, False])
@pytest.mark.parametrize("ending", ["eof", "reset"])
def test_resume_a_body_cut_near_each_boundary_reads_to_the_unbroken_events(
    shortcuts: bool, ending: str
) -> None:
    _cut_and_resumed(shortcuts, ending, _near_boundaries())


@pytest.mark.slow
@pytest.mark.parametrize("shortcuts", [True, False])
@pytest.mark.parametrize("ending", ["eof", "reset"])
def test_resume_a_body_cut_at_every_byte_reads_to_the_unbroken_events(
    shortcuts: bool, ending: str
) -> None:
    _cut_and_resumed(shortcuts, ending, range(len(BODY)))


def _cut_and_resumed(shortcuts: bool, ending: str, cuts: Any) -> None:
    with speed.fast_paths(shortcuts):
        expected = _kinds(_unbroken())
        for cut in cuts:
            reads = _reads(BODY[:cut])
            first = iter(reads) if ending == "eof" else _failing(reads)
            events, cursors = _resumed(first)
            assert _kinds(events) == expected, cut
            assert len(cursors) == 1, cut


def test_resume_waits_the_streams_own_retry_time() -> None:
    waits: list[float] = []
    head = b"retry: 5000\n\n" + b"".join(FRAMES[:3])
    events, _ = _resumed(iter([head]), waits)
    assert _kinds(events) == _kinds(_unbroken())
    assert waits == [5.0]


def test_resume_spent_tries_leave_the_cut() -> None:
    out: list[Event] = []
    resuming = Resuming(lambda: new_decoder("openai-responses"), out.extend, None,
                        16 << 20, 2, 0.0)
    calls: list[Cursor] = []

    def reopen(cursor: Cursor) -> list[bytes]:
        calls.append(cursor)
        return []  # (the continuation brings nothing)

    with pytest.raises(IncompleteStreamError):
        decode_resuming(resuming, iter([b"".join(FRAMES[:3])]), lambda: False, reopen,
                        lambda _: None)
    assert len(calls) == 2
    assert out  # (what arrived was passed on)
