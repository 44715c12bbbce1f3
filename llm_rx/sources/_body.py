"""Reading one body, written once: the state machine the sync and the async loops drive.

The loops in `llm_rx.sources._engine` only move bytes: they take a read from the source
(bounding its wait, for the async one), stop when the consumer went away, close the source.
Everything a read means is decided here, the same for both:

```text
read(chunk) ─► before the reply started: the read is kept (a non-stream body is told in
               the head) and decoded; once it started (or the head grew past what is kept),
               the decoder a provider check wraps is called directly (``Decoder.settled``)
               and a fold takes the strings it can (``Decoder.fold_into``)
            ─► a read of more than 128 KiB: decoded as reads of 64 KiB
            ─► a non-stream body (``NonStreamBodyError`` before any event): every read after
               is kept, up to ``max_frame`` bytes (past it: a ``FrameTooLargeError`` while it
               arrives); at the end the body is re-framed as its provider's stream and decoded
end()       ─► the decoder's ``flush()`` (or the kept non-stream body, decoded)
failed(e)   ─► the events decoded before the error are emitted (``LlmRxError.events``)
```

Each read's events go to ``emit`` as one list, in order; a decoding error is raised (the
events before it emitted first by ``failed``), whatever no check foresaw as a
``WireFormatError`` carrying the read (the error boundary, `decoded()`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..errors import FrameTooLargeError, IncompleteStreamError, LlmRxError, NonStreamBodyError
from ..events import Event
from ..wire.base import PASS_THROUGH, Decoder, TextFold, shape_error
from ..wire.finished import so_far
from ..wire.providers import provider_id
from ..wire.registry import DECODERS
from ..wire.restream import restream
from ..wire.sniffing import SNIFF_LIMIT
from ..wire.sse import DEFAULT_MAX_FRAME

__all__ = [
    "BYTES_TYPES", "BodyDecoding", "as_bytes", "body_too_large", "decoded", "flushed",
    "wrong_chunk",
]

BYTES_TYPES = (bytes, bytearray, memoryview)

# A read larger than this is decoded in reads of ``_READ`` bytes: a whole body then costs what
# it costs in a connection's reads (one list of events per read keeps the batches short).
_READ = 64 * 1024
_READ_LIMIT = 2 * _READ

# A non-stream body is told within the head the sniffer holds (at most this much is kept to
# read it again as the reply it is).
_HEAD_KEPT = 16 * SNIFF_LIMIT


def as_bytes(chunk: object) -> bytes:
    """A read as ``bytes``; anything but bytes is refused with what was expected."""
    if isinstance(chunk, BYTES_TYPES):
        return bytes(chunk)
    raise TypeError(wrong_chunk(chunk))


def wrong_chunk(chunk: object) -> str:
    """What a byte source should give instead of ``chunk``."""
    hint = {
        "str": "encode the text, or pass the body as bytes",
        "dict": "a parsed chunk is no body: pass the raw bytes, or an SDK's stream to from_sdk()",
    }.get(type(chunk).__name__, "pass the body's bytes")
    return f"a byte source must give bytes, not {type(chunk).__name__} ({hint})"


def decoded(decoder: Decoder, chunk: bytes) -> list[Event]:
    """``decoder.decode(chunk)`` behind the error boundary: whatever it raises is an
    ``LlmRxError`` (a decoder's own check gives the exact frame; a failure no check foresaw
    gives a ``WireFormatError`` carrying the chunk), and the decoder is finished."""
    try:
        return decoder.decode(chunk)
    except PASS_THROUGH:
        raise
    except Exception as error:  # the boundary
        raise _unforeseen(decoder, error, chunk) from error


def flushed(decoder: Decoder) -> list[Event]:
    """``decoder.flush()`` behind the same boundary as `decoded()`."""
    try:
        return decoder.flush()
    except PASS_THROUGH:
        raise
    except Exception as error:  # the boundary
        raise _unforeseen(decoder, error, None) from error


def body_too_large(limit: int, head: bytes) -> FrameTooLargeError:
    """A non-stream body refused as it grew past ``limit`` bytes (decoded), carrying its
    first bytes."""
    return FrameTooLargeError(
        f"the non-stream body grew past max_frame ({limit} bytes, decoded): refused while it "
        "arrived", head[:200],
    )


def _unforeseen(decoder: Decoder, error: Exception, chunk: bytes | None) -> LlmRxError:
    decoder.finished = decoder.failed = True
    return shape_error(error, chunk)


class BodyDecoding:
    """The reading of one body through ``decoder``: ``read`` each read as it arrives, then
    ``end`` at EOF; ``failed`` with an ``LlmRxError`` either raised. Each read's events go to
    ``emit`` (one list a read); ``fold``: the events only go to a fold, which takes what the
    decoder gives it directly once the reply started (see ``Decoder.fold_into``). A non-stream
    body is kept whole to be read as the reply it is, and refused (`FrameTooLargeError`) as
    soon as it grows past ``max_frame`` bytes.

    ``read`` is the step the reading is at (the head, the reply, a non-stream body's rest):
    a loop calls ``body.read(chunk)`` for every read and never needs to know which.
    """

    def __init__(
        self,
        decoder: Decoder,
        emit: Callable[[list[Event]], None],
        fold: TextFold | None = None,
        max_frame: int = DEFAULT_MAX_FRAME,
    ) -> None:
        self.decoder = decoder
        self._max_frame = max_frame
        self._emit = emit
        self._fold = fold
        self._reader = decoder  # (once the reply started: the decoder a check wraps)
        self._decode = decoder.decode
        self._head: list[bytes] = []  # the reads before the reply started
        self._kept = 0
        self._provider: str | None = None  # a non-stream body's provider, once told
        #: Take the next read (the step the reading is at).
        self.read: Callable[[object], None] = self._read_head

    def _read_head(self, chunk: object) -> None:
        """A read before the reply started: kept, to be read again if the body turns out to
        be a non-stream reply, until the reply starts or the head grew past what is kept
        (a read that starts within it is kept whole: its bytes are held anyway)."""
        data = chunk if chunk.__class__ is bytes else as_bytes(chunk)
        if self.decoder.started or self._kept > _HEAD_KEPT:
            self._head = []
            self._settle()
            self._read_on(data)
            return
        self._kept += len(data)
        self._head.append(data)
        try:
            self._read_on(data)
        except NonStreamBodyError as error:
            self._non_stream(error)

    def _non_stream(self, error: NonStreamBodyError) -> str:
        """The decoder told a non-stream body in the head: the rest is kept, then read as
        the reply it is (an error with events before it is no such body: raised)."""
        if error.events:
            raise error
        if self._kept > self._max_frame:  # (a read of the whole body, already too large)
            raise body_too_large(self._max_frame, self._head[0]) from None
        self._provider = error.provider
        self.read = self._read_rest
        return error.provider

    def _settle(self) -> None:
        """The reply started: from now on each read goes to the decoder a provider check
        wraps (its check of the first frames is over), and to the fold, where one is given."""
        reader = self._reader = self.decoder.settled()
        self._decode = reader.decode
        if self._fold is not None:
            reader.fold_into(self._fold)
        self.read = self._read_on

    def _read_on(self, chunk: object) -> None:
        """A read of the reply (a live stream's are a frame each: kept short)."""
        if chunk.__class__ is not bytes:
            chunk = as_bytes(chunk)
        if len(chunk) > _READ_LIMIT:
            self._slices(chunk)
            return
        try:
            events = self._decode(chunk)
        except PASS_THROUGH:
            raise
        except Exception as error:  # the boundary (see ``decoded()``)
            raise _unforeseen(self._reader, error, chunk) from error
        if events:
            self._emit(events)

    def _slices(self, chunk: bytes) -> None:
        """A whole body in one read, decoded as a connection's reads (settled once the reply
        started, as the next read would be: a fold then takes its strings directly)."""
        for start in range(0, len(chunk), _READ):
            events = decoded(self._reader, chunk[start : start + _READ])
            if events:
                self._emit(events)
            if self.read == self._read_head and self.decoder.started:
                self._head = []
                self._settle()

    def _read_rest(self, chunk: object) -> None:
        """A read of a non-stream body: kept until its end, or until it grows past
        ``max_frame`` (then refused, with what it holds let go)."""
        data = chunk if chunk.__class__ is bytes else as_bytes(chunk)
        self._kept += len(data)
        if self._kept > self._max_frame:
            head, self._head = self._head[0], []
            raise body_too_large(self._max_frame, head)
        self._head.append(data)

    def end(self) -> None:
        """EOF: what the decoder held (or the whole non-stream body, read as the reply)."""
        provider = self._provider
        if provider is None:
            try:
                events = flushed(self.decoder)
            except NonStreamBodyError as error:  # (told only at the end: a short body)
                if self.read != self._read_head:
                    raise
                provider = self._non_stream(error)
            else:
                self._emit(events)
                return
        whole = b"".join(self._head)
        self._head = []
        body, parsed = _restreamed(whole, provider)
        del whole
        reply = BodyDecoding(so_far(_bare(provider, len(body)), parsed, provider), self._emit,
                             self._fold)
        del parsed
        reply.read(body)
        reply.end()

    def failed(self, error: LlmRxError) -> None:
        """The reading ends with ``error``: the events decoded before it go out first."""
        self._emit(list(error.events))


def _bare(provider: str, size: int) -> Decoder:
    """The bare decoder of ``provider`` (no check of the head: the bytes are its stream, of
    ``size`` bytes, so none of its frames is longer)."""
    return DECODERS[provider_id(provider)](max(size, DEFAULT_MAX_FRAME))


def _restreamed(body: bytes, provider: str) -> tuple[bytes, dict[str, Any]]:
    """A whole non-stream body as its provider's stream, and the body parsed."""
    try:
        parsed = orjson.loads(body)
        if not isinstance(parsed, dict):
            raise TypeError("not a JSON object")
        return restream(parsed, provider), parsed
    except orjson.JSONDecodeError:
        raise IncompleteStreamError("the body ended inside its JSON", body[:200]) from None
    except Exception as failure:  # the boundary: a body of another shape
        raise shape_error(failure, body[:200]) from failure
