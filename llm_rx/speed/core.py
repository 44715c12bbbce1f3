"""The compiled core: a shortcut decoder's learnt frame read straight from the raw bytes in C.

The optional C extension (``_scan.c``) does one thing: from a position in a read, it reads
the frames that are a learnt *program* (the frame's bytes as literal pieces around holes: the
delta string, decoded; a skipped id or padding; a skipped count) and stops at the first that
is not. :class:`Scanning`, mixed over a decoder with shortcuts, runs it on every read; each
frame it does not recognise (and a frame the framer held from the read before) goes to that
decoder, unchanged, one frame at a time, so the decoder's state, its learning and every
error stay Python's. A wire's shortcut decoder says what its current program is
(``_program``: its latest template as pieces and holes, or ``None`` while none holds) and what
a run of its frames means (``_took``); the raw program adds the bytes around the payload (the
SSE ``event:`` and ``data:`` lines, the blank line; an NDJSON line's end), learnt from the
one frame the decoder just read when it learnt the template.

``LLM_RX_NO_EXTENSIONS=1`` (read at import) leaves it out; so does ``fast_paths(False)``,
under which no shortcut decoder is made at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from itertools import repeat
from typing import TYPE_CHECKING, Any

from ..errors import LlmRxError
from ..events import Event
from ..wire._boundary import new_event
from .framing import SSE, Framing, Program, Raw

__all__ = ["Program", "Raw", "Scanning", "over_core", "scan", "scan_messages"]

Scan = Callable[[bytes, int, tuple[bytes, ...], bytes, list[str], int],
                tuple[int, int, int, int, bool]]


def _loaded() -> Any:
    if os.environ.get("LLM_RX_NO_EXTENSIONS"):
        return None
    try:
        from . import _scan
    except ImportError:
        return None
    return _scan


_core = _loaded()
#: The extension's ``scan`` and ``scan_messages`` (see ``_scan.c``), or ``None`` (not built
#: here, or turned off).
scan: Scan | None = _core and _core.scan
scan_messages: Callable[..., tuple[int, int, int, int, bool]] | None = (
    _core and _core.scan_messages)


# The frames of a read handed to the decoder one by one while it has no program (it may learn
# one from them, for the rest of the read); the rest of the read goes to it at once.
_LEARNING = 16


class Scanning:
    """The compiled hot loop over a decoder with shortcuts (mixed in before it): each read's
    frames of the current program read by ``scan``, every other frame decoded by the decoder
    itself, one at a time, in order (a read's first frames one by one while no program holds,
    so one learnt on the way serves the rest of the read). A frame cut at a read's end that
    may be the program's is held here until its end arrives (one read at most: if the next
    read does not end it, both go to the decoder, whose framer then holds it)."""

    #: The decoder with shortcuts this one runs over (what it is without the core).
    python: type[Any]
    _core_raw: Raw | None = None
    _core_fold: Any = None
    _core_target: tuple[Any, int, Callable[[list[str]], None]] | None = None
    _core_held = b""
    _core_frame = b""  # the last frame the decoder read whole (a program is learnt from it)
    _framing: Framing = SSE  # (how the wire cuts a body into frames)
    _named = b""  # (an event name the decoder reads as a bare payload, where it keeps names)

    if TYPE_CHECKING:  # (the decoder's)
        finished: bool

        def _program(self) -> Program | None: ...
        def _took(self, values: list[str], chunk: bytes, first: int, last: int, same: bool,
                  out: list[Event]) -> None: ...
        def _framer(self) -> Any: ...

    def decode(self, chunk: bytes) -> list[Event]:
        out = self._through(chunk)
        if out:  # (events go out before the next read: a fold's target may change)
            self._core_target = None
        return out

    def _through(self, chunk: bytes) -> list[Event]:
        out: list[Event] = []
        held = self._core_held
        if held:  # (its end is looked for once the read is scanned: where it stops)
            self._core_held = b""
            chunk = held + chunk
        resting = self._core_resting
        if resting is None:
            resting = self._bind()
        size = len(chunk)
        position = 0
        if not resting():  # (the frame the framer holds, completed first)
            position = self._frame_end(chunk, 0)
            if position < 0:
                self._python(chunk, out)
                return out
            self._python(chunk[:position], out)
        learning = _LEARNING
        while position < size:
            raw = self._current() if resting() else None
            if raw is None:  # (a frame for the decoder, which may learn a program from it)
                stop = self._frame_end(chunk, position) if learning else -1
                if stop < 0:
                    self._python(chunk[position:], out)
                    return out
                learning -= 1
            else:
                values: list[str] = []
                most = self._core_most
                assert scan is not None
                assert scan_messages is not None
                if raw.headers:
                    stop, count, first, last, same = scan_messages(
                        chunk, position, raw.headers, raw.pieces, raw.holes, values, most)
                else:
                    stop, count, first, last, same = scan(
                        chunk, position, raw.pieces, raw.holes, values, most)
                if count:
                    self._took(values, chunk, first, last, same, out)
                if stop >= size:
                    return out
                position = stop
                end = raw.end
                if end:
                    stop = chunk.find(end, position)
                    stop = stop + len(end) if stop >= 0 else -1
                else:
                    stop = self._frame_end(chunk, position)
                if stop < 0:  # (cut at the read's end: held for the next read, once)
                    if (position == 0 and held) or size - position > self._core_most:
                        self._python(chunk[position:], out)
                    else:
                        self._core_held = chunk[position:]
                    return out
            self._core_frame = frame = chunk[position:stop]
            self._python(frame, out)  # (one frame, as it is)
            position = stop
        return out

    def flush(self) -> list[Event]:
        """(``Decoder.flush``: a frame held here goes to the decoder first.)"""
        out: list[Event] = []
        if self._core_held:
            held, self._core_held = self._core_held, b""
            self._python(held, out)
        try:
            out += super().flush()  # type: ignore[misc]
        except LlmRxError as error:
            error.events = (*out, *error.events)
            raise
        return out

    def reconnected(self) -> bool:
        """(``Decoder.reconnected``: a frame held here was cut by the drop, as the framer's.)"""
        going_on: bool = super().reconnected()  # type: ignore[misc]
        if going_on:
            self._core_held = b""
        return going_on

    def _python(self, piece: bytes, out: list[Event]) -> None:
        """Bytes the decoder reads itself; an error it raises carries the read's events
        before it too."""
        try:
            out += super().decode(piece)  # type: ignore[misc]
        except LlmRxError as error:
            error.events = (*out, *error.events)
            raise

    def _current(self) -> Raw | None:
        """The raw program of the decoder's current program, if it has one and it was
        seen in the bytes of a frame read whole."""
        program = self._program()
        if program is None:
            return None
        raw = self._core_raw
        if raw is not None and raw.source is program.source:
            return raw
        frame = self._framing.last_frame(self._core_frame, program.pieces[0])
        if not frame:
            return None
        names = bool(getattr(self._framer(), "names", False))
        self._core_raw = raw = self._framing.raw(program, frame, names, self._named)
        return raw

    def _frame_end(self, chunk: bytes, start: int) -> int:
        """Where the first frame from ``start`` ends, or -1 if none ends in ``chunk``."""
        return self._framing.end(chunk, start)

    def fold_into(self, fold: Any) -> None:
        """(``Decoder.fold_into``: a run's strings may go straight to the fold, after the
        read's events before them. The decoder under it is given no fold: a frame it reads
        inside a read makes its events, which may follow other events of the same read that
        no fold has taken yet.)"""
        self._core_fold = fold
        self._core_target = None
        super().fold_into(None)  # type: ignore[misc]

    _core_resting: Callable[[], bool] | None = None  # whether the framer holds nothing
    _core_most = 0  # the framer's longest frame

    def _bind(self) -> Callable[[], bool]:
        framer = self._framer()
        self._core_most = framer.max_frame
        resting = self._framing.resting(framer)
        self._core_resting = resting
        return resting

    def _deliver(self, event_type: Any, block: int, values: list[str], out: list[Event]) -> None:
        """A run's strings: straight to a consumer that only folds (``fold_into``), after the
        events of this read before them (which it takes first), else as events."""
        target = self._core_target  # (the list the last run's strings went to, while no event
        if target is not None and not out and target[0] is event_type and target[1] == block:
            target[2](values)  # went out since)
            return
        fold = self._core_fold
        if fold is not None:
            append = fold(event_type, block, out) if out else fold(event_type, block)
            if append is not None:
                parts = getattr(append, "__self__", None)
                if isinstance(parts, list):
                    self._core_target = (event_type, block, parts.extend)
                    parts.extend(values)
                else:
                    for value in values:
                        append(value)
                return
        out.extend(map(new_event, repeat(event_type), zip(repeat(block), values)))


def over_core(cls: type[Any]) -> type[Any]:
    """``cls`` (a decoder with shortcuts and the hooks :class:`Scanning` reads) over the
    compiled core: what ``llm_rx.speed.decoders`` makes when the extension is in use."""
    return type(cls.__name__ + "Compiled", (Scanning, cls), {
        "__doc__": f"{cls.__name__} with its frames read by the compiled core first.",
        "_framing": getattr(cls, "_framing", SSE),
        "_named": getattr(cls, "_named", b""),
        "python": cls,
    })
