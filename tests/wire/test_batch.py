"""Runs of a template's frames decoded in one batch (``SSEPayloadDecoder._batch``) give exactly
what the same frames decoded one by one give, whatever bytes lie between the quotes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx.wire.base import SSEPayloadDecoder

from ..helpers import outcome, split_at
from ..streams import (
    DONE,
    MESSAGE_STOP,
    anthropic_events,
    block_start,
    block_stop,
    chat_chunk,
    message_delta,
    message_start,
)

_WORDS = [f" w{i}" for i in range(40)]


@contextmanager
def one_by_one() -> Iterator[None]:
    SSEPayloadDecoder.batch = False
    try:
        yield
    finally:
        SSEPayloadDecoder.batch = True


def _compact(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def anthropic_body(insides: list[bytes]) -> bytes:
    """A text block whose deltas hold ``insides`` raw between the quotes of ``text``."""
    head = anthropic_events(message_start(), block_start(0, {"type": "text", "text": ""}))
    frames = [
        b"event: content_block_delta\ndata: "
        + _compact({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": "@"}}).replace(b"@", inside)
        + b"\n\n"
        for inside in insides
    ]
    tail = anthropic_events(block_stop(0), message_delta(), MESSAGE_STOP)
    return head + b"".join(frames) + tail


def chat_body(insides: list[bytes]) -> bytes:
    """A chat stream whose content deltas hold ``insides`` raw between the quotes."""
    def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return b"data: " + _compact(chat_chunk(delta, finish)) + b"\n\n"

    first = frame({"role": "assistant", "content": ""})
    deltas = [frame({"content": "@"}).replace(b'"@"', b'"' + inside + b'"') for inside in insides]
    return first + b"".join(deltas) + frame({}, "stop") + DONE


BODIES = {"anthropic": anthropic_body, "openai-chat": chat_body}

# Bytes that could make a batch mis-cut its strings: quotes, backslashes, escapes good and bad,
# a lone surrogate, broken UTF-8, control characters, and look-alikes of the separators and of
# the frames' own suffixes.
_PIECES = [b"a", b" ", b'"', b"\\", b'\\"', b"\\\\", b"\\n", b"\\u00e9", b"\\ud800", b"\\x",
           b"\xc3\xa9", b"\xc3", b"\x01", b"\t", b",", b"]", b"}", b'"}}', b'",', b'"]']
# Whole strings that are wrong in ways that could cancel out in a batch: one that ends in a
# backslash (its closing quote escaped) beside one with a stray quote (one string too many).
_NASTY = [b"a\\", b"a\\\\\\", b',"z', b'a","b', b'","', b'\\\\"', b'a\\",\\"b', b'x"}}', b'"]',
          b"\\"]
_INSIDE = st.one_of(
    st.sampled_from(_NASTY), st.lists(st.sampled_from(_PIECES), max_size=5).map(b"".join)
)


@settings(max_examples=100, deadline=None)
@example(provider="anthropic", at=5, odd=[b"a\\", b',"z'], cut=0)  # ("a\\",","z" is 2 strings)
@example(provider="openai-chat", at=30, odd=[b"a\\", b',"z'], cut=0)
@given(
    provider=st.sampled_from(sorted(BODIES)),
    at=st.integers(0, 37),
    odd=st.lists(_INSIDE, min_size=1, max_size=3),
    cut=st.integers(0, 10_000),
)
def test_batch_decodes_exactly_as_one_by_one(
    provider: str, at: int, odd: list[bytes], cut: int
) -> None:
    # bug class: a batch that takes a frame with a stray quote, a backslash before its closing
    # quote or a bad escape for a good one (or mis-assigns the strings after it)
    insides = [word.encode() for word in _WORDS]
    insides[at : at + len(odd)] = odd
    body = BODIES[provider](insides)
    for chunks in ([body], split_at(body, [cut % len(body)])):
        batched = outcome(chunks, provider)
        with one_by_one():
            assert outcome(chunks, provider) == batched


@pytest.mark.parametrize("provider", sorted(BODIES))
def test_batch_is_taken_and_gives_the_text(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The property above could pass with the batch never taken: count the frames that still
    # went one by one.
    seen: list[int] = []
    original = SSEPayloadDecoder._one_by_one

    def spy(
        self: SSEPayloadDecoder, frames: list[Any], start: int, out: list[Any], early: bool
    ) -> int:
        end = original(self, frames, start, out, early)
        seen.append(end - start)
        return end

    monkeypatch.setattr(SSEPayloadDecoder, "_one_by_one", spy)
    texts = [f" word{i} \\\"quoted\\\" \\u00e9" for i in range(200)]
    body = BODIES[provider]([t.encode() for t in texts])
    response = llm_rx.reassemble(body, provider)
    assert response.text == "".join(json.loads(f'"{t}"') for t in texts)
    assert response.complete
    assert sum(seen) < 10  # the head, the first delta (learned from) and the tail
