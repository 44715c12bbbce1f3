"""Incremental ``text/event-stream`` framing, per the WHATWG event-stream rules. Sans-I/O.

``SSEDecoder.decode(chunk)`` returns the events completed by ``chunk``; ``flush()`` returns the
last event at EOF. Chunk boundaries may fall anywhere (inside a UTF-8 character, between the
``\\r`` and ``\\n`` of a line end, inside a field name): the events do not depend on them.

Rules implemented: ``\\r\\n``, ``\\r`` and ``\\n`` line ends; a leading BOM is dropped; lines
starting with ``:`` are comments (keep-alives); ``field: value`` with one optional space
after the colon; a line without a colon is a field with an empty value; several ``data`` lines
join with ``\\n``; an event is dispatched at a blank line; ``id`` (ignored when it contains
NUL) and ``retry`` (digits only) update the decoder's state. ``data`` stays ``bytes`` (the
JSON parser takes bytes).

Two deliberate deviations from a browser's ``EventSource``: ``flush()`` dispatches an event
whose last line had no newline (servers often omit the final blank line), and an event whose
data is empty (``data:`` alone) is not dispatched (no provider sends a meaningful one).

``max_frame`` bounds one event (its bytes after line-end normalisation, without the blank
line ending it): a larger one raises ``FrameTooLargeError`` whether it is still buffered or
arrived whole in one chunk, so the outcome does not depend on chunking either.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..errors import FrameTooLargeError

__all__ = ["DEFAULT_MAX_FRAME", "SSEDecoder", "SSEEvent"]

#: Default bound on the bytes of one pending (not yet dispatched) event.
DEFAULT_MAX_FRAME = 16 * 1024 * 1024
# A larger chunk (a whole body in one read) is framed a piece of about this size at a time:
# the same events, with the working set of a usual read (a few whole-body copies and splits
# cost twice as much per byte as the same work on reads of this size).
PIECE = 64 * 1024

_BOM = b"\xef\xbb\xbf"
_new = tuple.__new__  # (an event from its fields, without NamedTuple's argument parsing)
# A line starting with one of these is JSON, HTML or XML: a body of another kind, not SSE.
_NOT_SSE = (b"{", b"[", b"<")



class SSEEvent(NamedTuple):
    """One dispatched server-sent event."""

    event: str
    """The ``event:`` name, ``"message"`` when none was given."""
    data: bytes
    """The ``data`` lines joined with ``\\n``."""
    id: str | None = None
    """The last event id seen so far, if any."""


def _events(items: list[Any]) -> list[SSEEvent]:
    return [item if type(item) is SSEEvent else SSEEvent("message", item) for item in items]


class SSEDecoder:
    """Incremental SSE framer: `decode(bytes) -> list[SSEEvent]` and `flush()`.

    Args:
        max_frame: The longest event read, in bytes; a longer one is a `FrameTooLargeError`.
        names: Keep the `event:` names (a wire whose payloads name their kind needs none).
    """

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME, *, names: bool = True) -> None:
        self.max_frame = max_frame
        # False: the reader takes each event's kind from its payload, so ``decode_payloads``
        # may give named events as bare data too (``error`` events keep their name).
        self.names = names
        self.last_event_id: str | None = None
        self.retry: int | None = None
        self.recognised = False  # a data/event/id/retry field or a comment was seen
        self.first_unknown: bytes | None = None  # the first line that looked like JSON/HTML
        # The normalised (LF only) bytes of the unfinished event, in one growing buffer: an
        # event arriving in many small reads costs about its size, not an object per read.
        self._pending = bytearray()
        self._skip_lf = False  # the last chunk ended in "\r": a "\n" first in the next is its pair
        self._started = False  # past the BOM check
        self._head = b""  # first bytes held until the BOM check can be decided
        self._names: dict[bytes, str] = {}  # event names seen, decoded once

    def at_rest(self) -> bool:
        """Whether the framer holds nothing that a read's frames depend on: past the BOM
        check, no unfinished event, no pending ``\\r``, no event id so far."""
        return (self._started and not self._pending and not self._skip_lf
                and self.last_event_id is None)

    def reconnected(self) -> None:
        """The connection was cut and a new one goes on with the event after the last one
        dispatched (``Last-Event-ID``, a provider's resume): the unfinished event is
        dropped, as a browser's ``EventSource`` drops it, and the new body's first bytes
        are checked for a BOM again; the last event id is kept."""
        self._pending.clear()
        self._skip_lf = False
        self._started = False
        self._head = b""

    def decode(self, chunk: bytes) -> list[SSEEvent]:
        """The events `chunk` completed.

        Args:
            chunk: The next bytes of the body, cut anywhere.
        """
        try:
            return _events(self.decode_payloads(chunk))
        except FrameTooLargeError as error:
            error.frames = _events(error.frames)
            raise

    def decode_payloads(self, chunk: bytes) -> list[bytes | SSEEvent]:
        """Like `decode`, but a plain `message` event (no name, no id so far) is given as
        its `data` bytes alone: the hot path makes no object per event.

        Args:
            chunk: The next bytes of the body, cut anywhere.
        """
        if len(chunk) > 2 * PIECE:
            cut = chunk.find(b"\n\n", PIECE)
            if 0 <= cut < len(chunk) - PIECE:
                return self._in_pieces(chunk, cut + 2)
        if (  # One whole "data: ..." event and nothing else: a live stream's usual read.
            chunk.endswith(b"\n\n")
            and chunk.startswith(b"data: ")
            and chunk.count(b"\n") == 2
            and len(chunk) - 2 <= self.max_frame
            and b"\r" not in chunk
            and self.at_rest()
        ):
            self.recognised = True
            return [chunk[6:-2]] if len(chunk) > 8 else []
        body = self._complete(chunk)
        if body is None:
            return []
        body, rest = body[: (end := body.rfind(b"\n\n"))], body[end + 2 :]
        events = self._uniform(body) if self.last_event_id is None else None
        if events is None:
            events = []
            for block in body.split(b"\n\n"):
                self._block(block, events)
        if rest:
            self._hold(rest, events)
        return events

    def _complete(self, chunk: bytes) -> bytes | None:
        """The pending bytes and ``chunk`` (line ends normalised), when they complete an
        event; else ``None`` (then ``chunk`` is held)."""
        if not self._started:
            if chunk[:1] == b"d" and not self._head:  # ("data:", no BOM to strip)
                self._started = True
            else:
                chunk = self._strip_bom(chunk)
                if not chunk:
                    return None
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[:1] == b"\n":  # the "\n" of a "\r\n" split across chunks
                chunk = chunk[1:]
        if b"\r" in chunk:
            # A "\r" at the end is a line end now (no waiting for the next chunk); a "\n"
            # starting the next chunk then belongs to it.
            self._skip_lf = chunk.endswith(b"\r")
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        pending = self._pending
        if b"\n\n" not in chunk and not (
            pending and chunk.startswith(b"\n") and pending.endswith(b"\n")
        ):
            if chunk:
                self._hold(chunk)
            return None
        if pending:
            pending += chunk
            chunk = bytes(pending)
            pending.clear()
        return chunk

    def _uniform(self, body: bytes) -> list[bytes | SSEEvent] | None:
        """The payloads of complete events (``body``, no id so far) that are all one
        ``data:`` line, or all an ``event:`` line and one ``data:`` line and no ``error``
        event (given with their names where the framer keeps names): split at C level, no
        Python call per event. ``None`` when they are not all of one such layout."""
        if body.startswith(b"data: "):
            if body.count(b"\n") != 2 * body.count(b"\n\ndata: "):
                return None
            payloads = body[6:].split(b"\n\ndata: ")
            if max(map(len, payloads)) + 6 > self.max_frame:
                too_long = next(p for p in payloads if len(p) + 6 > self.max_frame)
                done = payloads[: payloads.index(too_long)]
                raise self._too_large(b"data: " + too_long, [p for p in done if p])
        elif not body.startswith(b"event: ") or b"event: error" in body:
            return None
        else:
            # "event: name\ndata: {...}" blocks: the lines are event, data, blank, event, ...
            # (checked at C level).
            lines = body.split(b"\n")
            count = (len(lines) + 1) // 3
            if len(lines) != 3 * count - 1 or any(lines[2::3]):
                return None
            datas = b"\n".join(lines[1::3])
            if not (datas.startswith(b"data: ") and datas.count(b"\ndata: ") == count - 1
                    and b"\n".join(lines[0::3]).count(b"\nevent: ") == count - 1):
                return None
            payloads = datas[6:].split(b"\ndata: ")
            if 2 * max(map(len, lines)) + 1 > self.max_frame:  # (a block's bound)
                blocks = body.split(b"\n\n")
                at = next((i for i, b in enumerate(blocks) if len(b) > self.max_frame), None)
                if at is not None:
                    raise self._too_large(blocks[at], [p for p in payloads[:at] if p])
            if self.names:  # (each payload with its event's name)
                self.recognised = True
                raws = [line[7:] for line in lines[0::3]]
                for raw in set(raws).difference(self._names):  # (new names: decoded once)
                    self._name(raw)
                named = zip(map(self._names.__getitem__, raws), payloads, strict=True)
                return [_new(SSEEvent, (name, data, None)) for name, data in named if data]
        self.recognised = True
        if b"" in payloads:  # ("data: " alone dispatches nothing)
            payloads = [payload for payload in payloads if payload]
        return payloads  # type: ignore[return-value]  # (list is invariant)

    def _block(self, block: bytes, events: list[Any]) -> None:
        """One complete event's lines: the usual layouts directly, any other by the
        general rules."""
        if len(block) > self.max_frame:
            raise self._too_large(block, events)
        if block.startswith(b"data: ") and b"\n" not in block:
            self.recognised = True
            if len(block) > 6:
                data = block[6:]
                events.append(data if self.last_event_id is None else SSEEvent(
                    "message", data, self.last_event_id))
        elif block.startswith(b"event: ") and block.count(b"\n") == 1:
            name, _, line = block.partition(b"\n")
            if line.startswith(b"data: ") and len(line) > 6:  # "event: x\ndata: {...}"
                self.recognised = True
                if self.names or name == b"event: error" or self.last_event_id is not None:
                    events.append(SSEEvent(self._name(name[7:]), line[6:], self.last_event_id))
                else:  # (a payload that names its kind: see ``names``)
                    events.append(line[6:])
            else:
                self._parse_block(block, events)
        elif block:
            self._parse_block(block, events)

    def _in_pieces(self, chunk: bytes, end: int) -> list[bytes | SSEEvent]:
        """Frame a large chunk a piece at a time (the first up to ``end``), each cut just
        after a blank line (the events do not depend on where a chunk is cut); an error
        carries the events of the pieces before it too."""
        events: list[bytes | SSEEvent] = []
        start, size = 0, len(chunk)
        while start < size:
            if start:
                cut = chunk.find(b"\n\n", start + PIECE)
                end = size if cut < 0 or size - cut < PIECE else cut + 2
            try:
                events += self.decode_payloads(chunk[start:end])
            except FrameTooLargeError as error:
                error.frames = events + error.frames
                raise
            start = end
        return events

    def flush(self) -> list[SSEEvent]:
        """Dispatch what is left at EOF (a last event without its blank line)."""
        if not self._started and self._head:
            self._started = True
            self._pending += self._head
        self._skip_lf = False
        rest = bytes(self._pending)
        self._pending.clear()
        events: list[SSEEvent] = []
        if rest.strip(b"\n"):
            self._parse_block(rest, events)
        return events

    def _hold(self, data: bytes, done: list[Any] | None = None) -> None:
        """Keep the bytes of an unfinished event; refuse them past the limit (the events
        completed before them, ``done``, go with the error: nothing that arrived is lost)."""
        pending = self._pending
        pending += data
        # An event's size excludes the blank line that ends it (a pending "\n" may be half).
        if len(pending) - data.endswith(b"\n") > self.max_frame:
            head = bytes(pending[:200])  # (the evidence the error keeps)
            pending.clear()
            raise self._too_large(head, [] if done is None else done)

    def _name(self, raw: bytes) -> str:
        name = self._names.get(raw)
        if name is None:
            # (an empty name is no name: the event is a "message", as the general rules say)
            name = self._names[raw] = raw.decode("utf-8", "replace") or "message"
        return name

    def _too_large(self, frame: bytes, events: list[Any]) -> FrameTooLargeError:
        error = FrameTooLargeError(
            f"SSE event larger than the limit of {self.max_frame} bytes", frame[:200]
        )
        error.frames = events
        return error

    def _strip_bom(self, chunk: bytes) -> bytes:
        head = self._head + chunk
        if len(head) < len(_BOM) and _BOM.startswith(head):
            self._head = head
            return b""
        self._started = True
        self._head = b""
        return head[len(_BOM) :] if head.startswith(_BOM) else head

    def _parse_block(self, block: bytes, events: list[Any]) -> None:
        """The general path: a block of lines, dispatching at every blank line."""
        name = ""
        data: list[bytes] = []
        for line in block.split(b"\n"):
            if not line:
                self._dispatch(name, data, events)
                name, data = "", []
                continue
            if line[0] == 0x3A:  # ":" comment
                self.recognised = True
                continue
            field, colon, value = line.partition(b":")
            if colon and value[:1] == b" ":
                value = value[1:]
            if field == b"data":
                data.append(value)
            elif field == b"event":
                name = value.decode("utf-8", "replace")
            elif field == b"id":
                if b"\x00" not in value:
                    self.last_event_id = value.decode("utf-8", "replace")
            elif field == b"retry":
                if value.isdigit():
                    self.retry = int(value)
            else:
                if self.first_unknown is None and line[:1] in _NOT_SSE:
                    self.first_unknown = line[:200]
                continue
            self.recognised = True
        self._dispatch(name, data, events)

    def _dispatch(self, name: str, data: list[bytes], events: list[Any]) -> None:
        payload = b"\n".join(data)
        if payload:  # an empty data buffer dispatches nothing
            events.append(SSEEvent(name or "message", payload, self.last_event_id))
