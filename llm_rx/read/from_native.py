"""``from_native(body, provider)``: a provider's non-stream JSON body as a ``Response``.

The body is re-framed as the provider's own stream (`restream`) and decoded by the same
engine as a stream, so ``from_native(to_native(r, p), p) == r`` for a reply that finished,
up to what a non-stream body cannot carry:

- that a reply was cut: a body is a reply as far as it went, so a stream's ``interrupted`` and
  its in-band error frame do not come back. A body that says it is not finished (a Responses
  ``status`` of ``queued``, ``in_progress`` or ``cancelled``, or no status it knows; a stop
  field missing where a finished body always has one) is read as the reply so far,
  ``complete: false``, with the error that says so (the rule the streaming sources read
  such a body with too: `llm_rx.wire.finished`); a ``failed`` Responses body is the
  provider's error, as its stream's ``response.failed`` is;
- where a field stood on the wire when the stream gave it twice: Anthropic's ``stop_details``
  placeholder (``null`` in ``message_start``) is not told from the final one, which wins;
- what ``to_native`` leaves out for the target's shape (see [`to_native()`][llm_rx.to_native]).
"""

from __future__ import annotations

from typing import Any

import orjson

from ..response import Response
from ..sources._nonstream import restreamed
from ..wire.finished import so_far
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
    parsed = body if isinstance(body, dict) else orjson.loads(body)  # (parsed once already)
    decoder = so_far(DECODERS[name](DEFAULT_MAX_FRAME), parsed, name)
    return reassemble_with(decoder, (stream,))
