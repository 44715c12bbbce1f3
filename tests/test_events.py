"""The event algebra: immutable, and its JSON form round-trips through pydantic."""

from __future__ import annotations

import dataclasses

import orjson
import pytest

import llm_rx
from llm_rx.events import EVENT_TYPES, TextDelta, event_from_dict, event_to_dict

from .captures import CAPTURES, Capture
from .helpers import decode_events


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_events_json_round_trip_every_capture(capture: Capture) -> None:
    events, _ = decode_events([capture.data], capture.provider)
    for event in events:
        wire = orjson.loads(orjson.dumps(event_to_dict(event)))
        assert event_from_dict(wire) == event


def test_events_are_immutable() -> None:
    event = TextDelta(0, "hi")
    with pytest.raises(AttributeError):
        event.text = "changed"  # type: ignore[misc]
    assert not dataclasses.is_dataclass(event)


def test_event_from_dict_validates_fields() -> None:
    with pytest.raises(ValueError, match="unknown event type"):
        event_from_dict({"type": "nope"})
    with pytest.raises(ValueError):
        event_from_dict({"type": "text_delta", "index": "not a number", "text": "x"})


def test_every_event_type_is_exported() -> None:
    for name, cls in EVENT_TYPES.items():
        assert getattr(llm_rx.events, cls.__name__) is cls, name


@pytest.mark.parametrize("capture", CAPTURES[:12], ids=lambda c: c.name)
def test_response_json_round_trip(capture: Capture) -> None:
    response = llm_rx.reassemble(capture.data, capture.provider)
    dumped = response.model_dump(mode="json")
    again = llm_rx.Response.model_validate_json(response.model_dump_json())
    assert again.model_dump(mode="json") == dumped


def test_dropped_json_round_trips_and_folds_to_nothing() -> None:
    dropped = llm_rx.Dropped("signature", 0, "the target has no place for it", "c2ln")
    wire = orjson.loads(orjson.dumps(event_to_dict(dropped)))
    assert wire == {"type": "dropped", "what": "signature", "index": 0,
                    "reason": "the target has no place for it", "raw": "c2ln"}
    assert event_from_dict(wire) == dropped
    builder = llm_rx.ResponseBuilder()
    builder.feed(llm_rx.MessageStart("anthropic"))
    builder.feed(dropped)  # (what a translation left out is not part of the reply)
    assert builder.build().content == []
