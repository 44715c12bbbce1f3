"""``from_native(body, provider)``: a provider's non-stream JSON body as a ``Response``.

The body is re-framed as the provider's own stream (`restream`) and decoded by the same
engine as a stream, so ``from_native(to_native(r, p), p) == r`` for a reply that finished,
up to what a non-stream body cannot carry:

- that a reply failed or was cut: a body is a finished reply (``complete: true``), so a
  stream's ``error``, ``interrupted`` and the in-band error frame do not come back;
- where a field stood on the wire when the stream gave it twice: Anthropic's ``stop_details``
  placeholder (``null`` in ``message_start``) is not told from the final one, which wins;
- what ``to_native`` leaves out for the target's shape (see [`to_native()`][llm_rx.to_native]).
"""

from __future__ import annotations

from typing import Any

import orjson

from .._reassemble import reassemble_with
from ..errors import WireFormatError
from ..response import Response
from ..wire.base import shape_error
from ..wire.http import body_error
from ..wire.nonstream import error_body
from ..wire.providers import ProviderId, provider_id
from ..wire.registry import DECODERS
from ..wire.restream import RESTREAMERS, nonstream_provider, restream
from ..wire.sse import DEFAULT_MAX_FRAME

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
    if isinstance(body, (bytes, bytearray, memoryview)):
        raw = bytes(body)
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise WireFormatError("a non-stream body is not valid JSON", raw[:200]) from None
    elif isinstance(body, dict):
        parsed, raw = body, None
    else:
        raise TypeError(
            f"from_native() takes the body as bytes or a parsed dict, not {type(body).__name__}"
        )
    if not isinstance(parsed, dict):
        raise WireFormatError("a non-stream body is not a JSON object", raw)
    if error_body(parsed):
        raise body_error(parsed, raw)
    name = provider if provider is not None else nonstream_provider(parsed)
    if name is None:
        raise WireFormatError(
            "could not tell which provider's non-stream body this is",
            raw if raw is not None else orjson.dumps(parsed)[:200],
        )
    if name not in RESTREAMERS:
        raise ValueError(
            f"no non-stream reader for {name!r}; available: {', '.join(sorted(RESTREAMERS))}"
        )
    try:
        stream = restream(parsed, name)
    except Exception as error:
        raise shape_error(error, raw if raw is not None else orjson.dumps(parsed)) from error
    return reassemble_with(DECODERS[provider_id(name)](DEFAULT_MAX_FRAME), (stream,))
