"""What a frame costs grows with the reply at most linearly, counted (not timed): the lines of
llm-rx's own code a frame runs, for a reply ten times the size; and what one streaming frame
hands to rich is bounded whatever the size of the reply."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import orjson
from rich.console import Group
from rich.table import Table
from rich.text import Text

import llm_rx
from llm_rx.sinks._jupyter import render_frame
from llm_rx.sinks._rich import (
    MARKDOWN_LIMIT,
    STREAM_SOURCES,
    STREAM_TAIL,
    _SafeMarkdown,
    render_reply,
)

PACKAGE = str(Path(llm_rx.__file__).parent)


def _body(cited: int, text: str = "") -> bytes:
    """An Anthropic reply: ``cited`` sentences, each citing a source of its own, then ``text``."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}]
    for n in range(cited):
        citation = {"type": "web_search_result_location", "cited_text": f"snippet {n}",
                    "url": f"https://example.com/{n}", "title": f"Title {n}",
                    "encrypted_index": "x"}
        events += [
            {"type": "content_block_start", "index": n,
             "content_block": {"type": "text", "text": "", "citations": []}},
            {"type": "content_block_delta", "index": n,
             "delta": {"type": "text_delta", "text": f"Sentence {n} says **so**. "}},
            {"type": "content_block_delta", "index": n,
             "delta": {"type": "citations_delta", "citation": citation}},
            {"type": "content_block_stop", "index": n}]
    if text:
        events += [{"type": "content_block_start", "index": cited,
                    "content_block": {"type": "text", "text": ""}},
                   {"type": "content_block_delta", "index": cited,
                    "delta": {"type": "text_delta", "text": text}},
                   {"type": "content_block_stop", "index": cited}]
    events += [{"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 5}}, {"type": "message_stop"}]
    return b"".join(b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event)
                    + b"\n\n" for event in events)


def _lines_run(work: Callable[[], object]) -> int:
    """How many lines of llm-rx's code ``work`` runs (Python's trace hook counts them)."""
    count = 0

    def local(frame: FrameType, event: str, _: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, event: str, _: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    sys.settrace(calls)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


def test_notebook_frame_cost_is_linear_in_the_sources() -> None:
    # bug: each citation looked its source up in the list of those before it (10x the
    # sources was 60x the time), and each adjacent text block copied the run before it
    small, large = (llm_rx.reassemble(_body(n)) for n in (100, 1000))
    ratio = _lines_run(lambda: render_frame(large, True)) / _lines_run(
        lambda: render_frame(small, True))
    assert ratio < 12, ratio  # 10x the sources: 10x the work, not 100x


def test_terminal_frame_cost_is_linear_in_the_sources() -> None:
    small, large = (llm_rx.reassemble(_body(n)) for n in (100, 1000))
    ratio = _lines_run(lambda: render_reply(large, True)) / _lines_run(
        lambda: render_reply(small, True))
    assert ratio < 12, ratio


def _parts(group: Any) -> list[Any]:
    found: list[Any] = []
    for part in group.renderables:
        found += _parts(part) if isinstance(part, Group) else [part]
    return found


def test_streaming_terminal_frame_hands_rich_a_bounded_answer_and_source_list() -> None:
    line = "word " * 400_000  # (one line of 2 MB: rich's wrap is left the newest part)
    response = llm_rx.reassemble(_body(500, line + "\nlast line"))
    parts = _parts(render_reply(response, final=False))
    markdown = [part for part in parts if isinstance(part, _SafeMarkdown)]
    assert markdown
    assert all(len(part.markup) <= STREAM_TAIL + 20 for part in markdown)
    assert markdown[-1].markup.endswith("last line")
    grids = [part for part in parts if isinstance(part, Table)]
    assert grids
    assert all(grid.row_count <= STREAM_SOURCES + 1 for grid in grids)
    final = _parts(render_reply(response, final=True))
    assert any(isinstance(part, Text) and len(part.plain) > len(line)
               for part in final)  # the last frame: all of it, as text (over the limit)
    assert not any(isinstance(part, _SafeMarkdown) for part in final[:1])


def test_terminal_answer_under_the_limit_is_markdown() -> None:
    response = llm_rx.reassemble(_body(0, "**bold** " * (MARKDOWN_LIMIT // 10)))
    parts = _parts(render_reply(response, final=True))
    assert isinstance(parts[0], _SafeMarkdown)
