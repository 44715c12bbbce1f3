"""Ollama with shortcuts: a usual line's bytes, learnt from the plain decoder, read in batches.

A usual line (the reply's model, a time and a text delta, nothing else) is learnt once the
plain decoder has decoded one (``_line``, a few tries at most): its bytes around
the time and the text (:class:`Usual`). A run of lines that are that line with another time
and text decodes at C level, the text of each parsed as one JSON array and the time only
checked (:meth:`Usual.strings`); the other lines go one by one. Before the framer cuts a
read into lines, its complete lines are tried as one block (:meth:`Usual.block`): when every
one is the usual line, the block's texts come from two replacements and one parse of the
whole block, with no object per line but the text and its event.
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple

import orjson

from ..events import Event, TextDelta
from ..wire._boundary import new_event
from ..wire.ollama import OllamaDecoder
from .framing import LINES, Program
from .runs import BATCH, BATCH_TRIES, Runs
from .templates import ByteTemplate, json_strings, split_frames

__all__ = ["OllamaShortcuts", "Usual"]

# What a block's middles and line ends become (:meth:`Usual.block`): a raw tab or newline is
# never inside a JSON string, and the 0 between two lines says where each line ended.
_MIDDLE = b'",\t"'
_LINE_END = b'",\n0,\n"'
# Of a partition: what came before and after the separator.
_BEFORE, _AFTER = itemgetter(0), itemgetter(2)
_loads = orjson.loads
# The keys of a usual line: the reply's model, a time, a message and done.
_USUAL_KEYS = frozenset({"model", "created_at", "message", "done"})
_PLAIN = bytes(sorted(set(range(0x20, 0x7F)) - {0x22, 0x5C}))  # printable ASCII but '"' and '\\'


class Usual(NamedTuple):
    """The bytes of a usual line around its two varying strings, the time and the text: a
    line whose other bytes are the same, both strings valid, is that line with another time
    and text (the time is not read on a usual line)."""

    prefix: bytes  # up to and with the time's opening quote
    middle: bytes  # from the time's closing quote to the text's opening quote, both included
    suffix: bytes  # from the text's closing quote on

    @classmethod
    def learn(cls, line: bytes, time: Any, text: str) -> Usual | None:
        if not isinstance(time, str):
            return None
        at = ByteTemplate.learn(line, b'"created_at":"', time)
        said = ByteTemplate.learn(line, b'"content":"', text)
        if at is None or said is None:
            return None
        middle = line[len(line) - len(at.suffix) : said.start + 1]
        if len(middle) < 2 or said.start < at.start:  # (the text after the time, apart)
            return None
        if (b"\t" in line or b"\n" in line or len(middle) <= len(_MIDDLE)
                or len(at.prefix) + len(said.suffix) + 1 <= len(_LINE_END)
                or not at.prefix.endswith(b'"') or not said.suffix.startswith(b'"')):
            return None  # (what :meth:`block` needs of the bytes around the strings)
        return cls(at.prefix, middle, said.suffix)

    def block(self, block: bytes) -> list[str] | None:
        """The texts of ``block``'s lines (complete lines, joined by newlines) if each is this
        line with another time and text; ``None`` if one is not. (C-level work only.)

        Every middle becomes ``",<tab>"`` and every line end with the next line's prefix
        ``",<newline>0,<newline>"``; the block is then parsed as one JSON array. A raw tab or
        newline cannot be inside a JSON string, so each of those separators stands between
        two strings, and the bytes between two of them, or between one and the block's ends,
        hold at least one value. There are 2 * lines such pieces and lines - 1 zeros, so a
        parse of exactly 3 * lines - 1 values means each piece is exactly one string; a zero
        at every third value means the separators alternate, a middle in each line and only
        one: each line is the prefix, a string, the middle, a string and the suffix. (A line
        end that took a byte of a middle's separator, or the prefix or suffix one at the
        block's ends, leaves a raw tab or newline inside a string: no parse.)
        """
        prefix, middle, suffix = self
        ends = suffix + b"\n" + prefix
        halved = block.replace(middle, _MIDDLE)
        middles, rest = divmod(len(block) - len(halved), len(middle) - len(_MIDDLE))
        cut = halved.replace(ends, _LINE_END)
        lines, rest2 = divmod(len(halved) - len(cut), len(ends) - len(_LINE_END))
        lines += 1
        if (rest or rest2 or middles != lines or not cut.startswith(prefix)
                or not cut.endswith(suffix) or len(cut) < len(prefix) + len(suffix)):
            return None
        try:
            values = _loads(b'["' + cut[len(prefix) : len(cut) - len(suffix)] + b'"]')
        except orjson.JSONDecodeError:
            return None
        if len(values) != 3 * lines - 1 or values[2::3] != [0] * (lines - 1):
            return None
        texts: list[str] = values[1::3]
        return texts

    def strings(self, lines: list[bytes]) -> list[str] | None:
        """The texts of ``lines`` if each is this line with another time and text; ``None``
        if one is not. (C-level work only, no Python per line.)"""
        parts = split_frames(lines, *self)
        if parts is None:
            return None
        # The times are not read, only checked: plain ASCII, no quote, no backslash, so each
        # is a valid JSON string (any other time sends the lines one by one).
        if b"".join(map(_BEFORE, parts)).translate(None, _PLAIN):
            return None
        return json_strings(map(_AFTER, parts), len(lines))


class OllamaShortcuts(Runs, OllamaDecoder):
    """Batches over :class:`~llm_rx.wire.ollama.OllamaDecoder` (which gives the open block
    and decodes a line by itself)."""

    _usual: Usual | None = None  # the bytes of a usual line, for batches
    _learning = 3  # tries left to learn them
    _taken: list[Event]  # (set by each ``decode``)
    _framing = LINES  # (for the compiled core)
    _compiled: Program | None = None

    def _program(self) -> Program | None:
        """The usual line as the compiled core reads it (:mod:`.core`): its time skipped,
        its text read, while a text block is open."""
        usual = self._usual
        if usual is None or self._open_kind != "text" or self.finished:
            return None
        if self._compiled is None or self._compiled.source is not usual:
            self._compiled = Program(usual, tuple(usual), b"AS")
        return self._compiled

    def _framer(self) -> Any:
        return self._lines

    def _took(self, values: list[str], chunk: bytes, first: int, last: int, same: bool,
              out: list[Event]) -> None:
        """A run of usual lines the compiled core read: their texts, in the open block."""
        if "" in values:
            values = [value for value in values if value]
        self._deliver(TextDelta, self._open, values, out)  # type: ignore[attr-defined]

    def decode(self, chunk: bytes) -> list[Event]:
        usual = self._usual
        if (  # a live stream's usual read: complete usual lines, nothing held before them
            usual is not None
            and self._open_kind == "text"
            and not self.finished
            and chunk.endswith(b"\n")
            and not self._lines.holding
            and len(chunk) <= self._lines.max_frame
        ):
            texts = usual.block(chunk[:-1])
            if texts is not None:  # (what the framer's ``block`` would have taken: the same)
                events: list[Event] = []
                self._deltas(texts, events)
                return events
        self._taken = []  # (the events of the lines taken whole: no closure made per read)
        return self._run(self._framed, chunk, self._handle)

    def _framed(self, chunk: bytes) -> list[bytes]:
        return self._lines.decode(chunk, block=self._whole)

    def _whole(self, block: bytes) -> bool:
        return self._whole_lines(block, self._taken)

    def _handle(self, lines: list[bytes], out: list[Event]) -> None:
        out += self._taken
        self._lines_of(lines, out)

    def _line(self, line: bytes, out: list[Event]) -> None:
        before = len(out)
        super()._line(line, out)
        if self._learning and self._usual is None and len(out) == before + 1:
            self._watch(line, out[-1])

    def _watch(self, line: bytes, event: Event) -> None:
        """The plain decoder made one text delta of ``line``: learn its bytes if it is a
        usual line (see :class:`Usual`)."""
        if event.__class__ is not TextDelta or self._open_kind != "text":
            return
        frame = _loads(line)
        if frame.keys() == _USUAL_KEYS and frame["done"] is False:
            self._learning -= 1
            self._usual = Usual.learn(line, frame["created_at"], event[1])

    def _whole_lines(self, block: bytes, out: list[Event]) -> bool:
        """Decode ``block``, a read's complete lines, at once if each is a usual line in the
        open text block (see :meth:`Usual.block`): whether it did."""
        usual = self._usual
        if usual is None or self._open_kind != "text":
            return False
        return self._deltas(usual.block(block), out)

    def _lines_of(self, lines: list[bytes], out: list[Event]) -> None:
        """Runs of usual lines (see :class:`Usual`) decode in batches, with no Python work
        per line; the other lines, and all of a short chunk, one by one."""
        if self._in_slices(lines, out, self._lines_of):
            return
        count = len(lines)
        tries = BATCH_TRIES if count >= BATCH else 0
        position = 0
        while position < count and tries:
            tries -= 1
            usual = self._usual
            if usual is None:  # one line at a time, while one may teach the usual bytes
                if not self._learning:
                    break
                self._each(lines[position : position + 1], out, self._line)
                position += 1
            elif self._open_kind == "text" and count - position >= BATCH:
                if self._usual_run(lines[position:], out):  # (all of them: no runs to find)
                    return
                position = self._in_runs(
                    lines, position, usual.prefix, usual.suffix,
                    lambda run: self._usual_run(run, out),
                    lambda at, end: self._each(lines[at:end], out, self._line),
                    lambda: self._open_kind == "text",
                )
            else:
                break
            if self.finished:
                self.ignored_frames += count - position
                return
        if position < count:
            self._each(lines[position:], out, self._line)

    def _usual_run(self, lines: list[bytes], out: list[Event]) -> bool:
        assert self._usual is not None  # (learned once, kept: it holds in any text block)
        return self._deltas(self._usual.strings(lines), out)

    def _deltas(self, texts: list[str] | None, out: list[Event]) -> bool:
        """The open text block's deltas for ``texts`` (the empty ones left out), if a
        shortcut read them: whether it did."""
        if texts is None:
            return False
        if "" in texts:
            texts = [text for text in texts if text]
        out.extend(map(new_event, repeat(TextDelta), zip(repeat(self._open), texts)))
        return True
