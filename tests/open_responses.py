"""The Open Responses specification as the tests check it: every event and ``response``
object is validated twice, by the specification's own models (``openresponses-types``) and by
the JSON Schema of those models (``jsonschema``, which, unlike pydantic's lax mode, coerces
nothing: a ``"1"`` is no integer). What this checks is what the specification's compliance
suite checks of a server (``ResponseResource`` for a body and for the stream's final response,
every streamed event against its schema), plus the event order the specification gives.

OpenAI names the raw reasoning text's events ``response.reasoning_text.delta`` / ``.done``;
the specification calls them ``response.reasoning.delta`` / ``.done`` with the same fields.
llm-rx writes OpenAI's names (the mapping table says so); they are checked against the
specification's models of the same events.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema
import openresponses_types as spec
import orjson
from pydantic import BaseModel, ValidationError

from llm_rx.encoders._tables import SPEC

__all__ = [
    "OPENAI_NAMES",
    "body_errors",
    "event_errors",
    "events_of",
    "sequence_errors",
]

#: OpenAI's event name -> the specification's name of the same event (the encoders' table)
OPENAI_NAMES = SPEC["openai-responses"]


def _event_models() -> dict[str, type[BaseModel]]:
    models: dict[str, type[BaseModel]] = {}
    for name in dir(spec):
        model = getattr(spec, name)
        if (isinstance(model, type) and issubclass(model, BaseModel)
                and name.endswith("StreamingEvent")):
            for member in model.model_fields["type"].annotation:  # type: ignore[union-attr]
                models[member.value] = model
    return models


EVENT_MODELS = _event_models()


@cache
def _validator(model: type[BaseModel]) -> jsonschema.protocols.Validator:
    schema = model.model_json_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)  # type: ignore[no-any-return]


def _errors(model: type[BaseModel], value: Any) -> list[str]:
    found: list[str] = []
    try:
        model.model_validate(value)
    except ValidationError as error:
        found += [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:5]]
    found += [f"schema {'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
              for e in list(_validator(model).iter_errors(value))[:5]]
    return found


def body_errors(body: Any) -> list[str]:
    """What in a ``response`` object departs from the specification's ``ResponseResource``."""
    return _errors(spec.ResponseResource, body)


def event_errors(event: dict[str, Any]) -> list[str]:
    """What in one streamed event departs from the specification (an event of a type the
    specification has not is one departure)."""
    kind = event.get("type")
    if kind in OPENAI_NAMES:
        event = {**event, "type": OPENAI_NAMES[kind]}
    model = EVENT_MODELS.get(str(event.get("type")))
    if model is None:
        return [f"{kind}: no such event in the specification"]
    return [f"{kind}: {error}" for error in _errors(model, event)]


def events_of(body: bytes) -> Iterator[dict[str, Any]]:
    """The JSON events of a Responses SSE body (``[DONE]`` and comments left out)."""
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
        if data and data != [b"[DONE]"]:
            yield orjson.loads(b"\n".join(data))


_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def sequence_errors(events: list[dict[str, Any]]) -> list[str]:
    """What departs from the specification's order: ``response.created`` then
    ``response.in_progress`` first; sequence numbers 0, 1, 2...; each item between its
    ``output_item.added`` and ``.done`` at its ``output_index``; each part's deltas between
    its ``.added`` and ``.done`` events; one terminal event, last."""
    found: list[str] = []
    kinds = [event["type"] for event in events]
    if kinds[:2] != ["response.created", "response.in_progress"]:
        found.append(f"starts {kinds[:2]}")
    if [event.get("sequence_number") for event in events] != list(range(len(events))):
        found.append("sequence numbers are not 0, 1, 2...")
    terminal = [n for n, kind in enumerate(kinds) if kind in _TERMINAL]
    if terminal and terminal != [len(kinds) - 1]:
        found.append(f"terminal events at {terminal} of {len(kinds)}")
    open_items: set[int] = set()
    done_items: set[int] = set()
    parts: dict[tuple[int, str, int], str] = {}  # (item, channel, index) -> state
    for event in events:
        kind = event["type"]
        at = event.get("output_index")
        if kind == "response.output_item.added":
            if at in open_items or at in done_items or at != len(open_items | done_items):
                found.append(f"item {at} added out of order")
            open_items.add(at)
        elif kind == "response.output_item.done":
            if at not in open_items:
                found.append(f"item {at} done before it was added")
            open_items.discard(at)
            done_items.add(at)
            if any(key[0] == at and state == "open" for key, state in parts.items()):
                found.append(f"item {at} done with a part open")
        elif at is not None and kind not in _TERMINAL:
            if at not in open_items:
                found.append(f"{kind} for item {at}, which is not open")
            channel = "summary" if "summary_index" in event else "content"
            index = event.get("summary_index", event.get("content_index"))
            key = (at, channel, index)
            if kind.endswith("_part.added"):
                parts[key] = "open"
            elif kind.endswith("_part.done"):
                if parts.get(key) != "open":
                    found.append(f"{kind} for a part not added")
                parts[key] = "done"
            elif index is not None and parts.get(key) != "open":
                found.append(f"{kind} outside its part ({key})")
    if open_items:
        found.append(f"items {sorted(open_items)} never done")
    return found
