"""A capture cut into its frames, and put back together (for mutating and cutting tests)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from llm_rx.wire.eventstream import EventStreamDecoder, encode_message

from ..captures import Capture

# A frame: the event-stream headers (``None`` for a text format) and the frame's bytes.
Frame = tuple[Any, bytes]


def frames_of(capture: Capture) -> list[Frame]:
    """The capture cut into its frames (SSE events, lines, array elements, messages)."""
    data = capture.data
    if capture.provider == "bedrock-converse":
        return [(dict(m.headers), m.payload) for m in EventStreamDecoder().decode(data)]
    if capture.provider == "ollama":
        return [(None, line) for line in data.splitlines(keepends=True)]
    if data.lstrip()[:1] == b"[":  # a JSON array: cut after each element's closing "}"
        return [(None, piece) for piece in re.split(rb"(?<=\n\})", data) if piece]
    return [(None, piece) for piece in re.split(rb"(?<=\n\n)|(?<=\r\n\r\n)", data) if piece]


def body_of(frames: list[Frame]) -> bytes:
    return b"".join(
        data if headers is None else encode_message(headers, data) for headers, data in frames
    )


def kind_of(frame: Frame) -> Any:
    """The ``type`` of an SSE frame's JSON payload (the ``:event-type`` of a message)."""
    headers, data = frame
    if headers is not None:
        return headers.get(":event-type")
    lines = [line[5:].strip() for line in data.splitlines() if line.startswith(b"data:")]
    try:
        payload = orjson.loads(b"\n".join(lines))
    except orjson.JSONDecodeError:
        return None
    return payload.get("type") if isinstance(payload, dict) else None
