"""The shortcuts change nothing: every capture, and every capture mutated, decodes to the same
events, the same error (type, message, frame) and the same ``Response`` with the shortcuts on
and off (:mod:`llm_rx.speed`), however its bytes are cut into reads."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx import speed
from llm_rx.errors import LlmRxError
from llm_rx.events import TextDelta, ThinkingDelta
from llm_rx.sources._engine import decode_all, new_decoder
from llm_rx.speed import fast_paths, spans, templates
from llm_rx.speed import ollama as fast_ollama
from llm_rx.speed import responses as fast_responses
from llm_rx.speed.batches import TemplateFrames
from llm_rx.wire.base import ChangedFields, SSEPayloadDecoder

from ..captures import CAPTURES, Capture
from ..helpers import outcome, split_at
from .frames import body_of, frames_of

_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_VALUE = re.compile(rb'(":\s?)("(?:[^"\\\n]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null|\[\]|\{\})')
# What may go into a string: escapes good and bad, quotes, UTF-8, look-alikes of a frame's end.
_INSERTS = [b'\\"', b"\\\\", b"\\u00e9", b"\\ud83d\\ude00", b"\\n", b'"', b"\\", b"\\x",
            b"\\ud800", "\u00e9".encode(), b'"},', b"\n", b"\xc3"]
# What may replace a byte of the body.
_BYTES = [b"x", b",", b'"', b"\x00", b"}", b"]", b"\n", b"\xff"]
# What may replace a value: another type.
_VALUES = [b"false", b"null", b"[]", b"{}", b'"x"', b"1", b"-0.5", b"true", b"[1]", b'""']


def _in_string(data: bytes, draw: Callable[[Any], Any]) -> bytes:
    strings = list(_STRING.finditer(data))
    if not strings:
        return data
    found = strings[draw(st.integers(0, len(strings) - 1))]
    at = draw(st.integers(found.start() + 1, found.end() - 1))
    return data[:at] + draw(st.sampled_from(_INSERTS)) + data[at:]


def _retyped(data: bytes, draw: Callable[[Any], Any]) -> bytes:
    values = list(_VALUE.finditer(data))
    if not values:
        return data
    found = values[draw(st.integers(0, len(values) - 1))]
    return data[: found.start(2)] + draw(st.sampled_from(_VALUES)) + data[found.end(2) :]


class Case(NamedTuple):
    """A mutated capture cut into reads; its repr names what was done, not the bytes."""

    provider: str
    body: bytes
    chunks: list[bytes]
    done: str

    def __repr__(self) -> str:
        return f"Case({self.done}, {len(self.body)} bytes in {len(self.chunks)} reads)"


@st.composite
def mutated(draw: Callable[[Any], Any]) -> Case:
    """A capture with a few mutations, then cut into reads (and maybe cut short)."""
    capture = draw(st.sampled_from(CAPTURES))
    frames = frames_of(capture)
    done = [capture.name]
    for _ in range(draw(st.integers(0, 3))):
        if not frames:
            break
        at = draw(st.integers(0, len(frames) - 1))
        headers, data = frames[at]
        how = draw(st.sampled_from(["string", "string", "type", "type", "drop", "twice"]))
        done.append(f"{how} frame {at}")
        if how == "drop":
            del frames[at]
        elif how == "twice":
            frames.insert(at, frames[at])
        else:
            frames[at] = (headers, (_in_string if how == "string" else _retyped)(data, draw))
    body = body_of(frames)
    if body and draw(st.integers(0, 3)) == 0:  # a byte changed on the wire (a CRC, a comma)
        at = draw(st.integers(0, len(body) - 1))
        body = body[:at] + draw(st.sampled_from(_BYTES)) + body[at + 1 :]
        done.append(f"byte {at} {body[at : at + 1]!r}")
    if body and draw(st.booleans()):
        body = body[: draw(st.integers(0, len(body) - 1))]
        done.append(f"cut at {len(body)}")
    cuts = draw(st.lists(st.integers(0, max(len(body), 1)), max_size=6))
    return Case(capture.provider, body, split_at(body, cuts), ", ".join(done))


def _reassembled(chunks: list[bytes], provider: str) -> object:
    try:
        return llm_rx.reassemble(chunks, provider).model_dump(mode="json")
    except LlmRxError as error:
        return (type(error), error.message, error.raw)


def _both(chunks: list[bytes], provider: str) -> tuple[object, object]:
    """The decoded outcome and the reassembled one. (A frame that crashes a decoder with
    another exception is the fuzzer's to find; here it must only crash both paths alike.)"""
    try:
        return outcome(chunks, provider), _reassembled(chunks, provider)
    except Exception as error:  # noqa: BLE001 - compared, not hidden
        return type(error), str(error)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_fast_paths_off_decode_mutated_captures_the_same(case: Case) -> None:
    # bug class: a shortcut (template, batch, learned shape, framer split, fused step) that
    # reads a frame the general path reads otherwise, or an error whose frame or message
    # depends on where the reads were cut
    provider, body, chunks, _ = case
    fast = _both(chunks, provider)
    with fast_paths(False):
        slow = _both(chunks, provider)
        whole = _both([body], provider) if body else slow
    assert fast == slow
    assert slow == whole


# -- a live stream: a read per frame ---------------------------------------------------------

_SSE = [c for c in CAPTURES if c.name.endswith(".sse")]


def _read_mutation(frame: bytes, how: str) -> list[bytes]:
    """A frame as a server may send it otherwise, as one read or two."""
    if how == "space":  # padding before the blank line
        return [frame[:-2] + b" \n\n"] if frame.endswith(b"\n\n") else [frame]
    if how == "crlf":
        return [frame.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")]
    if how == "id":
        return [b"id: 7\n" + frame]
    if how == "error":  # the event's name is error
        return [b"event: error\n" + frame.split(b"\n", 1)[1] if frame.startswith(b"event:")
                else b"event: error\n" + frame]
    if how == "named":  # a name the payload does not give
        return [b"event: delta\n" + frame.split(b"\n", 1)[1] if frame.startswith(b"event:")
                else b"event: delta\n" + frame]
    if how == "comment":
        return [b": keep-alive\n" + frame]
    if how == "nospace":  # "data:{...}"
        return [frame.replace(b"data: ", b"data:", 1)]
    if how == "half":  # the frame in two reads
        return [frame[: len(frame) // 2], frame[len(frame) // 2 :]]
    if how == "early":  # the blank line arrives with the next read
        return [frame[:-1], frame[-1:]]
    if how == "stray":  # a read that ends inside a line the frame then continues
        return [b": keep-alive", frame]
    if how == "open":  # a read that opens an event the frame then continues
        return [b"data: {}\n", frame]
    return [frame, frame]  # "twice"


@st.composite
def live_reads(draw: Callable[[Any], Any]) -> Case:
    """An SSE capture a frame per read, as a live server writes it, some frames mutated in
    their strings or in their bytes around the payload, some reads joined."""
    capture = draw(st.sampled_from(_SSE))
    reads = [data for _, data in frames_of(capture)]
    done = [capture.name]
    if draw(st.integers(0, 3)) == 0:  # a server that sends every frame so
        how = draw(st.sampled_from(["space", "crlf", "id", "named", "error", "comment",
                                    "nospace"]))
        reads = [read for frame in reads for read in _read_mutation(frame, how)]
        done.append(f"{how} everywhere")
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(reads) - 1))
        how = draw(st.sampled_from(["string", "type", "space", "crlf", "id", "error", "named",
                                    "comment", "nospace", "half", "early", "stray", "open",
                                    "twice", "join"]))
        done.append(f"{how} read {at}")
        if how == "join":
            reads[at : at + 2] = [b"".join(reads[at : at + 2])]
        elif how in ("string", "type"):
            reads[at] = (_in_string if how == "string" else _retyped)(reads[at], draw)
        else:
            reads[at : at + 1] = _read_mutation(reads[at], how)
    if draw(st.booleans()):
        reads = reads[: draw(st.integers(0, len(reads)))]
        done.append(f"cut after {len(reads)} reads")
    return Case(capture.provider, b"".join(reads), reads, ", ".join(done))


def _fused(chunks: list[bytes], provider: str) -> object:
    """The reply through ``to_response()`` right after the source (which folds the strings
    of a read that is one template frame without making its event)."""
    results: list[Any] = []
    errors: list[Exception] = []
    llm_rx.from_bytes(chunks, provider=provider).pipe(lxo.to_response()).subscribe(
        results.append, errors.append)
    if errors:
        error = errors[0]
        return (type(error), getattr(error, "message", str(error)), getattr(error, "raw", None))
    return results[0].model_dump(mode="json")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=live_reads())
def test_fast_paths_off_decode_live_reads_the_same(case: Case) -> None:
    # bug class: the read shortcut (a read that is one whole frame of the latest template,
    # decoded without the framer, folded without its event) taken for a read whose frame the
    # framer reads otherwise (padding, CR LF, an id, an error or other event name, half a
    # frame, a blank line still to come) or after the decoder's state changed
    provider, _, chunks, _ = case
    fast = _both(chunks, provider), _fused(chunks, provider)
    with fast_paths(False):
        slow = _both(chunks, provider), _fused(chunks, provider)
    assert fast == slow


# (Anthropic's recorded frames are padded as the API pads them: its templates are learnt and
# matched with the padding taken out, see llm_rx/speed/anthropic.py)
@pytest.mark.parametrize("name", ["openai/chat-text-basic.sse",
                                  "anthropic/thinking-signature.sse"])
def test_live_reads_take_the_read_shortcut(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # bug class: a read shortcut never taken (the property above then compares the general
    # path with itself), or one that makes the events a fold takes directly
    capture = next(c for c in CAPTURES if c.name == name)
    reads = [data for _, data in frames_of(capture)]
    general = 0
    run = SSEPayloadDecoder._run

    def counted(self: SSEPayloadDecoder, *args: Any) -> Any:
        nonlocal general
        general += 1
        return run(self, *args)

    monkeypatch.setattr(SSEPayloadDecoder, "_run", counted)
    events: list[Any] = []
    folded: list[tuple[Any, int, str]] = []

    def fold(event_type: Any, block: int, before: list[Any] | None = None
             ) -> Callable[[str], None]:
        if before:  # (the read's events before the strings: taken first)
            events.extend(before)
            before.clear()
        return lambda text: folded.append((event_type, block, text))

    decode_all(new_decoder(capture.provider), reads, events.extend, fold=fold)
    assert general < 12 < len(folded)
    blocks = llm_rx.reassemble(reads).content
    for index, block in enumerate(blocks):  # the strings made into events, then folded
        made = "".join(e[1] for e in events if type(e) in (TextDelta, ThinkingDelta)
                       and e[0] == index)
        assert made + "".join(t[2] for t in folded if t[1] == index) == block.text  # type: ignore[union-attr]


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_fast_paths_off_decode_every_capture_the_same(capture: Capture) -> None:
    fast = _both([capture.data], capture.provider)
    with fast_paths(False):
        assert _both([capture.data], capture.provider) == fast


# -- the switch turns every shortcut off -----------------------------------------------------


def _refuse(*_: Any, **__: Any) -> Any:
    raise AssertionError("a shortcut was taken with the shortcuts off")


def test_fast_paths_off_no_decoder_learns_or_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # bug class: a shortcut the switch does not reach, so a test "with the shortcuts off"
    # still runs it and compares it with itself
    monkeypatch.setattr(templates.ByteTemplate, "learn", _refuse)
    monkeypatch.setattr(TemplateFrames, "_batch", _refuse)
    monkeypatch.setattr(spans.Spans, "learn", _refuse)
    monkeypatch.setattr(fast_ollama.Usual, "learn", _refuse)
    monkeypatch.setattr(fast_ollama.OllamaShortcuts, "_usual_run", _refuse)
    monkeypatch.setattr(TemplateFrames, "_read_of", _refuse)
    monkeypatch.setattr(TemplateFrames, "_appender", _refuse)
    monkeypatch.setattr(fast_responses, "learn", _refuse)
    monkeypatch.setattr(speed, "decoders", _refuse)  # (no decoder with shortcuts is made)
    with fast_paths(False):
        for capture in CAPTURES:
            llm_rx.reassemble(capture.data, capture.provider)


def test_no_layout_is_shared_between_streams() -> None:
    # bug class: a layout learned by one stream and read by the next
    known = frozenset({"fast-paths-test"})
    first = ChangedFields(known)
    first.changes({"a": 1, "fast-paths-test": 2})
    assert ChangedFields(known)._layouts == {}


@pytest.mark.parametrize(
    "operator", [lxo.to_response, lxo.accumulate, lxo.text_only, lxo.thinking_only]
)
def test_fast_paths_off_operators_give_the_same(operator: Callable[[], Any]) -> None:
    # bug class: an operator that reads the switch (its one body taking another way with the
    # shortcuts off); the decoder's and the builder's shortcuts change nothing it gives,
    # a read at a time (right after the source) or an event at a time (behind a hop)
    capture = next(c for c in CAPTURES if c.name == "anthropic/thinking-signature.sse")

    def run(hop: bool) -> list[Any]:
        values: list[Any] = []
        source = llm_rx.from_bytes(capture.data, provider="anthropic")
        hopped = source.pipe(ops.map(lambda event: event)) if hop else source
        hopped.pipe(operator()).subscribe(values.append)
        return [_comparable(v) for v in values]

    values = run(hop=False)
    with fast_paths(False):
        assert run(hop=False) == run(hop=True) == values
    assert run(hop=True) == values
    assert values


def _comparable(value: Any) -> Any:
    response = getattr(value, "response", value)
    return response.model_dump(mode="json") if hasattr(response, "model_dump") else response


def test_a_padded_frame_whose_last_brace_is_another_byte_is_no_template_hit() -> None:
    # bug class: a batch that takes the padding out of every frame by replacing its last
    # byte with a brace, so a frame ending in another byte matched a template and decoded
    # where the plain decoder refuses it
    body = next(c for c in CAPTURES if c.name == "anthropic/thinking-signature.sse").data
    events = body.split(b"\n\n")
    deltas = [i for i, e in enumerate(events) if b'"text_delta"' in e or b"thinking_delta" in e]
    at = deltas[len(deltas) // 2]
    assert events[at].endswith(b"}")
    events[at] = events[at][:-1] + b"x"
    broken = b"\n\n".join(events)
    fast = _both([broken], "anthropic")
    with fast_paths(False):
        assert _both([broken], "anthropic") == fast
