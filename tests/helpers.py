"""Small helpers the tests share: decoding to a list of events, with the error at the end.

Two decodings are held equal by their `kinds()`: each event as its kind's name and its fields,
so a ``ThinkingDelta`` where a ``TextDelta`` was never passes for it (events compare their
kinds themselves too; the helper says so where it is relied on)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import LlmRxError
from llm_rx.events import Event, MessageStop
from llm_rx.response import Response
from llm_rx.sources._engine import decode_all, new_decoder


def decode_events(
    chunks: Iterable[bytes], provider: str | None = None
) -> tuple[list[Event], LlmRxError | None]:
    """Every event the chunks decode to, and the error that ended them (or ``None``)."""
    events: list[Event] = []
    try:
        decode_all(new_decoder(provider), chunks, events.extend)
    except LlmRxError as error:
        return events, error
    return events, None


def kinds(events: Sequence[Event]) -> list[tuple[Any, ...]]:
    """Each event as ``(its kind's name, *its fields)``: what equivalence tests compare."""
    return [(type(event).__name__, *event) for event in events]


def split_at(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    """``data`` cut at the given offsets (in any order, duplicates allowed)."""
    points = sorted({0, len(data), *(min(max(c, 0), len(data)) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def outcome(chunks: Iterable[bytes], provider: str | None = None) -> tuple[object, ...]:
    """A comparable summary of decoding: the events with their kinds (`kinds()`), then the
    error's type, message, frame."""
    events, error = decode_events(chunks, provider)
    if error is None:
        return (kinds(events), None)
    return (kinds(events), type(error), error.message, error.raw)


def reads_of(data: bytes, size: int) -> list[bytes]:
    """``data`` in reads of ``size`` bytes (the last one shorter)."""
    return [data[start : start + size] for start in range(0, len(data), size)]


class CountedReads:
    """A body's reads, as a one-shot iterable that counts the reads taken from it."""

    def __init__(self, data: bytes, size: int) -> None:
        self.reads = reads_of(data, size)
        self.pulled = 0

    def __iter__(self) -> Iterator[bytes]:
        for read in self.reads:
            self.pulled += 1
            yield read


def first_reply(data: bytes, provider: str | None = None) -> Response:
    """The reply a body holds, as ``reassemble`` gives it; for a body that holds several
    responses one after another (``reassemble`` says so: not complete), the first one, as
    ``to_responses()`` gives it."""
    reply = llm_rx.reassemble(data, provider)  # type: ignore[arg-type]
    if reply.complete or reply.error is None or reply.error.kind != "protocol" or (
            "another response" not in reply.error.message):
        return reply
    replies: list[Response] = llm_rx.from_bytes(data, provider=provider).pipe(  # type: ignore[arg-type]
        lxo.to_responses()).run()
    return replies[0]


def first_events(events: list[Event]) -> list[Event]:
    """The events of a stream's first response (up to its ``MessageStop``, or all)."""
    for position, event in enumerate(events):
        if type(event) is MessageStop:
            return events[: position + 1]
    return events
