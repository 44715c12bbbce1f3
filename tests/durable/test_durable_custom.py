"""An application's event (`Custom`) survives a Durable Streams round trip: as llm-rx events,
and in the browser protocols' own bytes, read back by their readers."""

from __future__ import annotations

import pytest
import reactivex as rx
from reactivex import operators as ops

import llm_rx
from llm_rx import sinks as lxs
from llm_rx.events import Custom, Event
from tests.durable.conftest import DurableServer
from tests.test_custom_events import CUSTOMS, EVENTS

pytestmark = pytest.mark.slow


def test_durable_custom_events_round_trip(durable_server: DurableServer) -> None:
    url = durable_server.stream()
    lxs.to_durable_stream(rx.from_iterable(EVENTS), url, heartbeat=None).run()
    read: list[Event] = llm_rx.from_durable_stream(url).pipe(ops.to_list()).run()
    assert read == EVENTS


@pytest.mark.parametrize("to", ["vercel-ui", "ag-ui"])
def test_durable_custom_events_in_a_ui_wire(durable_server: DurableServer, to: str) -> None:
    url = durable_server.stream()
    lxs.to_durable_stream(rx.from_iterable(EVENTS), url, to=to, heartbeat=None).run()
    read: list[Event] = llm_rx.from_durable_stream(
        url, provider=to).pipe(ops.to_list()).run()  # type: ignore[arg-type]
    assert [event for event in read if isinstance(event, Custom)] == CUSTOMS
