"""Runs of a template's frames in a chunk, and a huge chunk in slices: the tries a batch makes
stay linear in the chunk (:mod:`.batches`, :mod:`.ollama`)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from operator import and_
from typing import Any

from ..events import Event

__all__ = ["BATCH", "BATCH_SLICE", "BATCH_TRIES", "Runs"]

# Fewer frames than this are read one by one (a batch costs a few joins); a chunk tries a
# batch at most so many times (each try looks at all the frames left) in each slice of
# ``BATCH_SLICE`` frames: the tries scale with the chunk, and their cost stays linear in it.
BATCH = 16
BATCH_TRIES = 8
BATCH_SLICE = 512


class Runs:
    """Runs and slices of a chunk's frames (mixed into a :class:`~llm_rx.wire.base.Decoder`
    by the subclasses that take shortcuts)."""

    # (set by the decoder)
    finished: bool
    failed: bool
    several: bool
    ignored_frames: int

    def _ended(self, left: int) -> bool:
        """After the decoder's end, with ``left`` frames of the read still to go: whether
        they are ignored (then counted), or may start another response (a wire that
        carries several: the caller hands them to the plain decoder)."""
        if not self.finished or (self.several and not self.failed):
            return False
        self.ignored_frames += left
        return True

    def _in_runs(
        self,
        frames: list[Any],
        start: int,
        prefix: bytes,
        suffix: bytes,
        run: Callable[[list[bytes]], bool],
        others: Callable[[int, int], object],
        holds: Callable[[], bool],
    ) -> int:
        """Decode ``frames`` from ``start`` on in runs: each run of frames with ``prefix`` and
        ``suffix`` in one call of ``run`` (``False``: it did not fit after all, nothing
        decoded; then its first half is tried, and so on), the frames between runs in one
        call of ``others`` (given where they start and end). Stops where ``run`` refuses
        or, after ``others``, the template no longer ``holds``; returns where it stopped
        (the frames' end when it did not). Two frames in the middle are looked at first:
        frames of several templates in turn (parallel tool calls) are not tried."""
        count = len(frames)
        middle = (start + count) // 2
        for sample in frames[middle : middle + 2]:
            if sample.__class__ is not bytes or not (
                sample.startswith(prefix) and sample.endswith(suffix)
            ):
                return start
        rest = frames[start:]
        try:  # one byte per frame: 1 if it has the prefix and the suffix
            fits = bytes(start) + bytes(map(and_, map(bytes.startswith, rest, repeat(prefix)),
                                            map(bytes.endswith, rest, repeat(suffix))))
        except TypeError:  # (an SSEEvent among them)
            return start
        position = start
        while position < count:
            end = fits.find(0, position)
            if end < 0:
                end = count
            if end > position:
                if not run(frames[position:end]):
                    # One frame of the run is not the template's after all: most often the
                    # last one (the reply's end), so the run without it is tried first (the
                    # one-by-one loop takes that frame); else halve the run until its first
                    # part decodes.
                    if end - position > 2 and run(frames[position : end - 1]):
                        return end - 1
                    half = (end - position) // 2
                    if not half or not run(frames[position : position + half]):
                        return position
                    position += half
                    continue
                position = end
            end = fits.find(1, position)
            if end < 0:
                return position
            others(position, end)
            position = end
            if self._ended(count - position):
                return count
            if self.finished or not holds():
                return position
        return count

    def _in_slices(
        self, frames: list[Any], out: list[Event],
        handle: Callable[[list[Any], list[Event]], None],
    ) -> bool:
        """``handle`` a chunk of more than ``BATCH_SLICE`` frames a slice at a time (each
        with its own batch tries, as if it came in reads of that size): whether it did.
        Frames after the end are counted, unread."""
        count = len(frames)
        if count <= BATCH_SLICE:
            return False
        for start in range(0, count, BATCH_SLICE):
            if self._ended(count - start):
                break
            handle(frames[start : start + BATCH_SLICE], out)
        return True
