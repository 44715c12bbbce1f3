"""OpenAI's chunks end with a random ``"obfuscation"`` string the general path drops: the
templates skip it (``ByteTemplate``'s middle), and stay equal to the general path whatever
that string is (letters and digits, escapes, quotes, another type, absent), in live reads, in
batches and in reads cut anywhere."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx import speed
from llm_rx.events import TextDelta
from llm_rx.sources._engine import decode_all, new_decoder
from llm_rx.speed import fast_paths
from llm_rx.speed.batches import TemplateFrames
from llm_rx.speed.templates import ByteTemplate
from llm_rx.wire.base import SSEPayloadDecoder

from ..captures import CAPTURES
from ..helpers import split_at
from .frames import frames_of
from .test_fast_paths import _both, _fused

_OBFUSCATED = [c for c in CAPTURES if c.provider == "openai-chat"
               and c.name.endswith(".sse") and b'"obfuscation":"' in c.data]
_VALUE = re.compile(rb'"obfuscation":("[^"]*")')
# What may replace a chunk's obfuscation value (with its quotes): other padding, not padding,
# not JSON (a bad escape, bad UTF-8, a raw tab: an error the general path raises).
_OTHERS = [b'""', b'"a\\"b"', b'"\\u0041"', b'"\xc3\xa9"', b'"a b"', b'"a\\\\"', b'"-_"',
           b"1", b"null", b"{}", b'["x"]', b'"x","obfuscation":"y"', b'"x"},"z":"',
           b'"x"} ', b'"\\"},\\"x\\":\\""', b'"\\x"', b'"\xff"', b'"a\tb"', b'"\\ud800"']


def test_obfuscation_capture_is_here() -> None:
    assert "openai/chat-text-obfuscation.sse" in [c.name for c in _OBFUSCATED]


def test_template_skips_the_obfuscation_string() -> None:
    # bug class: the template kept the random string in its suffix, so no later chunk matched
    data = (b'{"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}],'
            b'"obfuscation":"aB3"}')
    template = ByteTemplate.learn(data, b'"delta":{"content":"', "Hi", b'"obfuscation":"')
    assert template is not None
    assert template.suffix == b'"}'
    assert template.middle == b'}}],"obfuscation":"'
    nested = data.replace(b'"obfuscation":"aB3"}', b'"x":{"obfuscation":"aB3"}}')
    kept = ByteTemplate.learn(nested, b'"delta":{"content":"', "Hi", b'"obfuscation":"')
    assert kept is not None
    assert kept.middle == b""  # (not the frame's last key: not skipped)


@st.composite
def obfuscated(draw: Callable[[Any], Any]) -> tuple[list[bytes], list[list[bytes]]]:
    """An obfuscated capture, its text chunks repeated (so batches are tried), some chunks'
    obfuscation values replaced; as frames, and cut in three ways."""
    capture = draw(st.sampled_from(_OBFUSCATED))
    frames = [data for _, data in frames_of(capture)]
    at = draw(st.integers(1, max(len(frames) - 3, 1)))
    frames[at:at] = frames[at : at + 2] * draw(st.integers(0, 12))
    for _ in range(draw(st.integers(0, 4))):
        index = draw(st.integers(0, len(frames) - 1))
        found = _VALUE.search(frames[index])
        if found is None:
            continue
        value = draw(st.one_of(
            st.sampled_from(_OTHERS),
            st.text("aZ09", max_size=12).map(lambda text: b'"%s"' % text.encode())))
        frames[index] = frames[index][: found.start(1)] + value + frames[index][found.end(1) :]
    body = b"".join(frames)
    cuts = draw(st.lists(st.integers(0, len(body)), max_size=5))
    return frames, [frames, [body], split_at(body, cuts)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=obfuscated())
def test_fast_paths_off_decode_mutated_obfuscation_the_same(
    case: tuple[list[bytes], list[list[bytes]]],
) -> None:
    # bug class: a chunk whose obfuscation value is not letters and digits (an escape, a
    # quote, another type, a key after it) read by the template as if it were
    _, ways = case
    for chunks in ways:
        fast = _both(chunks, "openai-chat"), _fused(chunks, "openai-chat")
        with fast_paths(False):
            slow = _both(chunks, "openai-chat"), _fused(chunks, "openai-chat")
        assert fast == slow


@pytest.mark.parametrize("repeat", [1, 40])
def test_obfuscated_live_reads_take_the_read_shortcut(
    repeat: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bug class: the read shortcut never taken on obfuscated chunks (the property above then
    # compares the general path with itself)
    capture = next(c for c in _OBFUSCATED if c.name == "openai/chat-text-obfuscation.sse")
    reads = [data for _, data in frames_of(capture)]
    reads[2:2] = reads[2:4] * (repeat - 1)
    general = 0
    run = SSEPayloadDecoder._run

    def counted(self: SSEPayloadDecoder, *args: Any) -> Any:
        nonlocal general
        general += 1
        return run(self, *args)

    monkeypatch.setattr(SSEPayloadDecoder, "_run", counted)
    events: list[Any] = []
    folded: list[str] = []
    decode_all(new_decoder("openai-chat"), reads, events.extend, fold=lambda *_: folded.append)
    assert general <= 6 < len(folded) + 6 <= len(reads)
    made = "".join(e[1] for e in events if type(e) is TextDelta)
    assert made + "".join(folded) == llm_rx.reassemble(reads).text


def test_obfuscated_chunks_are_read_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # bug class: runs of obfuscated chunks never batched (their suffixes vary)
    capture = next(c for c in _OBFUSCATED if c.name == "openai/chat-text-obfuscation.sse")
    frames = [data for _, data in frames_of(capture)]
    frames[2:2] = frames[2:4] * 40
    batched: list[bool] = []
    name = "_took" if speed.compiled else "_template_run"  # (the run the core reads, or not)
    run = getattr(TemplateFrames, name)

    def counted(self: TemplateFrames, *args: Any) -> Any:
        taken = run(self, *args)
        batched.append(len(args[0]) > 1 if name == "_took" else taken)
        return taken

    monkeypatch.setattr(TemplateFrames, name, counted)
    response = llm_rx.reassemble(b"".join(frames), "openai-chat")
    assert any(batched)
    with fast_paths(False):
        assert llm_rx.reassemble(b"".join(frames), "openai-chat") == response


@pytest.mark.parametrize("value", _OTHERS)
def test_fast_paths_off_decode_each_other_obfuscation_the_same(value: bytes) -> None:
    # bug class: one kind of value (not letters and digits) read by the template, in a chunk
    # the read shortcut and a batch would both take
    capture = next(c for c in _OBFUSCATED if c.name == "openai/chat-text-obfuscation.sse")
    frames = [data for _, data in frames_of(capture)]
    frames[2:2] = frames[2:4] * 20
    at = len(frames) - 6
    found = _VALUE.search(frames[at])
    assert found is not None
    frames[at] = frames[at][: found.start(1)] + value + frames[at][found.end(1) :]
    for chunks in (frames, [b"".join(frames)]):
        fast = _both(chunks, "openai-chat"), _fused(chunks, "openai-chat")
        with fast_paths(False):
            slow = _both(chunks, "openai-chat"), _fused(chunks, "openai-chat")
        assert fast == slow
