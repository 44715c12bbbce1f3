"""The answer's flow: text runs and the Markdown of a frame cut short, closed."""

from __future__ import annotations

import pytest

from llm_rx.response import TextBlock, ToolCallBlock
from llm_rx.sinks._flow import TextRun, closed_markdown, text_runs


def test_text_runs_gather_adjacent_text_blocks_only() -> None:
    call = ToolCallBlock(name="f")
    runs = text_runs([TextBlock(text="a"), TextBlock(text=". "), call, TextBlock(text="b")])
    assert runs == [TextRun((TextBlock(text="a"), TextBlock(text=". "))), call,
                    TextRun((TextBlock(text="b"),))]
    first = runs[0]
    assert isinstance(first, TextRun)
    assert first.text == "a. "


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("x\n```py\ncode", "x\n```py\ncode\n```"),
        ("x\n````\nhas ```\n", "x\n````\nhas ```\n````"),
        ("~~~\ncode\n", "~~~\ncode\n~~~"),
        ("a **bold", "a **bold**"),
        ("a **bold ", "a **bold**"),
        ("ends with **", "ends with"),
        ("```\n**not bold\n```\nand **bold", "```\n**not bold\n```\nand **bold**"),
        ("**one\n\ntwo", "**one\n\ntwo"),  # (bold never spans paragraphs)
        ("code `**` here", "code `**` here"),
        ("**done** and `x`", "**done** and `x`"),
        ("``` has `ticks` so inline", "``` has `ticks` so inline"),
    ],
)
def test_closed_markdown_closes_what_a_cut_left_open(text: str, rendered: str) -> None:
    assert closed_markdown(text) == rendered
