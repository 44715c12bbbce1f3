"""What the UI targets write for an application's event (`Custom`), judged by the real
clients: the AI SDK's ``readUIMessageStream`` keeps it as a data part; AG-UI's models and
``ag-ui-validate`` accept the ``CUSTOM`` event."""

from __future__ import annotations

import pytest

from llm_rx.encoders import make_encoder
from tests.test_custom_events import CUSTOMS, EVENTS
from tests.ui_judges import ag_ui_events, ag_ui_report, read_ui_streams


def _body(to: str) -> bytes:
    encoder = make_encoder(to)
    return encoder.encode(EVENTS) + encoder.finish(None)


@pytest.mark.slow  # (runs Node)
def test_vercel_ui_data_parts_are_kept_by_the_ai_sdk() -> None:
    read = read_ui_streams([_body("vercel-ui")])[0]
    assert read["errors"] == []
    parts = read["message"]["parts"]
    data = [part for part in parts if part["type"].startswith("data-")]
    assert data == [{"type": f"data-{c.name}", "data": c.data} for c in CUSTOMS]
    assert [part["text"] for part in parts if part["type"] == "text"] == ["Hello there."]


def test_ag_ui_custom_events_validate() -> None:
    body = _body("ag-ui")
    events = ag_ui_events(body)
    assert [(e["name"], e["value"]) for e in events if e["type"] == "CUSTOM"] == [
        (c.name, c.data) for c in CUSTOMS]
    report = ag_ui_report(body)
    assert (report.summary.errors, report.summary.warnings) == (0, 0), report.diagnostics
