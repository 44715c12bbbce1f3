"""The per-payload seam: an event framed elsewhere (a WebSocket message, an SDK's parsed
event) decodes as the same frame in a body does."""

from __future__ import annotations

from typing import Any

import pytest

from llm_rx.errors import LlmRxError, WireFormatError
from llm_rx.speed import fast_paths
from llm_rx.wire.base import SSEPayloadDecoder
from llm_rx.wire.ndjson import NDJSONDecoder, NDJSONPayloadDecoder
from llm_rx.wire.registry import DECODERS
from llm_rx.wire.sse import SSEDecoder

from ..captures import CAPTURES, Capture
from ..helpers import kinds

_FRAMED = [c for c in CAPTURES if c.provider in DECODERS and c.provider not in
           ("bedrock-converse",) and not c.name.endswith(".json")]


def _outcome(decoder: Any, feed: Any) -> tuple[list[Any], str | None]:
    events: list[Any] = []
    try:
        feed(decoder, events)
        events += decoder.flush()
    except LlmRxError as error:
        return kinds([*events, *error.events]), type(error).__name__
    return kinds(events), None


@pytest.mark.parametrize("capture", _FRAMED, ids=lambda c: c.name)
def test_payloads_decode_as_the_body_does(capture: Capture) -> None:
    with fast_paths(False):
        plain = DECODERS[capture.provider](16 * 1024 * 1024)
    if not isinstance(plain, (SSEPayloadDecoder, NDJSONPayloadDecoder)):
        pytest.skip("not a payload decoder")

    def whole(decoder: Any, events: list[Any]) -> None:
        events += decoder.decode(capture.data)

    def payloads(decoder: Any, events: list[Any]) -> None:
        if isinstance(decoder, SSEPayloadDecoder):
            framer = SSEDecoder()
            frames = [*framer.decode(capture.data), *framer.flush()]
            for frame in frames:
                events += decoder.decode_payload(frame.data, frame.event)
        else:
            lines = NDJSONDecoder()
            for line in [*lines.decode(capture.data), *lines.flush()]:
                events += decoder.decode_payload(line)

    expected = _outcome(DECODERS[capture.provider](16 * 1024 * 1024), whole)
    if capture.data.startswith(b"[") or b"\nid:" in capture.data or capture.data.startswith(b"id:"):
        pytest.skip("a JSON array body, or events with ids: framed by more than their data")
    assert _outcome(plain, payloads) == expected


def test_a_bad_payload_is_a_typed_error_carrying_it() -> None:
    decoder = DECODERS["openai-chat"](1024)
    assert isinstance(decoder, SSEPayloadDecoder)
    with pytest.raises(WireFormatError) as caught:
        decoder.decode_payload(b"{not json")
    assert caught.value.raw == "{not json"
    assert decoder.decode_payload(b'{"choices": []}') == []  # (finished: nothing more)
