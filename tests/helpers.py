"""Small helpers the tests share: decoding to a list of events, with the error at the end."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from llm_rx.errors import LlmRxError
from llm_rx.events import Event
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


def split_at(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    """``data`` cut at the given offsets (in any order, duplicates allowed)."""
    points = sorted({0, len(data), *(min(max(c, 0), len(data)) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def outcome(chunks: Iterable[bytes], provider: str | None = None) -> tuple[object, ...]:
    """A comparable summary of decoding: the events, then the error's type, message, frame."""
    events, error = decode_events(chunks, provider)
    if error is None:
        return (events, None)
    return (events, type(error), error.message, error.raw)
