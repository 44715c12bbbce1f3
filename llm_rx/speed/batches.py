"""Batches: many frames of a chunk decoded in one step at C level, no Python work per frame.

:class:`TemplateFrames` (over the SSE payload decoders, on :class:`~.runs.Runs`, which cuts
a chunk's frames into runs of a template's and a huge chunk into slices) gives exactly what
the frames decoded one by one give: the byte templates a decoder declares
  with ``_learn(data, marker, value, event_type, block, keeps_empty)`` (``data`` decoded to
  ``event_type(block, value)``, ``value`` the string after ``marker``), matched in the
  one-by-one loop and, in runs of a template's frames, parsed as one JSON array; and a live
  stream's usual read, one whole frame of the latest template (:meth:`TemplateFrames._read_of`),
  decoded without the framer or the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson
from orjson import JSONDecodeError

from ..events import Event
from ..wire._boundary import PASS_THROUGH, new_event, shape_error
from ..wire.base import TextFold
from ..wire.sse import SSEDecoder, SSEEvent
from .framing import Program
from .runs import BATCH, BATCH_SLICE, BATCH_TRIES, Runs
from .templates import ByteTemplate, json_strings, split_frames

__all__ = [
    "BATCH", "BATCH_SLICE", "BATCH_TRIES", "ReadShortcut", "Runs", "Shortcut", "TemplateFrames",
]

class Shortcut(NamedTuple):
    """A template as the loop reads it (unpacked there: a tuple): the frame's bytes around its
    string, and the event it stands for."""

    prefix: bytes
    suffix: bytes
    start: int  # where the string starts (its opening quote)
    tail: int  # how many bytes follow its closing quote (or the skipped string's)
    event_type: Any
    block: int
    keeps_empty: bool  # an empty string is an event too
    middle: bytes  # ``b""``, or what lies between the string and a skipped one (``ByteTemplate``)


class ReadShortcut(NamedTuple):
    """A read that is one whole frame of a template (see ``TemplateFrames._read_of``)."""

    prefix: bytes  # the read's bytes before the string (an event line, ``data: ``, ...)
    suffix: bytes  # ... and after it (the blank line included)
    largest: int  # the longest such read
    start: int
    tail: int  # of the suffix as given
    event_type: Any
    block: int
    keeps_empty: bool
    template: Shortcut
    padded: bool  # the suffix is closing brackets that may come padded with spaces
    middle: bytes  # the template's


_loads = orjson.loads
_BEFORE_LAST = slice(0, -1)
_STRING = itemgetter(0)  # of a frame split at its middle (``split_frames``): the string
_SKIPPED = itemgetter(2)  # and the skipped one


class TemplateFrames(Runs):
    """The byte-template engine of the SSE payload decoders (mixed into
    :class:`~llm_rx.wire.base.SSEPayloadDecoder`, which gives ``_data`` and ``_event``).

    A decoder that just decoded a plain delta frame may keep the frame's template with the
    event it made (``_learn``); a frame that matches a template is that event with another
    string, decoded in :meth:`_one_by_one`. The last template hit is kept for a decoder whose
    state follows the frames (``_template_hit``); a decoder whose state changed in a way the
    templates did not see drops them (``_forget``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._templates: list[Shortcut] = []
        self._template_hit: Shortcut | None = None
        # The frames come padded before their last brace (Anthropic's): templates are
        # learnt from and matched against frames with that padding taken out (``unpadded``).
        self._padded = False
        self._learned = 0  # templates learned so far (a new one may make a batch worth it)
        # The next read, if it is one whole frame of the latest template (``_read_of``).
        self._read: ReadShortcut | None = None
        # Where its string goes when the consumer only folds (``fold_into``): not asked yet
        # (None), or the fold's callable, or False (the event is made).
        self._fold: TextFold | None = None
        self._append: Callable[[str], object] | bool | None = None

    if TYPE_CHECKING:  # (the decoder's)
        _sse: SSEDecoder

        def _data(self, data: bytes, out: list[Event]) -> None: ...
        def _event(self, event: SSEEvent, out: list[Event]) -> None: ...
        def _each(self, frames: list[Any], out: list[Event], *handlers: Any) -> None: ...

    def decode(self, chunk: bytes) -> list[Event]:
        """The decoder's ``decode``, but a read that is one whole frame of the latest
        template is decoded without the framer (``_read_hit``)."""
        if self._read is not None and (hit := self._read_hit(chunk)) is not None:
            return hit
        self._read = None
        self._append = None
        events: list[Event] = super().decode(chunk)  # type: ignore[misc]  # (the decoder's)
        if self._templates:
            self._read = self._read_of(chunk, self._sse)
        return events

    def _learn(
        self, data: bytes, marker: bytes, value: str, event_type: Any, index: int,
        keeps_empty: bool, skip: bytes = b"",
    ) -> None:
        """Keep ``data``'s template (see :class:`ByteTemplate`) as a shortcut to
        ``event_type(index, string)``; the latest first, a few at most (one per block).
        ``skip``: the frame's last key, a string the decoder ignores (its value may vary).
        """
        template = ByteTemplate.learn(data, marker, value, skip)
        if template is None:
            return
        shortcut = Shortcut(template.prefix, template.suffix, template.start, template.tail,
                            event_type, index, keeps_empty, template.middle)
        kept = [s for s in self._templates if s.block != index or s.event_type is not event_type]
        self._templates = [shortcut, *kept[:7]]
        self._learned += 1

    def _read_of(self, chunk: bytes, framer: SSEDecoder) -> ReadShortcut | None:
        """After a read the general path decoded: the shortcut for a read that is one whole
        frame of the latest template (a live stream's usual read: the same event line, if
        any, ``data: `` and the template's bytes around another string, then the blank
        line), or ``None``. Such a read is decoded as the one-by-one loop would decode its
        frame (the latest template is tried first) while nothing else changed: the framer
        holds nothing (no partial event, no ``id``, past the BOM), so the read is that frame
        alone; the framer then still holds nothing. The event line's name is a plain word,
        and ``error`` never (a framer that keeps names gives no bare payload for any).

        A suffix that is the string's closing quote and closing brackets (``"}}``) may come
        padded with spaces between them, as Anthropic pads its frames to lengths that vary:
        the read then matches with any spaces there (JSON ignores them between brackets),
        and decodes as its frame would without the template."""
        templates = self._templates
        if not (templates and chunk.endswith(b"}\n\n")) or self.finished:  # (a JSON object)
            return None
        if not framer.at_rest():
            return None
        shortcut = templates[0]
        prefix, suffix, start, _, event_type, block, keeps_empty, middle = shortcut
        padded = not suffix[1:].strip(b"}] ")  # (its one quote opens it)
        if padded:
            end = suffix.replace(b" ", b"") + b"\n\n"
            if chunk[chunk.rfind(b'"') :].replace(b" ", b"") != end:
                return None
        else:
            end = suffix + b"\n\n"
            if not chunk.endswith(end):
                return None
        head_size = chunk.find(b"data: " + prefix, 0, 64 + len(prefix))
        if head_size < 0:
            return None
        head = chunk[:head_size]
        if head:
            name = head[7:-1]
            if not (
                not framer.names
                and head.startswith(b"event: ")
                and head.endswith(b"\n")
                and name.replace(b"_", b"").isalpha()
                and name != b"error"
            ):
                return None
        return ReadShortcut(head + b"data: " + prefix, end, framer.max_frame + 2,
                            head_size + 6 + start, len(end) - 1, event_type, block, keeps_empty,
                            shortcut, padded, middle)

    def _read_hit(self, chunk: bytes) -> list[Event] | None:
        """A read's events if it is one whole frame of the latest template (``_read_of``),
        else ``None`` (the general path decodes it); to the fold if any (``fold_into``)."""
        read = self._read
        if read is None or not chunk.startswith(read.prefix) or (size := len(chunk)) > read.largest:
            return None
        if chunk.endswith(read.suffix):
            stop = size - read.tail
        elif read.padded:  # (its closing brackets padded with spaces: see ``_read_of``)
            stop = chunk.rfind(b'"') + 1
            if chunk[stop - 1 :].replace(b" ", b"") != read.suffix:
                stop = 0
        else:
            stop = 0
        middle = read.middle
        if stop and middle:  # (a skipped string last, read from the end)
            other = chunk.rfind(b'"', read.start + 1, stop - 1) + 1
            if other and chunk.endswith(middle, 0, other) and chunk[other : stop - 1].isalnum():
                stop = other - len(middle)
            else:
                stop = 0
        try:
            value = _loads(chunk[read.start : stop]) if stop else None
        except JSONDecodeError:
            value = None
        if value.__class__ is str:
            self._template_hit = read.template
            if not value and not read.keeps_empty:
                return []
            append = self._append
            if append is None:  # (the first such read since another: every event
                append = self._append = self._appender(read)  # before it was folded)
            if append:  # (a consumer that only folds: straight to it, no event)
                append(value)  # type: ignore[operator]
                return []
            return [new_event(read.event_type, (read.block, value))]
        return None

    def fold_into(self, fold: TextFold | None) -> None:
        """The reads' events go only to a fold (``to_response()`` right after the source,
        ``reassemble``): a read that is one whole frame of the latest template then gives
        its string to ``fold(event_type, block)`` (asked at its first such read, once every
        event before it was folded; asked again after any other read) instead of an event.
        The fold gets the strings it would have folded from the events, in the same order."""
        self._fold = fold
        self._append = None

    def _appender(self, read: ReadShortcut) -> Callable[[str], object] | bool:
        fold = self._fold
        append = fold(read.event_type, read.block) if fold is not None else None
        return False if append is None else append

    @staticmethod
    def unpadded(frame: bytes) -> bytes:
        """A frame padded with spaces before its last brace, without them (the same JSON
        value, for a JSON object: spaces there can only lie between tokens)."""
        return frame[:-1].rstrip(b" ") + b"}" if frame.endswith(b" }") else frame

    def _program(self) -> Program | None:
        """The latest template as the compiled core reads it (:mod:`.core`): its string, a
        skipped one, the padding before the last brace."""
        if not self._templates or self.finished:
            return None
        shortcut = self._templates[0]
        if shortcut is self._source:
            return self._compiled
        prefix, suffix, middle = shortcut.prefix, shortcut.suffix, shortcut.middle
        pieces, holes = ((prefix, b'"' + middle, suffix), b"SN") if middle else (
            (prefix, suffix), b"S")
        if self._padded and suffix.endswith(b"}"):  # (spaces before the last brace)
            pieces, holes = (*pieces[:-1], pieces[-1][:-1], b"}"), holes + b"P"
        self._source, self._compiled = shortcut, Program(shortcut, pieces, holes)
        return self._compiled

    _source: Shortcut | None = None
    _compiled: Program | None = None

    def _framer(self) -> SSEDecoder:
        return self._sse

    def _took(self, values: list[str], chunk: bytes, first: int, last: int, same: bool,
              out: list[Event]) -> None:
        """A run of the latest template's frames the compiled core read: their strings."""
        shortcut = self._templates[0]
        self._template_hit = shortcut
        if not shortcut.keeps_empty and "" in values:
            values = [value for value in values if value]
        self._deliver(shortcut.event_type, shortcut.block, values, out)  # type: ignore[attr-defined]

    def _forget(self) -> None:
        """The decoder's state changed in a way the shortcuts did not see: drop them."""
        if self._templates:
            self._templates = []

    def _frames(self, frames: list[Any], out: list[Event]) -> None:
        """Decode a chunk's frames (bare ``bytes`` for plain ``message`` events): runs of a
        template's frames in batches where there are enough frames, the others one by one."""
        if self._in_slices(frames, out, self._frames):
            return
        count = len(frames)
        tries = BATCH_TRIES if count >= BATCH else 0
        position = 0
        while position < count:
            if tries and count - position >= BATCH and self._batchable():
                tries -= 1
                position = self._batch(frames, position, out)
                if position >= count:
                    return
            position = self._one_by_one(frames, position, out, tries > 0)

    def _batchable(self) -> bool:
        """Whether a template is known that :meth:`_batch` can use."""
        return bool(self._templates)

    def _batch(self, frames: list[Any], start: int, out: list[Event]) -> int:
        """Decode the runs of the latest template's frames from ``start`` on at C level (no
        Python work per frame); the frames between runs go one by one, in order. Returns
        where the one-by-one loop takes over: the end, or where the template stopped holding
        (the decoder's state changed, or a run's strings did not parse)."""
        shortcut = self._templates[0]
        templates = self._templates
        shown = frames
        if self._padded:  # (matched with the padding out; the frames the loop takes as sent)
            try:  # (``unpadded`` of each, at C level: only a frame ending in a brace has any)
                if not all(map(bytes.endswith, frames, repeat(b"}"))):
                    return start
                shown = list(map(bytes.__add__, map(bytes.rstrip, map(
                    bytes.__getitem__, frames, repeat(_BEFORE_LAST)), repeat(b" ")),
                    repeat(b"}")))
            except TypeError:  # (an SSEEvent among them)
                return start
        return self._in_runs(
            shown, start, shortcut.prefix, shortcut.suffix,
            lambda run: self._template_run(run, shortcut, out),
            lambda at, end: self._one_by_one(frames[at:end], 0, out, False),
            lambda: self._templates is templates,  # (a template learned or forgotten)
        )

    def _template_run(self, frames: list[bytes], shortcut: Shortcut, out: list[Event]) -> bool:
        """Decode frames with the prefix and suffix of ``shortcut``'s template, if their
        strings parse: all of them as one JSON array. ``False`` (nothing decoded) if not."""
        prefix, suffix, _, _, event_type, block, keeps_empty, middle = shortcut
        if middle:  # (each frame's skipped string: letters and digits)
            parts = split_frames(frames, prefix, b'"' + middle, suffix)
            if parts is None or not all(map(bytes.isalnum, map(_SKIPPED, parts))):
                return False
            insides: Any = map(_STRING, parts)
        elif min(map(len, frames)) < len(prefix) + len(suffix):  # (prefix and suffix overlap)
            return False
        else:
            insides = map(bytes.__getitem__, frames, repeat(slice(len(prefix), -len(suffix))))
        values = json_strings(insides, len(frames))
        if values is None:
            return False
        if not keeps_empty and "" in values:
            values = [value for value in values if value]
        out.extend(map(new_event, repeat(event_type), zip(repeat(block), values)))
        self._template_hit = shortcut
        return True

    def _one_by_one(self, frames: list[Any], start: int, out: list[Event], early: bool) -> int:
        """Decode frames from ``start`` on, each by itself; returns where it stopped: the end,
        or (if ``early``) just after a frame that gave a new template, while enough frames
        are left for a batch."""
        loads = orjson.loads
        append = out.append
        templates = self._templates
        learned = self._learned
        padded = self._padded
        count = len(frames)
        frame: Any = None
        try:
            for position in range(start, count):
                if self.finished:  # (after the end: the plain decoder's to read: ``_ended``)
                    self._each(frames[position:], out, self._data, self._event)
                    return count
                frame = frames[position]
                if frame.__class__ is bytes:
                    if templates:
                        if padded:  # (spaces before the last brace: see ``unpadded``)
                            data = (frame[:-1].rstrip(b" ") + b"}" if frame.endswith(b" }")
                                    else frame)
                        else:
                            data = frame.rstrip(b" ") if frame[-1] == 0x20 else frame
                        for shortcut in templates:
                            (prefix, suffix, begin, tail, event_type, block, keeps_empty,
                             middle) = shortcut
                            if data.startswith(prefix) and data.endswith(suffix):
                                piece = data[begin : len(data) - tail]
                                if middle:  # (``skipped``, inlined: a call a frame less)
                                    other = piece.rfind(b'"', 0, -1) + 1
                                    if (other and piece.endswith(middle, 0, other)
                                            and piece[other:-1].isalnum()):
                                        piece = piece[: other - len(middle)]
                                    else:
                                        piece = b""  # (no string: the frame goes on)
                                try:
                                    value = loads(piece) if piece else None
                                except orjson.JSONDecodeError:
                                    value = None
                                if value.__class__ is str:
                                    if value or keeps_empty:
                                        append(new_event(event_type, (block, value)))
                                    self._template_hit = shortcut
                                    break
                        else:
                            self._data(frame, out)
                    else:
                        self._data(frame, out)
                else:
                    self._event(frame, out)
                templates = self._templates
                if early and self._learned != learned and count - position > BATCH:
                    return position + 1
        except PASS_THROUGH:
            raise
        except Exception as error:  # the boundary: any failure is the frame's
            raise shape_error(error, frame) from error
        return count

