"""The compiled core (``llm_rx/speed/_scan.c``, read by ``llm_rx.speed.core``) changes nothing:
every capture decodes to the same events and errors with it and without it (the Python
shortcuts it runs over), however the bytes are cut; its one entry point reads exactly as its
twin below on any input; it keeps no reference and no state; and it can be turned off."""

from __future__ import annotations

import gc
import os
import struct
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import llm_rx
from benchmarks import real_streams
from benchmarks.sizes import _frames
from llm_rx import speed
from llm_rx.errors import LlmRxError
from llm_rx.sources._engine import decode_all
from llm_rx.speed import core
from llm_rx.wire.eventstream import EventStreamDecoder, message_encoder

from ..captures import CAPTURES
from ..fuzz.twin import twin
from ..helpers import kinds, reads_of
from .frames import frames_of

needs_core = pytest.mark.skipif(
    core.scan is None, reason="the compiled core is not in use (not built, or turned off)")


def test_compiled_says_whether_the_core_is_in_use() -> None:
    # bug class: a CI or an install that silently tests or ships the pure-Python path only
    # (the flag lies), or an environment switch that does not switch
    assert speed.compiled is (core.scan is not None)
    assert speed.compiled is (speed.compiled and not os.environ.get("LLM_RX_NO_EXTENSIONS"))
    if os.environ.get("CI") and not os.environ.get("LLM_RX_NO_EXTENSIONS"):
        assert speed.compiled, "the CI builds the extension: it must be in use"
    made = {name: cls.__name__ for name, cls in speed.decoders().items()}
    assert all(name.endswith("Compiled") is speed.compiled for name in made.values())
    script = ("import llm_rx.speed as s; "
              "print(s.compiled, sorted(c.__name__ for c in s.decoders().values()))")
    env = {**os.environ, "LLM_RX_NO_EXTENSIONS": "1"}
    off = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=60, check=True).stdout
    assert off.startswith("False")
    assert "Compiled" not in off


def _outcome(make: Callable[[], Any], reads: list[bytes]) -> object:
    events: list[Any] = []
    try:
        decode_all(make(), reads, events.extend)
    except LlmRxError as error:
        return kinds(events), type(error), error.message, error.raw
    return kinds(events), None


_PROVIDERS = {c.provider for c in CAPTURES} & set(speed.decoders())


@needs_core
@pytest.mark.parametrize("capture", [c for c in CAPTURES if c.provider in _PROVIDERS],
                         ids=lambda c: c.name)
def test_core_and_python_shortcuts_decode_every_capture_the_same(capture: Any) -> None:
    # bug class: a frame the C loop reads otherwise than the Python shortcut it runs over
    # (a string decoded otherwise, a frame taken across a read or past its end, an event
    # lost or repeated where the loop hands a frame back), at any cut of the reads
    compiled = speed.decoders()[capture.provider]
    python = compiled.python  # type: ignore[attr-defined]
    body = capture.data
    frames = [data for _, data in frames_of(capture)]
    for reads in ([body], reads_of(body, 1024), reads_of(body, 97), reads_of(body, 5), frames):
        assert _outcome(lambda: compiled(1 << 20), reads) == _outcome(
            lambda: python(1 << 20), reads)
    with speed.fast_paths(False):
        plain = llm_rx.reassemble([body], capture.provider)
    assert llm_rx.reassemble(reads_of(body, 1024), capture.provider) == plain


# -- the entry point and its twin -----------------------------------------------------------

_PIECE = st.sampled_from([b"", b'"', b'{"a":"', b'","b":', b"}", b"}\n\n", b'"}', b"data: ",
                          b"x", b":", b",", b" "])
_INSIDE = st.sampled_from([b"hi", b"", b"\\n", b'\\"', b"\\u00e9", b"\\ud83d\\ude00",
                           b"\\ud800", b"\\udc00x", "é".encode(), b"\xc3", b"\xff", b"\\x",
                           b"\x01", b"12", b"007", b"0", b"9" * 19, b"   ", b"ab1", b'"', b"\\"])


@st.composite
def programs(draw: Callable[[Any], Any]) -> tuple[bytes, tuple[bytes, ...], bytes, int, int]:
    holes = bytes(draw(st.lists(st.sampled_from(b"SANIP"), min_size=1, max_size=4)))
    pieces = [draw(_PIECE) for _ in range(len(holes) + 1)]
    for i, hole in enumerate(holes):  # (a hole's next piece stops it: never a digit after I)
        if not pieces[i + 1] or pieces[i + 1][:1].isdigit():
            pieces[i + 1] = b'"' + pieces[i + 1].lstrip(b"0123456789")
    frames = []
    for _ in range(draw(st.integers(0, 4))):
        frames.append(b"".join(p + draw(_INSIDE) for p in pieces[:-1]) + pieces[-1])
    data = b"".join(frames)
    if data and draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return data, tuple(pieces), holes, draw(st.integers(0, 3)), draw(st.integers(1, 200))


@needs_core
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=programs())
def test_scan_reads_as_its_twin(case: tuple[bytes, tuple[bytes, ...], bytes, int, int]) -> None:
    # bug class: the C loop reads a string otherwise than orjson (an escape, a surrogate,
    # invalid UTF-8, a control character), takes a hole greedier or lazier than its
    # definition, reads past a frame's bound or the data's end
    data, pieces, holes, pos, most = case
    pos = min(pos, len(data))
    if holes.count(b"S") > 1:
        holes = holes.replace(b"S", b"A")
    assert core.scan is not None
    values: list[str] = []
    assert (core.scan(data, pos, pieces, holes, values, most), values) == twin(
        data, pos, pieces, holes, most)


@needs_core
@pytest.mark.parametrize("args", [
    (b"x", 0, (b"x",), b"S", [], 9), (b"x", 2, (b"x",), b"", [], 9), ("x", 0, (b"x",), b"", [], 9),
    (b"x", -1, (b"x",), b"", [], 9), (b"x", 0, ("x",), b"", [], 9), (b"x", 0, (b"x",), b"", (), 9),
    (b"x", 0, (b"x", b"y"), b"Z", [], 9), (b"x", 0, (b"",) * 40, b"A" * 39, [], 9),
    (b"xy", 0, (b"",), b"", [], 9), (b"xy", 0, (b"", b""), b"P", [], 9),  # (reads nothing)
])
def test_scan_refuses_what_it_cannot_read(args: tuple[Any, ...]) -> None:
    # bug class: an argument of the wrong type or out of range read as memory (a crash), or
    # a program that reads no byte taken as a frame forever (found by the fuzzer: a hang)
    assert core.scan is not None
    try:
        result = core.scan(*args)
    except (TypeError, ValueError):
        return
    assert result[1] == 0  # (an unknown hole reads no frame)


@needs_core
def test_scan_keeps_no_reference_and_no_state() -> None:
    # bug class: a reference count leaked per call or per string (a long run's memory grows),
    # or state kept between calls that two threads would share
    assert core.scan is not None
    scan = core.scan
    data = b'{"t":"h\\u00e9llo"}\n' * 50 + b'{"t":"cut'
    pieces, holes = (b'{"t":"', b'"}\n'), b"S"
    before = sys.getrefcount(data), sys.getrefcount(pieces), sys.getrefcount(holes)
    results: list[Any] = []

    def run() -> None:
        for _ in range(2000):
            out: list[str] = []
            results.append((scan(data, 0, pieces, holes, out, 100), len(out)))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert (sys.getrefcount(data), sys.getrefcount(pieces), sys.getrefcount(holes)) == before
    assert set(results) == {((50 * 19, 50, 0, 49 * 19, True), 50)}
    tracemalloc.start()
    try:
        for size in (100, 1000):
            for _ in range(size):
                scan(data, 0, pieces, holes, [], 100)
            gc.collect()
            if size == 100:
                start = tracemalloc.get_traced_memory()[0]
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 4096


_HEADERS = {":event-type": "contentBlockDelta", ":content-type": "application/json",
            ":message-type": "event"}


@st.composite
def messages(draw: Callable[[Any], Any]) -> tuple[bytes, bytes, int]:
    """Event-stream messages of one header block around payloads of one program, some of
    them with another header block, a byte changed (a CRC, a length) or cut short."""
    encode = message_encoder(_HEADERS)
    other = message_encoder({**_HEADERS, ":event-type": "metadata"})
    data = b""
    for _ in range(draw(st.integers(0, 5))):
        payload = b'{"contentBlockIndex":0,"delta":{"text":"' + draw(_INSIDE) + b'"},"p":"' + (
            draw(st.sampled_from([b"abc", b"", b"a_b", b"Z9"]))) + b'"}'
        data += (other if draw(st.integers(0, 5)) == 0 else encode)(payload)
    if data and draw(st.booleans()):
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if data and draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return data, encode(b"")[12:-4], draw(st.integers(16, 400))


def _messages_twin(data: bytes, block: bytes, most: int) -> tuple[int, int, list[str]]:
    """What ``scan_messages`` reads, by the plain framer and the twin of ``scan``."""
    pieces = (b'{"contentBlockIndex":0,"delta":{"text":"', b'","p":"', b'"}')
    at, count, values = 0, 0, []
    framer = EventStreamDecoder(most)
    while at < len(data):
        try:
            found = framer.decode(data[at:])
        except LlmRxError:
            break
        framer = EventStreamDecoder(most)
        if not found or dict(found[0].headers) != _HEADERS:
            break
        (total,) = struct.unpack_from(">I", data, at)
        if data[at + 12 : at + 12 + len(block)] != block:
            break
        payload = found[0].payload
        (stop, frames, *_), strings = twin(payload, 0, pieces, b"SN", len(payload))
        if (stop, frames) != (len(payload), 1):
            break
        values += strings
        at += total
        count += 1
    return at, count, values


@needs_core
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=messages())
def test_scan_messages_reads_as_the_framer_and_the_twin(case: tuple[bytes, bytes, int]) -> None:
    # bug class: a message taken with a bad CRC, another header block, a length past the
    # data or the bound, or a payload the program does not read whole
    data, block, most = case
    assert core.scan_messages is not None
    values: list[str] = []
    pieces = (b'{"contentBlockIndex":0,"delta":{"text":"', b'","p":"', b'"}')
    end, count, *_ = core.scan_messages(data, 0, block, pieces, b"SN", values, most)
    assert (end, count, values) == _messages_twin(data, block, most)


_GENERATED = [("openai-chat", real_streams.openai_chat), ("anthropic", real_streams.anthropic),
              ("gemini", real_streams.gemini), ("ollama", real_streams.ollama),
              ("openai-responses", real_streams.responses),
              ("bedrock-converse", real_streams.bedrock)]


@needs_core
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.sampled_from(_GENERATED), seed=st.integers(0, 10_000),
       digits=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(b"0123456789")), max_size=4),
       read=st.sampled_from([None, 1024, 333, 0]))
def test_core_reads_generated_replies_with_changed_counts_as_python(
    which: tuple[str, Any], seed: int, digits: list[tuple[float, int]], read: int | None,
) -> None:
    # bug class: a run whose counts change inside it (Gemini's usage, Responses' sequence
    # numbers, Bedrock's lengths and checksums) read as if they did not, at any read size
    provider, make = which
    body = bytearray(make(60, seed))
    places = [at for at, byte in enumerate(body) if 0x30 <= byte <= 0x39]
    for where, digit in digits:
        body[places[int(where * (len(places) - 1))]] = digit
    data = bytes(body)
    reads = [data] if read is None else (
        [data[i : i + read] for i in range(0, len(data), read)] if read else _frames(data))
    compiled = speed.decoders()[provider]
    python = compiled.python  # type: ignore[attr-defined]
    assert _outcome(lambda: compiled(1 << 20), reads) == _outcome(lambda: python(1 << 20), reads)
    with speed.fast_paths(False):
        plain = _reassembled(reads, provider)
    assert _reassembled(reads, provider) == plain


def _reassembled(reads: list[bytes], provider: str) -> object:
    try:
        return llm_rx.reassemble(reads, provider).model_dump(mode="json")
    except LlmRxError as error:
        return type(error), error.message, error.raw


@needs_core
def test_the_core_shadows_nothing_of_the_decoders_it_runs_over() -> None:
    # bug class: a name of the core's loop (an attribute, a method) that a decoder it is
    # mixed over already uses for something else (found: ``_read`` and ``_folded``, which
    # turned a decoder's own method into the core's state)
    shared = {"decode", "flush", "fold_into", "reconnected", "python", "_framing", "_named"}
    own = {name for name in core.Scanning.__dict__ if not name.startswith("__")} - shared
    for compiled in speed.decoders().values():
        for cls in compiled.__mro__[2:]:
            assert not own & set(vars(cls)), (cls.__name__, own & set(vars(cls)))
        assert not own & set(vars(compiled(1 << 20))), compiled.__name__


@needs_core
@pytest.mark.parametrize(("provider", "make"), _GENERATED, ids=[p for p, _ in _GENERATED])
@pytest.mark.parametrize("read", [None, 1024, 0], ids=["whole", "1KiB", "frame"])
def test_the_core_reads_most_of_every_wire(provider: str, make: Any, read: int | None,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # bug class: a core that silently never runs (a program never learnt, a framing never
    # recognised): every equivalence test above would then compare the Python path with
    # itself
    read_by_core = 0

    def counted(scanner: Any) -> Any:
        def scan(*args: Any) -> Any:
            nonlocal read_by_core
            found = scanner(*args)
            read_by_core += found[1]
            return found

        return scan

    monkeypatch.setattr(core, "scan", counted(core.scan))
    monkeypatch.setattr(core, "scan_messages", counted(core.scan_messages))
    data = make(200, 7)
    reads = [data] if read is None else (
        [data[i : i + read] for i in range(0, len(data), read)] if read else _frames(data))
    assert len(llm_rx.reassemble(reads, provider).text) > 0
    assert read_by_core >= 190  # (of 200 deltas: the first is the decoder's, to learn from)


@needs_core
@pytest.mark.parametrize("usage", [b"{}", b'{"a": [' + b", ".join([b"1"] * 40) + b"]}"],
                         ids=["no count", "more counts than the core takes"])
def test_core_reads_gemini_chunks_whatever_their_counts(usage: bytes) -> None:
    # bug class: a learnt chunk whose counts make no program the core can read (none at all,
    # found by the seeded fuzzer; more holes than it takes) failing the reply instead of
    # leaving it to the Python path
    body = b"".join(
        b'data: {"candidates": [{"content": {"parts": [{"text": "w%d "}],"role": "model"},'
        b'"index": 0}],"usageMetadata": ' % n + usage + b'}\r\n\r\n' for n in range(40))
    compiled = speed.decoders()["gemini"]
    for reads in ([body], reads_of(body, 100)):
        assert _outcome(lambda: compiled(1 << 20), reads) == _outcome(
            lambda: compiled.python(1 << 20), reads)  # type: ignore[attr-defined]
    assert llm_rx.reassemble(body, "gemini").text == "".join(f"w{n} " for n in range(40))
