"""A frame of a provider's stream whose JSON does not parse, framed as the stream's form is.

The emulator's ``malformed`` fault puts one in the place of a real frame: the framing stays
whole (an SSE event keeps its ``event:`` name and blank line, an NDJSON line its newline, a
JSON array element its separators, an AWS event-stream message valid headers and CRCs), so a
client's framing reads on and its JSON parsing is what meets the damage.
"""

from __future__ import annotations

import re

from ..wire.eventstream import encode_message, parse_headers

__all__ = ["BROKEN_JSON", "malformed_frame"]

#: invalid JSON with balanced braces (a framing that counts them still finds the end)
BROKEN_JSON = b'{"llm_rx_malformed": tru}'

_ELEMENT = re.compile(rb"\{.*\}", re.DOTALL)
_PRELUDE = 12  # total length, headers length, prelude CRC


def malformed_frame(form: str, piece: bytes) -> bytes:
    """``piece`` (one whole frame of a stream of ``form``) with its JSON broken."""
    if form in ("chat", "generate"):  # NDJSON
        return BROKEN_JSON + b"\n"
    if form == "json-array":
        return _ELEMENT.sub(lambda _: BROKEN_JSON, piece, count=1)
    if form == "eventstream":
        headers_length = int.from_bytes(piece[4:8], "big")
        headers = parse_headers(piece[_PRELUDE : _PRELUDE + headers_length])
        strings = {name: value for name, value in headers.items() if isinstance(value, str)}
        return encode_message(strings, BROKEN_JSON)
    ending = next((end for end in (b"\r\n\r\n", b"\n\n", b"\r\r") if piece.endswith(end)),
                  b"\n\n")
    newline = ending[: len(ending) // 2]
    kept = [line for line in piece.splitlines()  # (the event's name and id, not its data)
            if line and not line.startswith((b"data:", b":"))]
    return b"".join(line + newline for line in kept) + b"data: " + BROKEN_JSON + ending
