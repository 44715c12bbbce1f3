"""OpenAI Responses with shortcuts: the text delta frames of an open part, read as a pattern.

Every Responses frame differs from the one before it in more than its delta: its
``sequence_number`` grows by one and its ``obfuscation`` is random (letters and digits), and
hosts put the keys in different orders. A byte template (:mod:`.templates`) matches none of
them. When the plain decoder has decoded a text delta (``_text_delta``), the frame's bytes
become a regular expression instead (:class:`Pattern`): the same bytes, but for the delta
string, the sequence number, the obfuscation and the item's id, which may be anything of
their kind. The expression is then the same from one reply to the next of the same host:
compiled once, and kept in :mod:`re`'s own bounded cache. A later
frame the expression matches, while the part it was learnt on is still open, is a text delta
of that part with another string: parsed alone (a run of them at once, as one JSON array),
it is recorded where the plain decoder records it (the part's texts, checked at its
``.done``). A read that is one such whole event (``event:`` line, ``data:`` line, blank
line: a live stream's usual read) is decoded without the framer. Anything else goes to the
plain decoder, which gives the same events.
"""

from __future__ import annotations

import re
from itertools import repeat
from operator import attrgetter
from typing import Any, NamedTuple

import orjson

from ..events import Event, TextDelta
from ..wire._responses_items import Part
from ..wire.openai_responses import OpenAIResponsesDecoder
from .framing import Program
from .runs import BATCH, BATCH_TRIES, Runs
from .templates import json_strings

__all__ = ["Pattern", "ResponsesShortcuts"]

_loads = orjson.loads
_new = tuple.__new__
_DATA = attrgetter("data")

# The holes of a learnt frame: the key before a value, and what the value may be instead.
_DELTA = b'"delta":"'
# A JSON string's inside (checked when parsed): no quote, backslash or control character
# but in an escape (a raw line end would end the SSE line it is on).
_STRING = rb'([^"\\\x00-\x1f]*(?:\\[^\x00-\x1f][^"\\\x00-\x1f]*)*)'
_HOLES = (
    (b'"sequence_number":', re.compile(rb"(?:0|[1-9][0-9]{0,17})")),  # (64 bits at most)
    (b'"obfuscation":"', re.compile(rb"[A-Za-z0-9]*")),
    # (the part is the one at the frame's output and content index, whatever the item's id
    # says: the plain decoder reads it only for a part it has not seen)
    (b'"item_id":"', re.compile(rb'[\x20\x21\x23-\x5b\x5d-\x7e]*')),  # (ASCII, no escape)
)
# Each hole as the compiled core reads it (:mod:`.core`): the string, an integer, letters and
# digits (one at least: a frame with none goes to the expression), ASCII with no escape.
_CODES = {_STRING: ord("S"), **{hole.pattern: ord(code) for (_, hole), code in
                                 zip(_HOLES, "INA", strict=True)}}
# A frame's shape (its bytes between the holes, and the holes) -> its expressions: the same
# from one reply to the next of a host, compiled once per process.
_SHAPES: dict[tuple[tuple[bytes, ...], tuple[bytes, ...]],
              tuple[re.Pattern[bytes], re.Pattern[bytes]]] = {}
_MOST_SHAPES = 256
_NAME = rb"(?:event: ?response\.output_text\.delta\n)?data: ?"


class Pattern(NamedTuple):
    """A text delta frame as a regular expression (the string's inside its one group), the
    same for a whole read of one event, and the part they stand for."""

    frame: re.Pattern[bytes]
    read: re.Pattern[bytes]
    part: Part
    pieces: tuple[bytes, ...]  # (the compiled core's program: :mod:`.core`)
    holes: bytes


def _closing_quote(data: bytes, start: int) -> int:
    """Where the JSON string whose inside starts at ``start`` ends (its closing quote: the
    first one after an even number of backslashes), or -1."""
    end = start
    while (end := data.find(b'"', end)) >= 0:
        before = end
        while before > start and data[before - 1] == 0x5C:  # (a backslash)
            before -= 1
        if (end - before) % 2 == 0:
            return end
        end += 1
    return -1


def learn(data: bytes, value: str, part: Part) -> Pattern | None:
    """The pattern of ``data``, a text delta frame of ``part`` whose string is ``value``, if
    its keys occur once and it matches itself."""
    at = data.find(_DELTA)
    if at < 0 or data.find(_DELTA, at + 1) >= 0:
        return None
    start = at + len(_DELTA)
    end = _closing_quote(data, start)
    if end < 0:
        return None
    holes = [(start, end, _STRING)]
    for key, hole in _HOLES:
        found = data.find(key)
        if found < 0:
            continue
        if data.find(key, found + 1) >= 0:
            return None
        begin = found + len(key)
        match = hole.match(data, begin)
        if match is None:
            return None
        holes.append((begin, match.end(), hole.pattern))
    holes.sort()
    pieces, last = [], 0
    for begin, stop, _ in holes:
        if begin < last:
            return None
        pieces.append(data[last:begin])
        last = stop
    pieces.append(data[last:])
    shape = (tuple(pieces), tuple(hole for _, _, hole in holes))
    compiled = _SHAPES.get(shape)
    if compiled is None:
        compiled = _SHAPES[shape] = _compiled(*shape)
    itself = compiled[0].fullmatch(data)
    if itself is None or _loads(b'"' + itself[1] + b'"') != value:
        return None
    return Pattern(*compiled, part, shape[0], bytes(_CODES[hole] for hole in shape[1]))


def _compiled(pieces: tuple[bytes, ...], holes: tuple[bytes, ...]
              ) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """A shape's expressions (the frame's, a read's), kept for the next reply (a few
    hundred shapes at most: the oldest go first)."""
    if len(_SHAPES) >= _MOST_SHAPES:
        del _SHAPES[next(iter(_SHAPES))]
    body = b"".join(
        re.escape(piece) + hole for piece, hole in zip(pieces, (*holes, b""), strict=True))
    return re.compile(body), re.compile(_NAME + body + rb"\n\n")


def _taken(part: Part, found: re.Match[bytes]) -> Event | None:
    """The text delta of a frame a pattern matched, recorded where the plain decoder records
    it (the part's texts, checked at its ``.done``); ``None`` if its string is no valid JSON
    string (the plain decoder then reads the frame)."""
    try:
        value = _loads(b'"' + found[1] + b'"')
    except orjson.JSONDecodeError:
        return None
    if value.__class__ is not str:
        return None
    part.streamed = True
    part.texts.append(value)
    return _new(TextDelta, (part.index, value))


class ResponsesShortcuts(Runs, OpenAIResponsesDecoder):
    """The hot path over :class:`~llm_rx.wire.openai_responses.OpenAIResponsesDecoder`:
    text delta frames matching the last one's :class:`Pattern`; anything else goes to the
    decoder's own methods."""

    _pattern: Pattern | None = None
    # (a frame of this name decodes as its bare payload would: the compiled core may read it)
    _named = b"response.output_text.delta"

    def _program(self) -> Program | None:
        """The pattern as the compiled core reads it (:mod:`.core`), while its part is open."""
        pattern = self._pattern
        if pattern is None or not pattern.part.open or self.finished:
            return None
        if self._compiled is None or self._compiled.source is not pattern:
            self._compiled = Program(pattern, pattern.pieces, pattern.holes)
        return self._compiled

    _compiled: Program | None = None

    def _framer(self) -> Any:
        return self._sse

    def _took(self, values: list[str], chunk: bytes, first: int, last: int, same: bool,
              out: list[Event]) -> None:
        """A run of the pattern's frames the compiled core read: recorded as the plain
        decoder records them (the part's texts)."""
        assert self._pattern is not None
        part = self._pattern.part
        part.streamed = True
        part.texts.extend(values)
        self._deliver(TextDelta, part.index, values, out)  # type: ignore[attr-defined]

    def decode(self, chunk: bytes) -> list[Event]:
        pattern = self._pattern
        if (
            pattern is not None
            and (found := pattern.read.fullmatch(chunk)) is not None
            and pattern.part.open
            and not self.finished
            and len(chunk) <= self._sse.max_frame
            and self._sse.at_rest()
        ):
            event = _taken(pattern.part, found)
            if event is not None:
                return [event]
        return super().decode(chunk)

    def _text_delta(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        super()._text_delta(frame, raw, out)
        pattern = self._pattern
        if pattern is not None and pattern.frame.fullmatch(raw):
            return  # (a frame the pattern would have read: it holds)
        value = frame.get("delta")
        part = self._hot.get(
            (frame.get("output_index"), "content", frame.get("content_index")))
        if value.__class__ is not str or part is None or frame.get("logprobs"):
            self._pattern = None  # (the pattern stands for a delta string alone)
            return
        self._pattern = learn(raw, value, part)

    def _frames(self, frames: list[Any], out: list[Event]) -> None:
        """A read's frames: runs the pattern matches in batches where there are enough
        frames (a few tries in each slice of a huge read: linear in it), the others one by
        one (each step makes progress)."""
        if self._in_slices(frames, out, self._frames):
            return
        count = len(frames)
        tries = BATCH_TRIES if count >= BATCH else 0
        position = 0
        while position < count:
            if tries and self._pattern is not None:
                tries -= 1
                position = self._batch(frames, position, out)
            if position < count:
                position = self._one_by_one(frames, position, out, early=tries > 0)

    def _batch(self, frames: list[Any], start: int, out: list[Event]) -> int:
        """Decode the frames from ``start`` that the pattern matches, as one batch; returns
        the first it does not match."""
        pattern = self._pattern
        if pattern is None or not pattern.part.open or self.finished:
            return start
        try:
            datas = [frame if frame.__class__ is bytes else _DATA(frame)
                     for frame in frames[start:]]
        except AttributeError:  # pragma: no cover - (a frame is bytes or an SSEEvent)
            return start
        found: list[Any] = list(map(pattern.frame.fullmatch, datas))
        end = found.index(None) if None in found else len(found)
        if end == 0:
            return start
        values = json_strings([m[1] for m in found[:end]], end)
        if values is None:
            return start
        part = pattern.part
        part.streamed = True
        part.texts.extend(values)
        out.extend(map(_new, repeat(TextDelta), zip(repeat(part.index), values)))
        return start + end

    def _one_by_one(self, frames: list[Any], start: int, out: list[Event],
                    early: bool = False) -> int:
        """Decode the frames from ``start`` one by one: a text delta the pattern matches
        here, any other frame by the plain decoder; with ``early``, returns after a frame
        that gave a new pattern (a batch may follow)."""
        pattern = self._pattern
        count = len(frames)
        for position in range(start, count):
            frame = frames[position]
            if pattern is not None and pattern.part.open and not self.finished:
                found = pattern.frame.fullmatch(
                    frame if frame.__class__ is bytes else frame.data)
                if found is not None and (event := _taken(pattern.part, found)) is not None:
                    out.append(event)
                    continue
            self._each(frames[position : position + 1], out, self._data, self._event)
            if self.finished:  # (what follows the end: the plain decoder's to read)
                self._each(frames[position + 1 :], out, self._data, self._event)
                return count
            if self._pattern is not pattern:
                pattern = self._pattern
                if early and pattern is not None and count - position > BATCH:
                    return position + 1
        return count
