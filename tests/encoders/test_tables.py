"""The mapping tables are the documented ones: the translation guide
(docs/how-to/translation.md) reproduces them, and everything an encoder leaves out is a kind
its target's table lists."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import llm_rx
from llm_rx import Dropped
from llm_rx.encoders import ENCODERS, make_encoder
from llm_rx.encoders._tables import DROPPED, SPEC, STOP, WAITS
from llm_rx.errors import (
    CancelledStreamError,
    IncompleteStreamError,
    LlmRxError,
    ProviderError,
)
from llm_rx.events import (
    BlockStart,
    BlockStop,
    CitationDelta,
    Event,
    MessageStart,
    MessageStop,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from llm_rx.native._tables import BODY_STOP
from tests.captures import CAPTURES

GUIDE = (Path(__file__).parents[2] / "docs" / "how-to" / "translation.md").read_text()


@pytest.mark.parametrize("reason", ["end_turn", "max_tokens", "tool_use", "stop_sequence",
                                    "refusal", "content_filter", "pause_turn"])
def test_guide_stop_table_is_the_encoders(reason: str) -> None:
    row = next(line for line in GUIDE.splitlines() if line.startswith(f"| `{reason}` | `"))
    cells = [cell.strip() for cell in row.strip("|").split("|")][1:]
    order = ["openai-chat", "openai-responses", "anthropic", "gemini", "gemini-interactions",
             "ollama", "bedrock-converse", "cohere"]
    for target, cell in zip(order, cells, strict=True):
        native = STOP[target].get(reason)  # type: ignore[call-overload]
        if target == "openai-responses":
            assert cell == (f"`incomplete` (`{native}`)" if native else "`completed`")
        else:
            assert cell == f"`{native}`"


def test_guide_body_stop_table_is_the_native_bodies() -> None:
    """What a non-stream body writes beyond its stream's stop table (or, for the legacy
    completions, the ``openai-chat`` column): each value in the guide's row, nothing else."""
    lines = GUIDE.splitlines()
    at = lines.index("| body | stop values beyond the table above |")
    rows: dict[str, str] = {}  # body -> its cell
    for line in lines[at + 2:]:
        if not line.startswith("|"):
            break
        rows[line.split("|")[1].strip(" `")] = line.split("|")[2]
    assert set(rows) == set(BODY_STOP)
    for provider, table in BODY_STOP.items():
        stream = STOP.get(provider, STOP["openai-chat"])
        own = [f"`{reason}`: `{value}`" for reason, value in table.items()
               if stream.get(reason) != value]
        assert own
        assert rows[provider].count("`: `") == len(own), provider
        for cell in own:
            assert cell in rows[provider], provider


def test_guide_lists_every_drop_and_wait() -> None:
    for items in DROPPED.values():
        for what, when in items.items():
            assert f"`{what}`: {when}" in GUIDE
    for wait in WAITS.values():
        assert wait in GUIDE
    for target, names in SPEC.items():
        for own, specified in names.items():
            assert f"| `{target}` | `{own}` | `{specified}` |" in GUIDE


def _whats() -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {target: set() for target in ENCODERS}
    for capture in CAPTURES:
        for target in ENCODERS:
            lost: list[Dropped] = []
            try:
                llm_rx.translate(capture.data, target, capture.provider,  # type: ignore[arg-type]
                                 on_dropped=lost.append)
            except llm_rx.LlmRxError:
                continue  # (a body that is no reply)
            seen[target] |= {
                "opaque:*" if item.what.startswith("opaque:") else item.what for item in lost}
    return seen


def test_every_dropped_kind_is_in_its_targets_table() -> None:
    for target, whats in _whats().items():
        table = DROPPED["gemini" if target == "gemini-json-array" else target]
        assert whats <= set(table), target


# -- the two browser targets: each canonical thing, frame by frame ----------------------------

_UI_HEAD = "| canonical | `vercel-ui` | `ag-ui` |"


def _frame_types(data: bytes) -> list[str]:
    """Each SSE frame's ``type`` (``[DONE]`` for the end), repeats of one type as one."""
    out: list[str] = []
    for frame in data.split(b"\n\n"):
        if not frame:
            continue
        assert frame.startswith(b"data: "), frame
        payload = frame[6:]
        name = "[DONE]" if payload == b"[DONE]" else orjson.loads(payload)["type"]
        if not out or out[-1] != name:
            out.append(name)
    return out


_OPENED = [MessageStart("anthropic", "claude", "msg_1"), BlockStart(9, "text"), BlockStop(9)]
_SERVER = [
    BlockStart(0, "opaque", name="server_tool_use",
               raw={"type": "server_tool_use", "id": "srv_1", "name": "web_search",
                    "input": {"query": "news"}}), BlockStop(0),
    BlockStart(1, "opaque", name="web_search_tool_result",
               raw={"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": []}),
    BlockStop(1),
]
#: row -> (events written first, the row's events, how the stream ends: None, or an error)
_ROWS: dict[str, tuple[list[Event], list[Event], LlmRxError | None]] = {
    "start": ([], [MessageStart("anthropic", "claude", "msg_1")], None),
    "`text` block": (_OPENED, [BlockStart(0, "text"), TextDelta(0, "a"), TextDelta(0, "b"),
                               BlockStop(0)], None),
    "`refusal` block": (_OPENED, [BlockStart(0, "refusal"), RefusalDelta(0, "no"),
                                  BlockStop(0)], None),
    "`thinking` block": (_OPENED, [BlockStart(0, "thinking"), ThinkingDelta(0, "hm"),
                                   BlockStop(0)], None),
    "a signature": ([*_OPENED, BlockStart(0, "thinking")], [SignatureDelta(0, "sig")], None),
    "`redacted_thinking` block (or reasoning only encrypted)": (
        _OPENED, [BlockStart(0, "redacted_thinking"), SignatureDelta(0, "data"),
                  BlockStop(0)], None),
    "`tool_call` block": (_OPENED, [BlockStart(0, "tool_call", "call_1", "f"),
                                    ToolArgsDelta(0, '{"a":'), ToolArgsDelta(0, "1}"),
                                    BlockStop(0)], None),
    "`tool_call` block whose arguments never became JSON, then the stop (`max_tokens`)": (
        _OPENED, [BlockStart(0, "tool_call", "call_1", "f"), ToolArgsDelta(0, '{"a":'),
                  BlockStop(0), MessageStop("max_tokens")], None),
    "server tool (`opaque` call, then its result)": (_OPENED, _SERVER, None),
    "citation": ([*_OPENED, BlockStart(0, "text")],
                 [CitationDelta(0, {"type": "url_citation", "url": "https://example.com/",
                                    "title": "Example"})], None),
    "citation whose URL is no `http`, `https` or `mailto` link": (
        [*_OPENED, BlockStart(0, "text")],
        [CitationDelta(0, {"type": "url_citation", "url": "javascript:alert(1)",
                           "title": "Example"})], None),
    "stop": (_OPENED, [MessageStop("end_turn")], None),
    "provider error": (_OPENED, [], ProviderError("overloaded")),
    "cut source": (_OPENED, [], IncompleteStreamError("cut")),
    "cancelled source": (_OPENED, [], CancelledStreamError("stopped")),
}


def _ui_rows() -> dict[str, list[str]]:
    lines = GUIDE.splitlines()
    at = lines.index(_UI_HEAD)
    rows: dict[str, list[str]] = {}
    for line in lines[at + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def test_guide_ui_table_has_a_row_for_each_thing() -> None:
    assert list(_ui_rows()) == list(_ROWS)


@pytest.mark.parametrize("row", list(_ROWS))
@pytest.mark.parametrize(("column", "target"), [(0, "vercel-ui"), (1, "ag-ui")])
def test_guide_ui_table_is_what_the_encoders_write(row: str, column: int, target: str) -> None:
    before, events, error = _ROWS[row]
    encoder = make_encoder(target)
    encoder.encode(before)
    data = encoder.encode(events)
    if row == "start":  # (the opening is written with the first content)
        data = encoder.encode([BlockStart(0, "text")]).rsplit(b"data: ", 1)[0]
    if error is not None:
        data += encoder.finish(error)
    cell = _ui_rows()[row][column]
    if cell == "(dropped)":
        assert data == b""
        assert encoder.dropped
    else:
        assert _frame_types(data) == [name.strip("` ") for name in cell.split(",")]


def test_guide_vercel_ui_finish_reasons_are_the_encoders() -> None:
    lines = GUIDE.splitlines()
    at = lines.index("| canonical | `vercel-ui` `finishReason` |")
    rows = [line for line in lines[at + 2:at + 9]]
    table = {cells[0].strip("` "): cells[1].strip("` ") for cells in
             ([cell for cell in row.strip("|").split("|")] for row in rows)}
    assert table == STOP["vercel-ui"]
