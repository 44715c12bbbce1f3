"""``Custom(name, data)``: an application's event beside the model's. It passes every
operator untouched, is written by the UI targets in their own form, dropped with a
``Dropped`` by every provider wire, and survives JSON and Redis."""

from __future__ import annotations

from typing import Any

import pytest
import reactivex as rx
from reactivex.testing import TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.encoders import ENCODERS, UI_TARGETS, make_encoder
from llm_rx.events import (
    BlockStart,
    BlockStop,
    Custom,
    Dropped,
    Event,
    MessageStart,
    MessageStop,
    Opaque,
    TextDelta,
    UsageUpdate,
    event_from_dict,
    event_to_dict,
)
from llm_rx.response import Usage

NOTE = Custom("retrieved", {"doc": "a.pdf", "score": 0.5, "tags": ["x"]})
EVENTS: list[Event] = [
    MessageStart("anthropic", "claude", "msg_1"),
    NOTE,
    BlockStart(0, "text"),
    TextDelta(0, "Hello there."),
    Custom("progress", 0.5),
    BlockStop(0),
    UsageUpdate(Usage(input_tokens=3, output_tokens=2)),
    Custom("state", None),
    MessageStop("end_turn"),
]
PLAIN = [e for e in EVENTS if not isinstance(e, Custom)]
CUSTOMS = [e for e in EVENTS if isinstance(e, Custom)]


def _run(events: list[Event], op: Any) -> list[Any]:
    out: list[Any] = []
    errors: list[BaseException] = []
    rx.from_iterable(events).pipe(op).subscribe(out.append, errors.append)
    assert errors == []
    return out


def test_custom_is_its_own_kind() -> None:
    assert Custom("a", 1) != Opaque("a", 1)
    assert hash(Custom("a", 1)) != hash(Opaque("a", 1))
    assert len({Custom("a", 1), Opaque("a", 1)}) == 2
    assert Custom("a", 1) == Custom("a", 1)


def test_custom_round_trips_through_json() -> None:
    data = event_to_dict(NOTE)
    assert data == {"type": "custom", "name": "retrieved", "data": NOTE.data}
    assert event_from_dict(data) == NOTE


@pytest.mark.parametrize("op", [lxo.share(), lxo.think_tags(), lxo.trace(),
                                lxo.stop_on(rx.never())],
                         ids=["share", "think_tags", "trace", "stop_on"])
def test_custom_passes_event_operators_untouched(op: Any) -> None:
    assert _run(EVENTS, op) == EVENTS


def test_custom_passes_smooth_in_its_place() -> None:
    scheduler = TestScheduler()
    out: list[Event] = []
    rx.from_iterable(EVENTS).pipe(lxo.smooth(delay=0.01, scheduler=scheduler)).subscribe(
        out.append, scheduler=scheduler)
    scheduler.start()
    assert [e for e in out if isinstance(e, Custom)] == CUSTOMS
    assert out.index(NOTE) < out.index(next(e for e in out if isinstance(e, TextDelta)))
    assert "".join(e.text for e in out if isinstance(e, TextDelta)) == "Hello there."


@pytest.mark.parametrize("op", [lxo.to_response(), lxo.text_only(), lxo.tool_calls(),
                                lxo.merge_usage(), lxo.partial_json()],
                         ids=["to_response", "text_only", "tool_calls", "merge_usage",
                              "partial_json"])
def test_custom_is_no_part_of_what_a_fold_gives(op: Any) -> None:
    assert _run(EVENTS, op) == _run(PLAIN, op)


def test_custom_accumulate_gives_the_same_snapshots() -> None:
    # (one snapshot per event: a Custom's is the one before it, unchanged)
    def distinct(snapshots: list[Any]) -> list[Any]:
        replies = [snapshot.response for snapshot in snapshots]
        return [r for n, r in enumerate(replies) if n == 0 or r != replies[n - 1]]

    assert distinct(_run(EVENTS, lxo.accumulate())) == distinct(_run(PLAIN, lxo.accumulate()))


@pytest.mark.parametrize("to", sorted(set(ENCODERS) - UI_TARGETS))
def test_custom_provider_wires_drop_it_and_say_so(to: str) -> None:
    dropped: list[Dropped] = []
    encoder = make_encoder(to, dropped)
    body = encoder.encode(EVENTS) + encoder.finish(None)
    plain = make_encoder(to)
    assert body == plain.encode(PLAIN) + plain.finish(None)  # (nothing of it written)
    assert [d for d in dropped if d.what.startswith("custom:")] == [
        Dropped(f"custom:{c.name}", None,
                f"{encoder.provider} has no place for an application's events", c.data)
        for c in CUSTOMS]


def test_custom_ui_targets_write_their_own_form() -> None:
    vercel = make_encoder("vercel-ui")
    body = vercel.encode(EVENTS)
    assert b'data: {"type":"data-retrieved","data":{"doc":"a.pdf","score":0.5,"tags":["x"]}}' \
        in body
    ag = make_encoder("ag-ui")
    body = ag.encode(EVENTS)
    assert b'{"type":"CUSTOM","name":"progress","value":0.5}' in body


@pytest.mark.parametrize("to", sorted(UI_TARGETS))
def test_custom_translate_and_read_back_keeps_it_in_place(to: str) -> None:
    encoder = make_encoder(to)
    body = encoder.encode(EVENTS) + encoder.finish(None)
    back: list[Event] = []
    llm_rx.from_bytes(body, provider=to).subscribe(back.append)  # type: ignore[arg-type]
    assert [e for e in back if isinstance(e, Custom)] == CUSTOMS
    # (in its place: after the text block opened before it, before the end)
    kinds = [type(e).__name__ for e in back]
    assert kinds.index("Custom") < kinds.index("BlockStart")
    assert kinds[-1] == "MessageStop"
