"""Gemini with shortcuts: a plain decoder that learns from the chunks it read.

A plain text chunk (one candidate, one text part for its open text block, no finish reason)
is learnt when the plain decoder has decoded it (``_learn_shape``) as its
:class:`~llm_rx.speed.spans.Spans` (its bytes around the text and the usage counts). A later
chunk with the same bytes but for those two is read by parsing the two alone, a run of them
at C level (``_batch``); anything else is handed to the plain decoder (whose own usual path,
one candidate with one text part, is as short as a learnt shape's was), which gives the same
events. A read that is one whole ``data:`` event, once a chunk was
learnt, skips the framer.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

import orjson

from ..events import Event, TextDelta
from ..wire._boundary import new_event
from ..wire._checks import MAX_DEPTH, SHALLOW, check_depth
from ..wire.base import _alone
from ..wire.gemini import GeminiDecoder
from .batches import TemplateFrames
from .framing import Program
from .spans import Spans

__all__ = ["GeminiShortcuts"]

_loads = orjson.loads
# Where a chunk's text and its usage counts start (with the JSON spacing both forms use).
_TEXT_AT = (b'"text": "', b'"text":"')
_USAGE_AT = (b'"usageMetadata": ', b'"usageMetadata":')


class GeminiShortcuts(TemplateFrames, GeminiDecoder):
    """The hot path over :class:`~llm_rx.wire.gemini.GeminiDecoder`: a chunk it does not
    recognise goes to the decoder's own ``_chunk``, and is learnt from."""

    _spans: Spans | None = None  # ... and its bytes
    _compiled: Program | None = None

    def _program(self) -> Program | None:
        """The learnt chunk as the compiled core reads it (:mod:`.core`): its text read, its
        counts skipped (the first and last of a run read here)."""
        spans = self._spans
        if spans is None or self.finished:
            return None
        if self._compiled is None or self._compiled.source is not spans:
            found = spans.program()
            if found is None:
                return None
            self._compiled = Program(spans, *found)
        return self._compiled

    def _framer(self) -> Any:
        return self._sse

    def _took(self, values: list[str], chunk: bytes, first: int, last: int, same: bool,
              out: list[Event]) -> None:
        """A run of learnt chunks the compiled core read, as ``_data`` reads each. Their
        counts all have the same keys; where those are the keys of the counts sent last (the
        usual case), each chunk's ``_usage`` would only hold its counts when they changed: the
        run's effect is its last counts held, if any chunk's differed from the one before
        (``same`` says whether the run's did), and only those are parsed. Otherwise the first
        chunk's counts go out after its text, as ``_usage`` sends them."""
        spans = self._spans
        raw = self._core_raw  # type: ignore[attr-defined]
        assert spans is not None
        assert raw is not None
        head = len(raw.pieces[0]) - len(spans.prefix)

        def usage_at(start: int) -> Any:  # (the frame from ``start``, without its blank line)
            end = self._frame_end(chunk, start)  # type: ignore[attr-defined]
            return spans.usage(chunk[start + head : end].rstrip(b"\r\n"))

        usage = usage_at(last)
        sent = self._usage_sent
        if usage and (sent is None or sent.keys() != usage.keys()):  # (other keys: sent)
            if values[0]:
                out.append(new_event(TextDelta, (spans.block, values[0])))
            self._usage(usage_at(first), out)
            values = values[1:]
        if "" in values:
            values = [text for text in values if text]
        self._deliver(TextDelta, spans.block, values, out)  # type: ignore[attr-defined]
        if usage and (not same or usage != self._last_usage):
            self._last_usage = usage
            self._usage_due = True

    def decode(self, chunk: bytes) -> list[Event]:
        """A read that is one whole ``data:`` event (a live stream's usual read), the framer
        holding nothing, is that frame without the framer, behind the same boundary."""
        if self._spans is not None and not self.finished and chunk.startswith(b"data: "):
            end = 4 if chunk.endswith(b"\r\n\r\n") else 2 if chunk.endswith(b"\n\n") else 0
            frame = chunk[6 : len(chunk) - end] if end else b""
            if (frame and b"\n" not in frame and b"\r" not in frame
                    and len(frame) <= self._sse.max_frame and self._sse.at_rest()):
                return self._run(_alone, frame, self._one_frame)
        return super().decode(chunk)

    def _one_frame(self, frames: list[bytes], out: list[Event]) -> None:
        self._each(frames, out, self._data)

    def _chunk(self, chunk: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        super()._chunk(chunk, raw, out)
        self._learn_shape(chunk, raw)

    def _batchable(self) -> bool:
        return self._spans is not None

    def _batch(self, frames: list[Any], start: int, out: list[Event]) -> int:
        """Runs of chunks like the last plain one (see :class:`Spans`) decode in batches,
        with no Python work per chunk; returns where the one-by-one loop takes over."""
        spans = self._spans
        assert spans is not None
        if self._spans_run(frames[start:], out):  # (all of them: no runs to find)
            return len(frames)
        return self._in_runs(
            frames, start, spans.prefix, spans.suffix,
            lambda run: self._spans_run(run, out),
            lambda at, end: self._one_by_one(frames[at:end], 0, out, False),
            lambda: self._spans is spans,
        )

    def _spans_run(self, frames: list[Any], out: list[Event]) -> bool:
        """Decode ``frames`` as the spans path of :meth:`_data` would, one by one, if each is
        the last plain chunk with another text and counts; ``False`` (nothing decoded) if not."""
        spans = self._spans
        assert spans is not None
        found = spans.strings(frames)
        if found is None:
            return False
        texts, counts = found
        block = spans.block
        if texts[0]:
            out.append(new_event(TextDelta, (block, texts[0])))
        self._usage(counts[0], out)
        rest = texts[1:]
        if "" in rest:
            rest = [text for text in rest if text]
        out.extend(map(new_event, repeat(TextDelta), zip(repeat(block), rest)))
        # The later counts, one by one, would each be held (same keys) when they differ from
        # the one before; the latest is the last one.
        if counts.count(counts[0]) != len(counts):
            self._last_usage = counts[-1]
            self._usage_due = True
        return True

    def _data(self, data: bytes, out: list[Event]) -> None:
        spans = self._spans
        if spans is not None and data.startswith(spans.prefix) and data.endswith(spans.suffix):
            # The hottest path: the last plain chunk's bytes but for its text and its usage
            # counts; only those two are parsed (see :class:`Spans`).
            opening = len(spans.prefix) - 1
            middle = data.find(spans.middle, opening + 1)
            usage_from = middle + len(spans.middle)
            usage_to = len(data) - len(spans.suffix)
            if middle > opening and usage_to > usage_from:
                try:
                    text = _loads(data[opening : middle + 1])
                    usage = _loads(data[usage_from:usage_to])
                except orjson.JSONDecodeError:
                    text = usage = None
                if text.__class__ is str and usage.__class__ is dict:
                    if len(data) > SHALLOW and data.count(b"{") + data.count(b"[") > MAX_DEPTH:
                        check_depth(usage, data)
                    if text:
                        out.append(new_event(TextDelta, (spans.block, text)))
                    self._usage(usage, out)
                    return
        super()._data(data, out)  # (the plain decoder's, which learns from it: ``_chunk``)

    def _learn_shape(self, chunk: dict[str, Any], data: bytes) -> None:
        """Remember the shape of a plain text chunk, and its bytes (see :meth:`_data`)."""
        self._spans = None
        candidates = chunk.get("candidates")
        if not (isinstance(candidates, list) and len(candidates) == 1) or chunk.get("error"):
            return
        raw = candidates[0]
        content = raw.get("content") if isinstance(raw, dict) else None
        parts = content.get("parts") if isinstance(content, dict) else None
        cand = self._candidates.get(raw.get("index", 0)) if parts else None
        if (
            cand is None
            or cand.finished
            or cand.kind != "text"
            or raw.get("finishReason") is not None
            or not isinstance(parts, list)
            or len(parts) != 1
            or not isinstance(parts[0], dict)
            or list(parts[0]) != ["text"]
        ):
            return
        if cand.block is not None:
            self._spans = Spans.learn(data, _TEXT_AT, parts[0]["text"], _USAGE_AT,
                                      chunk.get("usageMetadata"), cand.block)
            if self._spans is not None:
                self._learned += 1
