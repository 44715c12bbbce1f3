"""Runs of a template's frames decoded in one batch (``TemplateFrames._batch``) give exactly
what the same frames decoded one by one give, whatever bytes lie between the quotes."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx.errors import WireFormatError
from llm_rx.speed import fast_paths
from llm_rx.speed.batches import TemplateFrames
from llm_rx.speed.ollama import OllamaShortcuts
from llm_rx.wire.ollama import OllamaDecoder

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


def one_by_one() -> AbstractContextManager[None]:
    """Every shortcut off, batches among them (see :mod:`llm_rx.speed`)."""
    return fast_paths(False)


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


def ollama_body(insides: list[bytes], times: bool = True) -> bytes:
    """An /api/chat stream whose lines hold ``insides`` raw between the quotes of the text
    (on even lines, or all if not ``times``) or of the time (on odd lines; the text is then a
    plain word)."""
    lines = []
    for i, inside in enumerate(insides):
        time, text = (
            (b"2025-08-20T13:48:%02d.5Z" % i, inside) if i % 2 == 0 or not times else (inside, b"w")
        )
        lines.append(b'{"model":"m","created_at":"' + time + b'","message":{"role":"assistant",'
                     b'"content":"' + text + b'"},"done":false}\n')
    done = {"model": "m", "created_at": "t", "message": {"role": "assistant", "content": ""},
            "done": True, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 40}
    return b"".join(lines) + _compact(done) + b"\n"


def gemini_body(insides: list[bytes], usages: dict[int, bytes] | None = None) -> bytes:
    """A Gemini SSE stream whose chunks hold ``insides`` raw between the quotes of the text,
    and the running counts (or, at the given chunks, ``usages`` raw) as usageMetadata."""
    frames = []
    for i, inside in enumerate(insides):
        usage = (usages or {}).get(i) or (
            b'{"promptTokenCount":9,"candidatesTokenCount":%d,"totalTokenCount":%d}' % (i, 9 + i)
        )
        frames.append(b'data: {"candidates":[{"content":{"parts":[{"text":"' + inside
                      + b'"}],"role":"model"},"index":0}],"usageMetadata":' + usage
                      + b',"modelVersion":"m","responseId":"r"}\n\n')
    last = {"candidates": [{"content": {"parts": [{"text": "."}], "role": "model"},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 99,
                              "totalTokenCount": 108}, "modelVersion": "m", "responseId": "r"}
    return b"".join(frames) + b"data: " + _compact(last) + b"\n\n"


BODIES = {"anthropic": anthropic_body, "openai-chat": chat_body, "ollama": ollama_body,
          "gemini": gemini_body}

# Counts that are not the running ones: a number with a leading zero, an empty one, a digit
# in a key, a key less, counts that go back, a string where a number was.
_USAGES = [
    b'{"promptTokenCount":9,"candidatesTokenCount":01,"totalTokenCount":10}',
    b'{"promptTokenCount":9,"candidatesTokenCount":,"totalTokenCount":10}',
    b'{"promptTokenCount":9,"candidatesTokenCount1":1,"totalTokenCount":10}',
    b'{"promptTokenCount":9,"totalTokenCount":10}',
    b'{"promptTokenCount":9,"candidatesTokenCount":0,"totalTokenCount":9}',
    b'{"promptTokenCount":9,"candidatesTokenCount":"7","totalTokenCount":16}',
    b'{"promptTokenCount":9,"candidatesTokenCount":[1],"totalTokenCount":10}',
]


@settings(max_examples=40, deadline=None)
@example(usages={1: _USAGES[4]}, cut=4000)  # (the first counts of a run are the last ones')
@given(
    usages=st.dictionaries(st.integers(0, 39), st.sampled_from(_USAGES), max_size=3),
    cut=st.integers(0, 20_000),
)
def test_batch_gemini_counts_decode_exactly_as_one_by_one(
    usages: dict[int, bytes], cut: int
) -> None:
    # bug class: a batch that keeps only the last counts and so misses a bad one, a changed
    # set of keys (sent at once, not held) or counts held one by one but not in a batch
    body = gemini_body([word.encode() for word in _WORDS], usages)
    at = cut % len(body)
    for chunks in ([body], split_at(body, [at]), [body[:at]]):  # (whole, cut in two, cut off)
        batched = outcome(chunks, "gemini")
        with one_by_one():
            assert outcome(chunks, "gemini") == batched


def test_batch_gemini_counts_that_make_up_for_each_other() -> None:
    # bug class: counts parsed as one array, where an object cut in two by the batch's
    # separator is one value and a chunk holding two objects another: as many values as
    # chunks, but each chunk alone is no JSON
    counts = b'{"promptTokenCount":9,"candidatesTokenCount":3,"totalTokenCount":12}'
    usages = {
        2: b'{"promptTokenCount":9,"candidatesTokenCount":[1',
        3: b'2],"totalTokenCount":10}',
        4: counts + b"," + counts,
    }
    body = gemini_body([word.encode() for word in _WORDS], usages)
    batched = outcome([body], "gemini")
    assert batched[1] is WireFormatError
    with one_by_one():
        assert outcome([body], "gemini") == batched

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


@settings(max_examples=120, deadline=None)
@example(provider="anthropic", at=5, odd=[b"a\\", b',"z'], cut=0)  # ("a\\",","z" is 2 strings)
@example(provider="openai-chat", at=30, odd=[b"a\\", b',"z'], cut=0)
@example(provider="ollama", at=6, odd=[b"a\\", b',"z'], cut=0)
@example(provider="gemini", at=6, odd=[b"a\\", b',"z'], cut=0)
@example(provider="ollama", at=6, odd=[b'a","b'], cut=0)  # (one string too many: a text)
@example(provider="ollama", at=7, odd=[b'a","b'], cut=0)  # (and a time)
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


def test_batch_frame_whose_prefix_and_suffix_overlap() -> None:
    # bug class: a batch that cuts the string out of a frame too short to hold one (its
    # template's prefix and suffix share the quote) and reads it as ""
    body = anthropic_body([word.encode() for word in _WORDS])
    cut = body.replace(b'"text":" w20"}}', b'"text":"}}')
    assert cut != body
    batched = outcome([cut], "anthropic")
    assert batched[1] is WireFormatError
    with one_by_one():
        assert outcome([cut], "anthropic") == batched


@pytest.mark.parametrize("both", [False, True])
def test_batch_ollama_line_without_its_middle(both: bool) -> None:
    # bug class: a batch that takes a line with no middle for one whose text is "", or that
    # counts the strings of all its lines together, so that a line with a piece too few (no
    # middle) and one with a piece too many (two middles) pass between them
    body = ollama_body([f" w{i}".encode() for i in range(40)])
    lines = body.split(b"\n")
    middle = b'","message":{"role":"assistant","content":"'
    lines[20] = lines[20].replace(middle, b"-" * 60)  # no middle: time and text one string
    if both:
        lines[21] = lines[21].replace(b'"content":"w"', b'"content":"w' + middle + b'v"')
    assert [line.count(middle) for line in lines[20:22]] == [0, 2 if both else 1]
    body = b"\n".join(lines)
    batched = outcome([body], "ollama")
    assert batched[1] is WireFormatError
    with one_by_one():
        assert outcome([body], "ollama") == batched


@pytest.mark.parametrize("provider", sorted(BODIES))
def test_batch_is_taken_and_gives_the_text(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The property above could pass with the batch never taken: count the frames that still
    # went one by one.
    seen: list[int] = []
    original = TemplateFrames._one_by_one

    def spy(
        self: TemplateFrames, frames: list[Any], start: int, out: list[Any], early: bool
    ) -> int:
        end = original(self, frames, start, out, early)
        seen.append(end - start)
        return end

    def ollama_spy(self: OllamaDecoder, line: bytes, out: list[Any]) -> None:
        seen.append(1)
        original_line(self, line, out)

    original_line = OllamaDecoder._line
    monkeypatch.setattr(TemplateFrames, "_one_by_one", spy)
    monkeypatch.setattr(OllamaDecoder, "_line", ollama_spy)
    texts = [f" word{i} \\\"quoted\\\" \\u00e9" for i in range(200)]
    insides = [t.encode() for t in texts]
    # (an Ollama time is batched only when it is plain: these go in the texts)
    body = ollama_body(insides, times=False) if provider == "ollama" else BODIES[provider](insides)
    response = llm_rx.reassemble(body, provider)
    assert response.complete
    assert sum(seen) < 10  # the head, the first delta (learned from) and the tail
    assert ' word198 "quoted" é' in response.text
    with one_by_one():
        assert llm_rx.reassemble(body, provider) == response


# What could make a read's lines, taken as one block, pass for usual lines: the block's own
# separators raw, a middle or a line end where none was (or none where one was), zeros.
_BLOCK_INSERTS = [b'",\t"', b'",\n0,\n"', b"\t", b"\n", b"0", b",0,", b'"', b"\\",
                  b'","message":{"role":"assistant","content":"',
                  b'"},"done":false}\n{"model":"m","created_at":"', b'"},"done":false}', b"\r"]


@settings(max_examples=150, deadline=None)
@example(edits=[(400, 0, 1), (520, 0, 0)], cuts=[])  # (a middle added, another taken out)
@given(
    edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 60),
                             st.integers(0, len(_BLOCK_INSERTS) - 1)), max_size=3),
    cuts=st.lists(st.integers(0, 10_000), max_size=4),
)
def test_batch_ollama_block_decodes_exactly_as_line_by_line(
    edits: list[tuple[int, int, int]], cuts: list[int]
) -> None:
    # bug class: a read's lines parsed as one block (two replacements, one array) where one
    # line has a middle too few and another one too many, a separator look-alike was in a
    # string, or a line end was taken from inside a string: texts shifted or read wrong
    body = ollama_body([word.encode() for word in _WORDS] * 3, times=False)
    for at, width, which in edits:
        at %= len(body)
        body = body[:at] + _BLOCK_INSERTS[which] + body[at + width % 8 :]
    chunks = split_at(body, [cut % len(body) for cut in cuts])
    batched = outcome(chunks, "ollama")
    with one_by_one():
        assert outcome(chunks, "ollama") == batched


def test_batch_ollama_block_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    # The property above could pass with the block never taken: the lines of the reads after
    # the first are not framed one by one.
    blocks: list[int] = []
    original = OllamaShortcuts._whole_lines

    def spy(self: OllamaShortcuts, block: bytes, out: list[Any]) -> bool:
        taken = original(self, block, out)
        blocks.append(taken)
        return taken

    monkeypatch.setattr(OllamaShortcuts, "_whole_lines", spy)
    body = ollama_body([f" w{i} \\\"q\\\"\\u00e9".encode() for i in range(300)], times=False)
    response = llm_rx.reassemble(split_at(body, list(range(500, len(body) - 400, 700))), "ollama")
    assert sum(blocks) >= len(blocks) - 3  # (all but the first reads and the last)
    assert response.text.endswith(' w299 "q"é')
    with one_by_one():
        assert llm_rx.reassemble(body, "ollama") == response
