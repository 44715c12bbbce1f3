"""A capture's body as frames the mutators can work on, per wire format.

Each format cuts its body into frames that join back to the same bytes (SSE events with
their blank line, NDJSON lines, AWS event-stream messages) or, for the Gemini JSON-array
form, into the array's elements (joined back compactly: the bytes differ, the stream is the
same). A frame's JSON payload can be read and written back, so a value inside it can be
replaced while the frame stays a frame of its format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from llm_rx.wire.eventstream import encode_message, parse_headers

__all__ = ["Body", "body_of"]

_BLANK_LINE = re.compile(rb"\r?\n\r?\n")
_DATA_LINE = re.compile(rb"^data: ?(.*?)\r?$", re.M)


@dataclass
class Body:
    """A body cut into frames; ``join()`` gives the bytes back."""

    kind: str  # "sse", "ndjson", "json-array", "eventstream"
    frames: list[bytes]

    def join(self) -> bytes:
        if self.kind == "json-array":
            return b"[" + b",\r\n".join(self.frames) + b"]"
        return b"".join(self.frames)

    def payload(self, frame: bytes) -> Any:
        """The frame's JSON value, or ``None`` if it carries none that parses."""
        text = self._payload_bytes(frame)
        if text is None:
            return None
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return None

    def with_payload(self, frame: bytes, json_text: bytes) -> bytes:
        """The frame with its JSON payload replaced by ``json_text`` (one line)."""
        if self.kind == "sse":
            match = _DATA_LINE.search(frame)
            assert match is not None
            return frame[: match.start(1)] + json_text + frame[match.end(1) :]
        if self.kind == "ndjson":
            return json_text + b"\n"
        if self.kind == "json-array":
            return json_text
        headers = _headers(frame)
        return encode_message(headers, json_text)

    def _payload_bytes(self, frame: bytes) -> bytes | None:
        if self.kind == "sse":
            lines = _DATA_LINE.findall(frame)
            return lines[0] if len(lines) == 1 else None
        if self.kind == "eventstream":
            if len(frame) < 16:
                return None
            headers_size = int.from_bytes(frame[4:8], "big")
            try:  # (headers an earlier mutation broke: no frame to rewrite)
                parse_headers(frame[12 : 12 + headers_size])
            except (ValueError, IndexError):
                return None
            return frame[12 + headers_size : -4]
        return frame.strip()


def _headers(frame: bytes) -> dict[str, str]:
    headers_size = int.from_bytes(frame[4:8], "big")
    parsed = parse_headers(frame[12 : 12 + headers_size])
    return {name: str(value) for name, value in parsed.items()}


def _sse_frames(data: bytes) -> list[bytes]:
    frames: list[bytes] = []
    start = 0
    for match in _BLANK_LINE.finditer(data):
        frames.append(data[start : match.end()])
        start = match.end()
    if start < len(data):
        frames.append(data[start:])
    return frames


def _eventstream_frames(data: bytes) -> list[bytes]:
    frames: list[bytes] = []
    pos = 0
    while pos + 16 <= len(data):
        total = int.from_bytes(data[pos : pos + 4], "big")
        if total < 16:
            break
        frames.append(data[pos : pos + total])
        pos += total
    if pos < len(data):
        frames.append(data[pos:])
    return frames


def body_of(data: bytes, provider: str) -> Body:
    """``data`` cut into the frames of its format (told from the provider and the bytes)."""
    if provider == "bedrock-converse":
        return Body("eventstream", _eventstream_frames(data))
    if provider == "ollama":
        return Body("ndjson", data.splitlines(keepends=True))
    if data.lstrip()[:1] == b"[":
        try:
            elements = orjson.loads(data)
        except orjson.JSONDecodeError:
            elements = None
        if isinstance(elements, list):
            try:
                return Body("json-array", [orjson.dumps(element) for element in elements])
            except TypeError:  # (nested deeper than orjson writes: cut as bytes instead)
                pass
    return Body("sse", _sse_frames(data))
