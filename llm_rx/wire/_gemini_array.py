"""Gemini's other form of ``streamGenerateContent``: one JSON array of chunks (no ``alt=sse``),
its elements read as the SSE form's frames are."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import LlmRxError, WireFormatError
from ..events import Event
from ._checks import check_depth
from .json_array import JSONArrayDecoder

__all__ = ["ArrayForm"]


class ArrayForm:
    """The array form of :class:`~llm_rx.wire.gemini.GeminiDecoder` (which gives ``_chunk``,
    ``_end`` and the decoder's state)."""

    if TYPE_CHECKING:  # (the decoder's)
        _array: JSONArrayDecoder | None
        finished: bool
        started: bool

        def _chunk(self, chunk: dict[str, Any], raw: bytes, out: list[Event]) -> None: ...
        def _end(self, out: list[Event], how: str) -> None: ...
        def _fail(self, error: LlmRxError, out: list[Event], *, start: bool) -> LlmRxError: ...
        def _each(
            self,
            frames: list[Any],
            out: list[Event],
            one: Callable[[Any, list[Event]], None],
            other: Callable[[Any, list[Event]], None] | None = None,
        ) -> None: ...

    def _decode_array(self, chunk: bytes) -> list[Event]:
        out: list[Event] = []
        if self.finished:
            return out
        assert self._array is not None
        try:
            failure: LlmRxError | None = None
            try:
                elements = self._array.decode(chunk)
            except LlmRxError as error:
                elements = error.frames if isinstance(error, WireFormatError) else []
                failure = error
            # (as the SSE form's frames: a chunk of an unexpected shape is a wire-format
            # error carrying the element, and elements after the end are counted, unread)
            self._each(elements, out, self._array_element)
            if failure is not None and not self.finished:
                raise failure
            if self._array.closed and not self.finished:
                self._end(out, "the array closed")
        except LlmRxError as error:
            raise self._fail(error, out, start=self.started) from None
        return out

    def _flush_array(self) -> list[Event]:
        out: list[Event] = []
        if self.finished:
            return out
        assert self._array is not None
        try:
            self._array.flush()
        except LlmRxError as error:  # (a cut array opens the message; bytes that are no
            # array at all, refused at EOF, do not)
            start = not isinstance(error, WireFormatError)
            raise self._fail(error, out, start=start) from None
        return out  # (closed and not finished cannot be: the "]" ends the reply)

    def _array_element(self, element: bytes, out: list[Event]) -> None:
        self._chunk(self._element(element), element, out)

    def _element(self, element: bytes) -> dict[str, Any]:
        try:
            payload = orjson.loads(element)
        except orjson.JSONDecodeError:
            raise WireFormatError("an array element is not valid JSON", element) from None
        if not isinstance(payload, dict):
            raise WireFormatError("an array element is not a JSON object", element)
        check_depth(payload, element)
        return payload
