"""Byte templates: a frame seen once, read again as the same bytes around a string that varies.

A decoder that just decoded a plain delta frame declares where its varying string starts (a
``marker`` ending with the string's opening quote) and what it was; the template is the frame's
bytes around it. A later frame with the same bytes around another string is that frame with
that string: parsing the string alone (or the strings of a whole run of such frames, as one
JSON array: :func:`json_strings`) gives its value, a fraction of parsing the frame.

A frame may end with a second varying string its decoder ignores (a ``skip`` marker: OpenAI's
random ``"obfuscation"`` padding, a last key no reply keeps): the template is then the bytes
before the string, the ``middle`` between the two strings and the bytes after the second, which
matches any second string of letters and digits (read from the end: the quote before its
closing one; it is short, the delta not).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple

import orjson

__all__ = ["ByteTemplate", "json_strings", "split_frames"]


class ByteTemplate(NamedTuple):
    """The bytes of a frame around one JSON string in it.

    A later frame that is byte for byte the same but for that string (same prefix, same
    suffix, and what lies between parses as one JSON string) is that frame with another
    string: its value is had by parsing the string alone, a fraction of parsing the frame.
    Trailing spaces (JSON padding) are ignored. With a ``middle``, the frame's last key is a
    second string the decoder ignores: the suffix is what follows that string (from its
    closing quote on), the middle what lies between the two strings (after the first one's
    closing quote, up to and with the second one's opening quote).
    """

    prefix: bytes  # up to and with the string's opening quote
    suffix: bytes  # from the string's closing quote on (or the skipped string's)
    start: int  # where the string starts (its opening quote)
    tail: int  # how many bytes follow its closing quote (or the skipped string's)
    middle: bytes = b""  # between the string and a skipped one (see ``learn``'s ``skip``)

    @classmethod
    def learn(
        cls, data: bytes, marker: bytes, value: str, skip: bytes = b""
    ) -> ByteTemplate | None:
        """The template of ``data`` around the string that follows ``marker`` (which ends
        with the string's opening quote), if that string is ``value`` and ``marker`` occurs
        once. With ``skip`` (a key and its value's opening quote, ``b'"obfuscation":"'``)
        occurring once after the string, as the frame's last key, with letters and digits
        for its value, that value varies too."""
        data = data.rstrip(b" ")
        start = data.find(marker)
        if start < 0 or data.find(marker, start + 1) >= 0:
            return None
        start += len(marker) - 1
        end = start + 1
        while True:  # the closing quote: the first one not escaped
            end = data.find(b'"', end)
            if end < 0:
                return None
            head = data[:end]
            if (len(head) - len(head.rstrip(b"\\"))) % 2 == 0:
                break
            end += 1
        try:
            if orjson.loads(data[start : end + 1]) != value:
                return None
        except orjson.JSONDecodeError:
            return None
        if skip:
            at = data.find(skip, end)
            if at >= 0 and data.find(skip, at + 1) < 0 and data.endswith(b'"}'):
                other = at + len(skip)
                if data[other:-2].isalnum():  # (the last key of the frame's object)
                    return cls(data[: start + 1], b'"}', start, 1, data[end + 1 : other])
        return cls(data[: start + 1], data[end:], start, len(data) - end - 1)


_FOUND = itemgetter(1)  # of a partition: the separator, or b"" if it was not there


def split_frames(
    frames: list[Any], prefix: bytes, middle: bytes, suffix: bytes
) -> list[tuple[bytes, bytes, bytes]] | None:
    """Each frame, ``prefix`` + A + ``middle`` + B + ``suffix``, as (A, middle, B) cut at its
    first middle; ``None`` if a frame is not so (C-level work only). A and B are not checked:
    the caller parses them. The frames are single lines, as both framers give them (an SSE
    payload given as bytes is one ``data:`` line; an NDJSON line is a line), so a newline in
    the joined frames is where one ends."""
    count = len(frames)
    try:
        joined = b"\n".join(frames)
    except TypeError:  # (an SSEEvent among them)
        return None
    if not (  # each frame long enough, with the prefix and the suffix
        min(map(len, frames)) >= len(prefix) + len(middle) + len(suffix)
        and joined.startswith(prefix)
        and joined.endswith(suffix)
        and joined.count(b"\n" + prefix) == count - 1
        and joined.count(suffix + b"\n") == count - 1
    ):
        return None
    inside = slice(len(prefix), -len(suffix))
    parts = list(map(bytes.partition, map(bytes.__getitem__, frames, repeat(inside)),
                     repeat(middle)))
    if b"" in map(_FOUND, parts):  # a frame without the middle
        return None
    return parts


def json_strings(insides: Iterable[bytes], count: int) -> list[str] | None:
    """The values of ``count`` JSON strings given by their insides (the bytes between their
    quotes), parsed as one array; ``None`` if one is not exactly one valid string.

    The pieces are joined with '",\\n"': a raw newline cannot be inside a JSON string, so
    every string has closed before each separator and each piece gives at least one value.
    As many values as pieces means each piece is exactly one valid string (a stray quote, or
    a backslash before a closing quote, is an error or a value too many).
    """
    try:
        values: list[str] = orjson.loads(b'["' + b'",\n"'.join(insides) + b'"]')
    except orjson.JSONDecodeError:
        return None
    return values if len(values) == count else None
