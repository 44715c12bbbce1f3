"""The live displays show a tool call's or a JSON answer's object so far, indented."""

from __future__ import annotations

from io import StringIO

from rich.console import Console

from llm_rx.response import Response, TextBlock, ToolCallBlock
from llm_rx.sinks._jupyter import render_frame
from llm_rx.sinks._rich import render_reply


def _call(raw: str, arguments: object = None) -> Response:
    block = ToolCallBlock(id="c", name="lookup", arguments=arguments, raw_arguments=raw)
    return Response(provider="p", content=[block])


def _answer(text: str) -> Response:
    return Response(provider="p", content=[TextBlock(text=text)])


def _terminal(response: Response, final: bool) -> str:
    out = StringIO()
    Console(file=out, width=60, color_system=None).print(render_reply(response, final))
    return out.getvalue()


def test_jupyter_display_shows_a_tool_calls_arguments_so_far_indented() -> None:
    frame = render_frame(_call('{"q": "rx", "n": [1, 2'), final=False)
    assert '```json\n{\n  "q": "rx",\n  "n": [\n    1\n  ]\n}\n```' in frame.markdown


def test_jupyter_display_shows_a_json_answer_so_far_indented() -> None:
    frame = render_frame(_answer('{"city": "San Fr'), final=False)
    assert frame.markdown.startswith('```json\n{\n  "city": "San Fr"\n}\n```')
    assert '{\n  "city": "San Fr"\n}' in frame.plain


def test_jupyter_display_a_cut_json_answer_at_the_end_is_shown_as_it_arrived() -> None:
    frame = render_frame(_answer('{"city": "San Fr'), final=True)
    assert frame.markdown.startswith('{"city": "San Fr')


def test_jupyter_display_a_whole_json_answer_at_the_end_is_indented() -> None:
    frame = render_frame(_answer('{"a":1}'), final=True)
    assert frame.markdown.startswith('```json\n{\n  "a": 1\n}\n```')


def test_jupyter_display_leaves_prose_alone() -> None:
    frame = render_frame(_answer("Hello {not json"), final=False)
    assert frame.markdown.startswith("Hello {not json")


def test_terminal_display_shows_a_tool_calls_arguments_so_far_indented() -> None:
    assert '{\n  "q": "rx"\n}' in _terminal(_call('{"q": "rx'), final=False)


def test_terminal_display_shows_a_json_answer_so_far_indented() -> None:
    shown = _terminal(_answer('[{"a": tr'), final=False)
    assert "[\n  {}\n]" in shown


def test_terminal_display_arguments_that_never_parsed_stay_raw_at_the_end() -> None:
    assert '{"q": "rx' in _terminal(_call('{"q": "rx'), final=True)
