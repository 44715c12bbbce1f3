"""``from_native(body, provider)``: a provider's non-stream JSON body as a ``Response``.

The body is re-framed as the provider's own stream (`restream`) and decoded by the same
engine as a stream, so ``from_native(to_native(r, p), p) == r`` for a reply that finished,
up to what a non-stream body cannot carry:

- that a reply was cut: a body is a reply as far as it went, so a stream's ``interrupted`` and
  its in-band error frame do not come back. A body that says it is not finished (a Responses
  ``status`` of ``queued``, ``in_progress`` or ``cancelled``, or no status it knows; a stop
  field missing where a finished body always has one) is read as the reply so far,
  ``complete: false``, with the error that says so; a ``failed`` Responses body is the
  provider's error, as its stream's ``response.failed`` is;
- where a field stood on the wire when the stream gave it twice: Anthropic's ``stop_details``
  placeholder (``null`` in ``message_start``) is not told from the final one, which wins;
- what ``to_native`` leaves out for the target's shape (see [`to_native()`][llm_rx.to_native]).
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import LlmRxError
from ..events import ChoiceEnd, Event, MessageStop
from ..fold.builder import ResponseBuilder
from ..native._finished import unfinished
from ..response import Response
from ..sources._engine import decode_all
from ..sources._nonstream import restreamed
from ..wire.base import Decoder
from ..wire.providers import ProviderId
from ..wire.registry import DECODERS
from ..wire.sse import DEFAULT_MAX_FRAME
from .reassemble import reassemble_with

__all__ = ["from_native"]


def from_native(
    body: bytes | bytearray | dict[str, Any], provider: ProviderId | None = None
) -> Response:
    """The ``Response`` of a non-stream body: the JSON (``bytes`` or a parsed ``dict``)
    that ``provider``'s non-streamed call returned, told from its fields when not given.

    An error body (``{"error": ...}``) raises [`ProviderError`][llm_rx.ProviderError] with the
    provider's words; a body that is no provider's reply raises
    [`WireFormatError`][llm_rx.WireFormatError].

    Args:
        body: The body: its bytes, or the parsed object.
        provider: Whose body it is; told from its shape when ``None``.

    Returns:
        The `Response` the reply's stream reassembles to.
    """
    stream, name = restreamed(body, provider)
    decoder = DECODERS[name](DEFAULT_MAX_FRAME)
    parsed = body if isinstance(body, dict) else orjson.loads(body)  # (parsed once already)
    reason = unfinished(parsed, name)
    if reason is None:
        return reassemble_with(decoder, (stream,))
    return _so_far(decoder, stream, reason)


def _so_far(decoder: Decoder, stream: bytes, reason: LlmRxError) -> Response:
    """The reply a body that is not finished holds so far: its stream's events without the
    end its re-framing gives it, ended by ``reason``."""
    events: list[Event] = []
    try:
        decode_all(decoder, (stream,), events.extend)
    except LlmRxError as error:  # (a body whose own fields say it failed: that error wins)
        reason = error
    builder = ResponseBuilder(history=False)
    builder.feed_all([e for e in events if not isinstance(e, (MessageStop, ChoiceEnd))])
    return builder.build(reason)
