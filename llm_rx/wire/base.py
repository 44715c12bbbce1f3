"""What every provider decoder shares: framing, JSON parsing, the error contract. Sans-I/O.

A decoder turns bytes into events: ``decode(chunk) -> list[Event]`` and ``flush() -> list[Event]``
at EOF. When a frame is bad, the error raised carries, in ``events``, everything decoded from
the same chunk before it (the sources emit those first, then ``on_error``), so nothing that
arrived is lost. After an error, or after the provider's terminal frame, the decoder is
finished: it emits nothing more (frames after the end are counted in ``ignored_frames``).

A reply that ends (EOF) before its terminal frame raises :class:`IncompleteStreamError` from
``flush()``; a last frame cut in half at EOF is a truncation too, never a wire-format error.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from itertools import repeat
from operator import and_, itemgetter
from typing import Any, ClassVar, NamedTuple

import orjson

from ..errors import IncompleteStreamError, LlmRxError, WireFormatError
from ..events import Event, MessageStart
from . import fast
from ._checks import check_depth
from .sse import DEFAULT_MAX_FRAME, SSEDecoder, SSEEvent

__all__ = [
    "BATCH",
    "BATCH_SLICE",
    "BATCH_TRIES",
    "ByteTemplate",
    "ChangedFields",
    "Decoder",
    "PASS_THROUGH",
    "SSEPayloadDecoder",
    "attach_events",
    "count_of",
    "json_strings",
    "new_event",
    "shape_error",
    "split_frames",
]

#: Builds an event from the tuple of its fields without NamedTuple's argument parsing (the
#: decoders' hot path): ``new_event(TextDelta, (index, text))``.
new_event = tuple.__new__


def attach_events(error: LlmRxError, events: list[Event]) -> LlmRxError:
    """Record on ``error`` the events decoded before it (emitted before ``on_error``)."""
    error.events = events  # type: ignore[attr-defined]
    return error


def count_of(value: Any) -> int | None:
    """A token count as the wire gave it: an ``int`` (not a ``bool``), else ``None``."""
    return value if value.__class__ is int else None


class ByteTemplate(NamedTuple):
    """The bytes of a frame around one JSON string in it.

    A later frame that is byte for byte the same but for that string (same prefix, same
    suffix, and what lies between parses as one JSON string) is that frame with another
    string: its value is had by parsing the string alone, a fraction of parsing the frame.
    Trailing spaces (JSON padding) are ignored.
    """

    prefix: bytes  # up to and with the string's opening quote
    suffix: bytes  # from the string's closing quote on
    start: int  # where the string starts (its opening quote)
    tail: int  # how many bytes follow its closing quote

    @classmethod
    def learn(cls, data: bytes, marker: bytes, value: str) -> ByteTemplate | None:
        """The template of ``data`` around the string that follows ``marker`` (which ends
        with the string's opening quote), if that string is ``value`` and ``marker`` occurs
        once."""
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
        return cls(data[: start + 1], data[end:], start, len(data) - end - 1)


# A template as the loop reads it: prefix, suffix, start, tail, event type, block, keeps "".
_Shortcut = tuple[bytes, bytes, int, int, Any, int, bool]

# Fewer frames than this are read one by one (a batch costs a few joins); a chunk tries a
# batch at most so many times (each try looks at all the frames left) in each slice of
# ``BATCH_SLICE`` frames: the tries scale with the chunk, and their cost stays linear in it.
BATCH = 16
BATCH_TRIES = 8
BATCH_SLICE = 512


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


# Errors that are not about the frame and pass through the boundary untouched: llm-rx's own
# (already typed, with their frame) and running out of memory.
PASS_THROUGH = (LlmRxError, MemoryError)


def shape_error(error: Exception, frame: Any) -> WireFormatError:
    """The ``WireFormatError`` for a frame whose JSON is valid but not of the expected shape
    (a list where an object was expected, a missing key, ``None`` where a list was, a value
    nested too deep): whatever decoding it raised, the caller gets a typed error that
    carries the frame, never a crash."""
    raw = frame if isinstance(frame, (bytes, str)) else getattr(frame, "data", None)
    if raw is None:
        raw = getattr(frame, "payload", None)
    failure = WireFormatError(
        f"a frame has an unexpected shape ({type(error).__name__}: {error})",
        raw if isinstance(raw, (bytes, str)) else None,
    )
    failure.__cause__ = error
    return failure


_LAYOUTS: dict[frozenset[str], dict[tuple[str, ...], tuple[str, ...]]] = {}
_LAYOUTS_KEPT = 64  # layouts per set of known fields, keys per layout (they come from the wire)
# The key names come from the wire and the cache lives as long as the process: a layout
# whose names are longer than a real one's is not kept, nor any once the cache holds so many
# characters of names (a stream of huge keys must not pin its keys after it ended).
_LAYOUT_CHARS = 4 * 1024
_LAYOUTS_CHARS = 1024 * 1024
_layouts_chars = [0]  # characters of key names held by the cache


class ChangedFields:
    """The fields of a stream of objects outside a known set, reporting those that changed.

    Objects of one stream mostly share one key layout, so the layout is cached. A field's
    first value is recorded even when ``null`` (it is what the wire said); a later ``null``
    does not erase a value.
    """

    __slots__ = ("_extra_keys", "_keys", "_layouts", "known", "values")

    def __init__(self, known: frozenset[str]) -> None:
        self.known = known
        self.values: dict[str, Any] = {}
        self._keys: tuple[str, ...] = ()
        self._extra_keys: tuple[str, ...] = ()
        # Key layouts seen by any stream, with their fields outside ``known``: a new stream
        # (whose first frames are on the way to its first delta) finds its layout here
        # (with the shortcuts off, nothing is shared: see :mod:`llm_rx.wire.fast`).
        self._layouts = _LAYOUTS.setdefault(known, {}) if fast.enabled else {}

    def changes(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        keys = tuple(obj)
        if keys != self._keys:
            self._keys = keys
            extra = self._layouts.get(keys)
            if extra is None:
                extra = tuple(key for key in keys if key not in self.known)
                if len(self._layouts) < _LAYOUTS_KEPT and len(keys) <= _LAYOUTS_KEPT:
                    _keep_layout(self._layouts, keys, extra,
                                 shared=self._layouts is _LAYOUTS.get(self.known))
            self._extra_keys = extra
        changed: dict[str, Any] | None = None
        values = self.values
        for key in self._extra_keys:
            value = obj[key]
            if key in values and (value is None or values[key] == value):
                continue
            values[key] = value
            if changed is None:
                changed = {}
            changed[key] = value
        return changed


def _keep_layout(
    layouts: dict[tuple[str, ...], tuple[str, ...]], keys: tuple[str, ...],
    extra: tuple[str, ...], *, shared: bool,
) -> None:
    """Cache a layout if its key names are of a real layout's size and (``shared``: the
    process-wide cache) the cache has room."""
    chars = sum(map(len, keys))
    if chars > _LAYOUT_CHARS or (shared and _layouts_chars[0] + chars > _LAYOUTS_CHARS):
        return
    layouts[keys] = extra
    if shared:
        _layouts_chars[0] += chars


class Decoder(ABC):
    """A provider's incremental decoder: bytes in, events out."""

    provider: ClassVar[str]

    def __init__(self) -> None:
        # Whether this stream takes the shortcuts (byte templates, batches, learned shapes):
        # read once, when the decoder is made (see :mod:`llm_rx.wire.fast`).
        self._shortcuts = fast.enabled
        self.started = False  # MessageStart emitted
        self.finished = False  # terminal event emitted or error raised
        self.ignored_frames = 0
        self._at_eof = False  # flushing: a frame cut short is a truncation, not bad input

    @abstractmethod
    def decode(self, chunk: bytes) -> list[Event]:
        """The events the frames completed by ``chunk`` decode to."""

    @abstractmethod
    def flush(self) -> list[Event]:
        """The events still due at EOF; raises ``IncompleteStreamError`` on a cut stream."""

    def _start(self, out: list[Event], model: Any = None, id: Any = None) -> None:
        self.started = True
        out.append(
            MessageStart(
                self.provider,
                model if isinstance(model, str) and model else None,
                id if isinstance(id, str) and id else None,
            )
        )

    def _parse(self, data: bytes) -> dict[str, Any]:
        """A frame's JSON object; a bad one is a wire-format error (a truncation at EOF)."""
        try:
            payload = orjson.loads(data)
        except orjson.JSONDecodeError:
            if self._at_eof:
                raise IncompleteStreamError("the stream ended inside a frame", data) from None
            raise WireFormatError("a frame is not valid JSON", data) from None
        if not isinstance(payload, dict):
            raise WireFormatError("a frame is not a JSON object", data)
        check_depth(payload, data)
        return payload

    def _run(
        self,
        read: Callable[[], list[Any]],
        handle: Callable[[list[Any], list[Event]], None],
    ) -> list[Event]:
        """One ``decode`` step: ``read`` the frames a chunk completed, ``handle`` them into
        events. A framing error raised with the frames completed before it (``frames``)
        comes after those frames' events; any error finishes the decoder."""
        out: list[Event] = []
        if self.finished:
            return out
        try:
            framing: WireFormatError | None = None
            try:
                frames = read()
            except WireFormatError as error:
                frames, framing = getattr(error, "frames", []), error
            handle(frames, out)
            if framing is not None and not self.finished:
                raise framing
        except LlmRxError as error:
            raise self._fail(error, out, start=self.started) from None
        except MemoryError:
            raise
        except Exception as error:  # the boundary (a framer's failure)
            raise self._fail(shape_error(error, None), out, start=self.started) from error
        return out

    def _each(
        self, frames: list[Any], out: list[Event], one: Callable[[Any, list[Event]], None]
    ) -> None:
        """Decode frames one by one with ``one``; frames after the end are counted, unread."""
        frame: Any = None
        try:
            for frame in frames:
                if self.finished:
                    self.ignored_frames += 1
                else:
                    one(frame, out)
        except PASS_THROUGH:
            raise
        except Exception as error:  # the boundary: any failure is the frame's
            raise shape_error(error, frame) from error

    def _in_runs(
        self,
        frames: list[Any],
        start: int,
        prefix: bytes,
        suffix: bytes,
        run: Callable[[list[bytes]], bool],
        others: Callable[[list[Any]], object],
        holds: Callable[[], bool],
    ) -> int:
        """Decode ``frames`` from ``start`` on in runs: each run of frames with ``prefix`` and
        ``suffix`` in one call of ``run`` (``False``: it did not fit after all, nothing
        decoded; then its first half is tried, and so on), the frames between runs in one
        call of ``others``. Stops where ``run`` refuses or, after ``others``, the template no
        longer ``holds``; returns where it stopped (the frames' end when it did not). Two
        frames in the middle are looked at first: frames of several templates in turn
        (parallel tool calls) are not tried."""
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
                    # One frame of the run is not the template's after all (often the last
                    # one: the reply's end). Halve the run until its first part decodes.
                    half = (end - position) // 2
                    if not half or not run(frames[position : position + half]):
                        return position
                    position += half
                    continue
                position = end
            end = fits.find(1, position)
            if end < 0:
                return position
            others(frames[position:end])
            position = end
            if self.finished:
                self.ignored_frames += count - position
                return count
            if not holds():
                return position
        return count

    def _in_slices(
        self, frames: list[Any], out: list[Event],
        handle: Callable[[list[Any], list[Event]], None],
    ) -> bool:
        """``handle`` a chunk of more than ``BATCH_SLICE`` frames a slice at a time (each
        with its own batch tries, as if it came in reads of that size): whether it did.
        Frames after the end are counted, unread. Not with the shortcuts off."""
        count = len(frames)
        if count <= BATCH_SLICE or not self._shortcuts:
            return False
        for start in range(0, count, BATCH_SLICE):
            if self.finished:
                self.ignored_frames += count - start
                break
            handle(frames[start : start + BATCH_SLICE], out)
        return True

    def _at_end(self, last: Callable[[list[Event]], None]) -> list[Event]:
        """One ``flush`` step: ``last`` decodes the frames left at EOF (a frame cut short is
        a truncation) and finishes, behind the same boundary as ``decode``. A cut stream
        opens the message (the reply is interrupted, not absent); a body that was never a
        stream of this provider does not."""
        out: list[Event] = []
        if self.finished:
            return out
        self._at_eof = True
        try:
            last(out)
        except LlmRxError as error:
            start = not isinstance(error, WireFormatError)
            raise self._fail(error, out, start=start) from None
        except MemoryError:
            raise
        except Exception as error:  # the boundary (finishing the last frames)
            raise self._fail(shape_error(error, None), out, start=self.started) from error
        return out

    def _fail(self, error: LlmRxError, out: list[Event], *, start: bool) -> LlmRxError:
        """Finish with ``error``; ``start`` opens the message first if nothing did yet."""
        if start and not self.started:
            self._start(out)
        self.finished = True
        return attach_events(error, out)


class SSEPayloadDecoder(Decoder):
    """A decoder whose wire is SSE events with one JSON payload each."""

    #: Whether the payloads name their own kind (then the framer may drop event names).
    payload_names_kind = False

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__()
        self._sse = SSEDecoder(max_frame, names=not self.payload_names_kind)
        # The hot path's shortcut: a decoder that just decoded a plain delta frame may keep
        # the frame's template with the event it made (``_learn``); a frame that matches a
        # template is that event with another string, decoded in the loop below. The last
        # template hit is kept for a decoder whose state follows the frames (``_template_hit``).
        self._templates: list[_Shortcut] = []
        self._template_hit: _Shortcut | None = None
        self._learned = 0  # templates learned so far (a new one may make a batch worth it)

    def decode(self, chunk: bytes) -> list[Event]:
        return self._run(lambda: self._sse.decode_payloads(chunk), self._frames)

    def flush(self) -> list[Event]:
        return self._at_end(self._last_events)

    def _last_events(self, out: list[Event]) -> None:
        self._each(self._sse.flush(), out, self._event)
        if not self.finished:
            if not self.started and not self._sse.recognised and self._sse.first_unknown:
                raise WireFormatError(
                    f"the body is not a {self.provider} event stream", self._sse.first_unknown
                )
            self._eof(out)

    def _json(self, event: SSEEvent) -> dict[str, Any]:
        """The event's JSON object; a bad one is a wire-format error (a truncation at EOF)."""
        return self._parse(event.data)

    @abstractmethod
    def _event(self, event: SSEEvent, out: list[Event]) -> None:
        """Decode one SSE event into ``out``."""

    def _learn(
        self, data: bytes, marker: bytes, value: str, event_type: Any, index: int,
        keeps_empty: bool,
    ) -> None:
        """Keep ``data``'s template (see :class:`ByteTemplate`) as a shortcut to
        ``event_type(index, string)``; the latest first, a few at most (one per block).
        Nothing is learned with the shortcuts off."""
        if not self._shortcuts:
            return
        template = ByteTemplate.learn(data, marker, value)
        if template is None:
            return
        shortcut: _Shortcut = (template.prefix, template.suffix, template.start, template.tail,
                               event_type, index, keeps_empty)
        kept = [s for s in self._templates if s[5] != index or s[4] is not event_type]
        self._templates = [shortcut, *kept[:7]]
        self._learned += 1

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
        tries = BATCH_TRIES if self._shortcuts and count >= BATCH else 0
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
        return self._in_runs(
            frames, start, shortcut[0], shortcut[1],
            lambda run: self._template_run(run, shortcut, out),
            lambda others: self._one_by_one(others, 0, out, False),
            lambda: self._templates is templates,  # (a template learned or forgotten)
        )

    def _template_run(self, frames: list[bytes], shortcut: _Shortcut, out: list[Event]) -> bool:
        """Decode frames with the prefix and suffix of ``shortcut``'s template, if their
        strings parse: all of them as one JSON array. ``False`` (nothing decoded) if not."""
        prefix, suffix, _, _, event_type, block, keeps_empty = shortcut
        if min(map(len, frames)) < len(prefix) + len(suffix):  # (prefix and suffix overlap)
            return False
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
        count = len(frames)
        frame: Any = None
        try:
            for position in range(start, count):
                frame = frames[position]
                if frame.__class__ is bytes:
                    if templates:
                        data = frame.rstrip(b" ") if frame[-1] == 0x20 else frame  # (padding)
                        for shortcut in templates:
                            prefix, suffix, begin, tail, event_type, block, keeps_empty = shortcut
                            if data.startswith(prefix) and data.endswith(suffix):
                                try:
                                    value = loads(data[begin : len(data) - tail])
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
                if self.finished:
                    self.ignored_frames += count - position - 1
                    return count
                templates = self._templates
                if early and self._learned != learned and count - position > BATCH:
                    return position + 1
        except PASS_THROUGH:
            raise
        except Exception as error:  # the boundary: any failure is the frame's
            raise shape_error(error, frame) from error
        return count

    def _data(self, data: bytes, out: list[Event]) -> None:
        """Decode the data of a plain ``message`` event (the hot path; override to skip
        making an ``SSEEvent``)."""
        self._event(SSEEvent("message", data), out)

    @abstractmethod
    def _eof(self, out: list[Event]) -> None:
        """EOF came without a terminal frame: finish, or raise ``IncompleteStreamError``."""
