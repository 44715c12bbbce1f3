"""Spans: a frame's bytes around two varying parts, a string and an object of counts.

A byte template (:mod:`.templates`) with a second hole: a provider that repeats its
cumulative counts on every delta frame (Gemini's ``usageMetadata``) declares where its string
and its counts start; frames that are that frame with another string and other counts decode
by parsing those two alone, and a run of them at C level (:meth:`Spans.strings`).
"""

from __future__ import annotations

import re
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple

import orjson

from .templates import ByteTemplate, json_strings, split_frames

__all__ = ["Spans"]

_loads = orjson.loads
_DIGITS = b"0123456789"
_NUMBER = re.compile(rb"([0-9]+)")
_VALUE_BEFORE = re.compile(rb"[:\[,] ?$")  # (a digit run that is a value: after ':', '[', ',')
# Of a partition: before the separator, after it.
_BEFORE, _AFTER = itemgetter(0), itemgetter(2)


class Spans(NamedTuple):
    """The bytes of a frame around its two varying parts, a string and an object of counts
    (Gemini's text and ``usageMetadata``): a frame whose other bytes are the same, the string
    one JSON string and the object one JSON object whose bytes differ from the learned one's
    only in digits, is that frame with another string and other counts."""

    prefix: bytes  # up to and with the string's opening quote
    middle: bytes  # from the string's closing quote to the object
    suffix: bytes  # after the object
    block: int  # the block the string is a delta of
    skeleton: bytes  # the object without its digits
    counts: bytes = b""  # the object as learnt

    def strings(self, frames: list[bytes]) -> tuple[list[str], list[dict[str, Any]]] | None:
        """The strings and objects of ``frames`` if each is this frame with another string and
        other counts (C-level work only, no Python per frame); ``None`` if one is not."""
        parts = split_frames(frames, self.prefix, self.middle, self.suffix)
        if parts is None:
            return None
        count = len(frames)
        usages = list(map(_AFTER, parts))
        # Every usage the learned one but for its digits: each is one balanced object, so
        # none can reach into the next in the array below (one with a digit in a key, or an
        # empty or padded number, is caught by parsing: another key, or an error).
        if set(map(bytes.translate, usages, repeat(None), repeat(_DIGITS))) != {self.skeleton}:
            return None
        texts = json_strings(map(_BEFORE, parts), count)
        try:
            counts = _loads(b"[" + b",".join(usages) + b"]")
        except orjson.JSONDecodeError:
            return None
        if texts is None or len(counts) != count or len(set(map(tuple, counts))) != 1:
            return None
        return texts, counts

    def program(self) -> tuple[tuple[bytes, ...], bytes] | None:
        """The frame as the compiled core reads it (:mod:`.core`): the string read, each
        count skipped (an integer value); ``None`` if a digit of the object is not in one."""
        cut = _NUMBER.split(self.counts)
        between = cut[::2]
        if not all(_VALUE_BEFORE.search(piece) for piece in between[:-1]) or not all(
                piece[:1] in b",}] " for piece in between[1:]) or b"." in self.counts:
            return None
        if len(between) == 1:  # (no count: the object is all literal)
            return (self.prefix, self.middle + self.counts + self.suffix), b"S"
        return ((self.prefix, self.middle + between[0], *between[1:-1], between[-1] + self.suffix),
                b"S" + b"I" * (len(between) - 1))

    def usage(self, data: bytes) -> Any:
        """The object of counts of ``data``, a frame of these spans."""
        middle = data.find(self.middle, len(self.prefix))
        return _loads(data[middle + len(self.middle) : len(data) - len(self.suffix)])

    @classmethod
    def learn(
        cls, data: bytes, text_markers: tuple[bytes, ...], text: str,
        usage_markers: tuple[bytes, ...], usage: Any, block: int,
    ) -> Spans | None:
        """The spans of ``data``, whose string ``text`` follows one of ``text_markers`` (each
        ending with its opening quote) and whose object ``usage`` follows one of
        ``usage_markers`` after it; ``None`` if ``data`` is not so (each marker once)."""
        if not isinstance(usage, dict):
            return None
        text_at = None
        for marker in text_markers:
            text_at = ByteTemplate.learn(data, marker, text)
            if text_at is not None:
                break
        if text_at is None:
            return None
        after = text_at.suffix
        for key in usage_markers:
            at = after.find(key)
            if at >= 0:
                break
        else:
            return None
        if after.find(key, at + 1) >= 0:
            return None
        start = at + len(key)
        end = after.find(b"}", start)
        while end >= 0:  # the usage object ends at the "}" that closes what was parsed
            try:
                if _loads(after[start : end + 1]) == usage:
                    skeleton = after[start : end + 1].translate(None, _DIGITS)
                    return cls(text_at.prefix, after[:start], after[end + 1 :], block, skeleton,
                               after[start : end + 1])
            except orjson.JSONDecodeError:
                pass
            end = after.find(b"}", end + 1)
        return None
