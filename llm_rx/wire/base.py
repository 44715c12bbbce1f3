"""What every provider decoder shares: framing, JSON parsing, the error contract. Sans-I/O.

A decoder turns bytes into events: ``decode(chunk) -> list[Event]`` and ``flush() -> list[Event]``
at EOF. When a frame is bad, the error raised carries, in ``events``, everything decoded from
the same chunk before it (the sources emit those first, then ``on_error``), so nothing that
arrived is lost. After an error, or after the provider's terminal frame, the decoder is
finished: it emits nothing more (frames after the end are counted in ``ignored_frames``),
except on a wire that carries several responses one after another (`Decoder.several`):
there, after a terminal frame (never after an error), a frame that starts a response
begins the next one, decoded afresh (``MessageStart`` ... its own terminal).

A reply that ends (EOF) before its terminal frame raises :class:`IncompleteStreamError` from
``flush()``; a last frame cut in half at EOF is a truncation too, never a wire-format error.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import orjson

from ..errors import IncompleteStreamError, LlmRxError, WireFormatError
from ..events import Event, MessageStart
from ._boundary import PASS_THROUGH, attach_events, count_of, new_event, shape_error
from ._checks import check_depth
from .changed import ChangedFields
from .sse import DEFAULT_MAX_FRAME, SSEDecoder, SSEEvent

# (the shared functions are re-exported: ``llm_rx.wire.base`` is where the decoders and their
# tests have always found them)
__all__ = [
    "ChangedFields",
    "Decoder",
    "KindInPayload",
    "PASS_THROUGH",
    "SSEPayloadDecoder",
    "TextFold",
    "attach_events",
    "count_of",
    "new_event",
    "shape_error",
]

class TextFold(Protocol):
    """Where a consumer that only folds the events wants a delta's strings (see
    `Decoder.fold_into`): given the event type and the block, the callable that folds one
    (``list.append`` of the block's parts), or ``None`` where it must get the event. With
    ``before``, the events the decoder made earlier in the same read: the fold takes them
    first (and empties the list), so the strings come after them."""

    def __call__(self, event_type: Any, index: int, before: list[Event] | None = None, /
                 ) -> Callable[[str], object] | None: ...


def _alone(frame: Any) -> list[Any]:
    """A frame given whole, as the one frame of its read."""
    return [frame]


class Decoder(ABC):
    """A provider's incremental decoder: bytes in, events out.

    A plain decoder: what each frame means, read by the general rules, with no shortcut and
    no switch. A subclass may take frames it recognises itself and hand every other to
    these methods (``_data``, ``_event``, ``_frames``).
    """

    provider: ClassVar[str]
    #: Whether a stream of this wire may carry another response after a terminal frame
    #: (then `_next_response` says which frame starts it).
    several: ClassVar[bool] = False

    def __init__(self) -> None:
        self.started = False  # MessageStart emitted
        self.finished = False  # terminal event emitted or error raised
        self.failed = False  # an error raised: nothing more, whatever the wire
        self.ignored_frames = 0
        self._at_eof = False  # flushing: a frame cut short is a truncation, not bad input

    @abstractmethod
    def decode(self, chunk: bytes) -> list[Event]:
        """Decode the next bytes of the body.

        Args:
            chunk: The next bytes, cut anywhere (a frame may span many chunks).

        Returns:
            The events of the frames `chunk` completed; a bad frame raises a typed error
                carrying it and the events decoded before it.
        """

    @abstractmethod
    def flush(self) -> list[Event]:
        """The events still due at EOF; raises `IncompleteStreamError` on a cut stream."""

    def settled(self) -> Decoder:
        """The decoder that ``decode`` now hands each read to: this one, or for a decoder
        that wraps another (a check of the first frames, a sniffer) the one it wraps, once
        the wrapper only passes reads on (a source may then call it directly)."""
        return self

    def reconnected(self) -> bool:
        """The connection was cut, and a continuation of the same reply will follow from
        the frame after the last whole one (a resumed stream): whether this wire can go on
        so (then the unfinished frame is dropped and every state of the reply is kept). A
        wire with no event ids to resume from (NDJSON, a binary event stream) cannot."""
        return False

    def fold_into(self, fold: TextFold | None) -> None:
        """Say that the events go only to a fold, which may take a delta's string directly.

        A subclass that reads a live read's string without its frame may then give it to
        the fold instead of making its event; a plain decoder makes every event.

        Args:
            fold: Given a delta's event type and block, the callable that folds its string,
                or `None` where the event must be made; `None` for no fold.
        """
        return  # (a plain decoder makes every event)

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
        read: Callable[[Any], list[Any]],
        chunk: Any,
        handle: Callable[[list[Any], list[Event]], None],
    ) -> list[Event]:
        """One ``decode`` step: ``read`` the frames ``chunk`` completed, ``handle`` them into
        events. A framing error raised with the frames completed before it (``frames``)
        comes after those frames' events; any error finishes the decoder."""
        out: list[Event] = []
        if self.finished and (self.failed or not self.several):
            return out
        try:
            framing: WireFormatError | None = None
            try:
                frames = read(chunk)
            except WireFormatError as error:
                frames, framing = error.frames, error
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
        self,
        frames: list[Any],
        out: list[Event],
        one: Callable[[Any, list[Event]], None],
        other: Callable[[Any, list[Event]], None] | None = None,
    ) -> None:
        """Decode frames one by one with ``one`` (with ``other``, given, a frame that is not
        ``bytes``); frames after the end are counted, unread."""
        frame: Any = None
        try:
            for frame in frames:
                if self.finished and not self._next_response(frame):
                    self.ignored_frames += 1
                elif other is None or frame.__class__ is bytes:
                    one(frame, out)
                else:
                    other(frame, out)
        except PASS_THROUGH:
            raise
        except Exception as error:  # the boundary: any failure is the frame's
            raise shape_error(error, frame) from error

    def _next_response(self, frame: Any) -> bool:
        """After the terminal frame: whether ``frame`` starts another response on the same
        stream, the decoder then made ready to decode it (its state of the last response
        gone, ``started`` and ``finished`` false). A wire with one response a stream: never."""
        return False

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
        self.finished = self.failed = True
        return attach_events(error, out)


class SSEPayloadDecoder(Decoder):
    """A decoder whose wire is SSE events with one JSON payload each."""

    #: Whether the payloads name their own kind (then the framer may drop event names).
    payload_names_kind = False

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        """A decoder at the start of a body.

        Args:
            max_frame: The longest frame read, in bytes; a longer one is a
                `FrameTooLargeError` (nothing unbounded is buffered).
        """
        super().__init__()
        self._sse = SSEDecoder(max_frame, names=not self.payload_names_kind)

    def decode(self, chunk: bytes) -> list[Event]:
        return self._run(self._sse.decode_payloads, chunk, self._frames)

    def reconnected(self) -> bool:
        if self.finished:
            return False
        self._sse.reconnected()
        return True

    #: On a wire that carries several responses (`Decoder.several`): the payload ``type``
    #: values that start the next response after a terminal frame.
    next_types: ClassVar[frozenset[str]] = frozenset()

    def _next_response(self, frame: Any) -> bool:
        if not self.several or self.failed:
            return False
        try:
            kind = orjson.loads(frame if frame.__class__ is bytes else frame.data).get("type")
        except (orjson.JSONDecodeError, AttributeError):
            return False  # (a sentinel after the end, ``[DONE]``: ignored as ever)
        if not isinstance(kind, str) or kind not in self.next_types:
            return False
        self._fresh()
        self.started = self.finished = False
        return True

    def _fresh(self) -> None:
        """The state of one response, at its start (for a wire that carries several)."""

    def decode_payload(self, data: bytes, event: str = "message") -> list[Event]:
        """Decode one event framed elsewhere (a WebSocket message, an event another client
        already parsed): the events `decode` gives for ``event: <event>`` and
        ``data: <data>`` followed by a blank line, under the same error contract.

        Args:
            data: The event's data: one JSON payload (or the wire's sentinel, `[DONE]`).
            event: The event's name (`"message"` when it has none).

        Returns:
            The events of that frame.
        """
        frame = data if event == "message" else SSEEvent(event, data)
        return self._run(_alone, frame, self._frames)

    def _frames(self, frames: list[Any], out: list[Event]) -> None:
        """Decode a read's frames in order (bare ``bytes`` for plain ``message`` events,
        `SSEEvent` for the others): frames after the end are counted, unread."""
        self._each(frames, out, self._data, self._event)

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

    def _data(self, data: bytes, out: list[Event]) -> None:
        """Decode the data of a plain ``message`` event (the hot path; override to skip
        making an ``SSEEvent``)."""
        self._event(SSEEvent("message", data), out)

    @abstractmethod
    def _eof(self, out: list[Event]) -> None:
        """EOF came without a terminal frame: finish, or raise ``IncompleteStreamError``."""


class KindInPayload(SSEPayloadDecoder):
    """An SSE wire whose every payload names its kind (a ``type`` or an ``event_type``): the
    event names are not read, and each event is its data, as `_data` decodes it."""

    payload_names_kind = True

    def _event(self, event: SSEEvent, out: list[Event]) -> None:
        self._data(event.data, out)

    @abstractmethod
    def _data(self, data: bytes, out: list[Event]) -> None:
        """Decode one event's data into ``out``."""
