"""jupyter_display() with an injected display function, in virtual time.

(The same display in a real kernel, driven by the notebooks, is in test_notebooks.py.)
"""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import Any

import pytest
from IPython.display import display as ipython_display
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import ProviderError
from llm_rx.events import (
    BlockStart,
    BlockStop,
    MessageStart,
    MessageStop,
    ThinkingDelta,
    ToolArgsDelta,
)
from llm_rx.sinks import DisplayUnavailableError, ReplyFrame, jupyter_display

from ..captures import capture
from .links import markdown_targets, same_url
from .timeline import cold_timeline, events_of


class FakeHandle:
    """What ``display(obj, display_id=True)`` returns: records every ``update``."""

    def __init__(self, first: ReplyFrame) -> None:
        self.frames = [first]
        self.updates = 0

    def update(self, obj: ReplyFrame) -> None:
        self.frames.append(obj)
        self.updates += 1

    @property
    def markdown(self) -> str:
        return self.frames[-1]._repr_mimebundle_()["text/markdown"]


class FakeDisplay:
    def __init__(self) -> None:
        self.handles: list[FakeHandle] = []

    def __call__(self, obj: ReplyFrame, *, display_id: Any = None) -> FakeHandle:
        assert display_id is True
        self.handles.append(FakeHandle(obj))
        return self.handles[-1]


def _show(name: str, cut: int = 0, rate: float = 0.1) -> tuple[FakeHandle, list[Any]]:
    """Replay a capture one event per tick (less the last ``cut`` events) into a display."""
    scheduler = TestScheduler()
    events = events_of(capture(name).data)
    source = cold_timeline(scheduler, events[: len(events) - cut])
    display = FakeDisplay()
    observer = scheduler.start(lambda: source.pipe(
        jupyter_display(display=display, refresh_per_second=rate), lxo.to_response()
    ))
    assert len(display.handles) == 1
    return display.handles[0], observer.messages


def test_jupyter_display_updates_at_a_bounded_rate_and_ends_with_the_whole_reply() -> None:
    name = "anthropic/thinking-signature.sse"
    handle, messages = _show(name)
    expected = llm_rx.reassemble(capture(name).data)
    events = len(events_of(capture(name).data))  # one per tick: `events` ticks in all
    assert 3 <= handle.updates <= events // 10 + 2  # ≤ one per 10 ticks, plus the final one
    assert messages[0].value.value == expected  # to_response() behind the tap: unchanged
    final = handle.markdown
    assert expected.text in final  # the answer, in full, as Markdown
    assert "<summary>Thinking (202 characters)</summary>" in final  # collapsed
    assert "> This is a straightforward question about pedestrian safety." in final
    assert "usage: input 43 · output 282 · cache read 0 · cache write 0" in final
    assert "stop: end_turn" in final
    assert "Interrupted" not in final
    assert "streaming…" in handle.frames[-2]._repr_mimebundle_()["text/markdown"]


def test_jupyter_display_frames_only_grow_and_are_never_marked_until_the_end() -> None:
    handle, _ = _show("openai/chat-text-basic.sse", rate=0.25)
    texts = [frame.plain.rpartition("-- ")[0].rstrip() for frame in handle.frames[1:]]
    for earlier, later in itertools.pairwise(texts):
        assert later.startswith(earlier)
    assert all("streaming…" in frame.markdown for frame in handle.frames[1:-1])
    assert "streaming…" not in handle.frames[-1].markdown


def test_jupyter_display_tool_calls_as_json() -> None:
    handle, _ = _show("openai/chat-parallel-tool-calls.sse")
    final = handle.markdown
    assert "**Tool call** `GetWeatherArgs`\n```json\n{\n  \"city\": \"Edinburgh\"," in final
    assert "**Tool call** `get_stock_price`" in final
    assert "stop: tool_use" in final


def test_jupyter_display_marks_an_interrupted_reply() -> None:
    handle, messages = _show("openai/chat-text-basic.sse", cut=3)  # no finish, no [DONE]
    final = handle.markdown
    assert "> **⚠ Interrupted: the events ended before the end of the message**" in final
    assert "stop: interrupted" in final
    response = messages[0].value.value
    assert response.text
    assert response.text in final


def test_jupyter_display_marks_a_provider_error_and_passes_it_on() -> None:
    scheduler = TestScheduler()
    failure = ProviderError("Overloaded", '{"type": "error"}')
    events = [MessageStart("p", "model-x"), BlockStart(0, "tool_call", "c1", "lookup"),
              ToolArgsDelta(0, '{"q": "rx'), BlockStop(0)]
    source = cold_timeline(scheduler, events, error=failure)
    display = FakeDisplay()
    observer = scheduler.start(lambda: source.pipe(jupyter_display(display=display)))
    final = display.handles[0].markdown
    assert "**⚠ Error (provider): Overloaded**" in final
    assert '{"q": "rx' in final  # the raw, unparsed arguments that arrived
    assert observer.messages[-1].value.exception is failure


def test_jupyter_display_escapes_thinking_and_fences_tool_arguments() -> None:
    scheduler = TestScheduler()
    events = [MessageStart("p"), BlockStart(0, "thinking"),
              ThinkingDelta(0, "</details><script>x</script>"), BlockStop(0),
              BlockStart(1, "tool_call", "c", "run"), ToolArgsDelta(1, '{"code": "```"}'),
              BlockStop(1), MessageStop("tool_use")]
    display = FakeDisplay()
    scheduler.start(lambda: cold_timeline(scheduler, events).pipe(
        jupyter_display(display=display)
    ))
    final = display.handles[0].markdown
    assert "> &lt;/details>&lt;script>x&lt;/script>" in final  # shown, not run
    assert "<script>" not in final
    assert '````json\n{\n  "code": "```"\n}\n````' in final  # a fence longer than the ```


def test_jupyter_display_frame_is_markdown_with_a_plain_fallback() -> None:
    handle, _ = _show("openai/chat-text-basic.sse")
    bundle = handle.frames[-1]._repr_mimebundle_()
    assert set(bundle) == {"text/markdown", "text/plain"}
    assert bundle["text/plain"].startswith("I'm unable to provide real-time weather updates.")
    assert repr(handle.frames[-1]) == bundle["text/plain"]
    assert handle.frames[0].plain == "waiting for the reply…"


def test_jupyter_display_outside_ipython_fails_clearly() -> None:
    with pytest.raises(DisplayUnavailableError, match="not a Jupyter kernel"):
        jupyter_display()


def test_jupyter_display_with_a_display_that_gives_no_handle_fails_clearly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # IPython's own display() outside a kernel prints and returns None (no handle to update)
    events = llm_rx.from_bytes(capture("openai/chat-text-basic.sse").data)
    with pytest.raises(DisplayUnavailableError, match="no display handle"):
        events.pipe(jupyter_display(display=ipython_display), lxo.to_response()).run()
    assert "waiting for the reply" in capsys.readouterr().out


def test_jupyter_display_under_await_renders_on_the_event_loop() -> None:
    data = capture("anthropic/thinking-signature.sse").data
    display = FakeDisplay()

    async def main() -> llm_rx.Response:
        response: llm_rx.Response = await llm_rx.from_bytes(data).pipe(
            jupyter_display(display=display), lxo.to_response()
        )
        return response

    response = asyncio.run(main())
    assert response == llm_rx.reassemble(data)
    handle = display.handles[0]
    assert response.text in handle.markdown
    assert "stop: end_turn" in handle.markdown


def test_jupyter_display_take_until_marks_the_reply_interrupted() -> None:
    scheduler = TestScheduler()
    events = events_of(capture("anthropic/thinking-signature.sse").data)
    stop = scheduler.create_hot_observable(ReactiveTest.on_next(260, None))
    display = FakeDisplay()
    observer = scheduler.start(lambda: cold_timeline(scheduler, events).pipe(
        ops.take_until(stop), jupyter_display(display=display), lxo.to_response()
    ))
    response = observer.messages[0].value.value
    assert response.stop_reason == "interrupted"
    assert "**⚠ Interrupted" in display.handles[0].markdown
    assert display.handles[0].frames[-1].plain.count(response.text) == 1


def _paragraphs(markdown: str) -> list[str]:
    return [part.strip() for part in markdown.split("\n\n") if part.strip()]


def test_jupyter_display_reads_adjacent_text_blocks_as_one_flow() -> None:
    # each cited stretch is a text block of its own, the ". " between them another
    handle, _ = _show("anthropic/web-search-citations.sse")
    final = re.sub(r"<sup>\[[0-9\]\[]+\]</sup>", "", handle.markdown)  # (the markers)
    lone = [part for part in _paragraphs(final) if not any(c.isalnum() for c in part)]
    assert lone == []
    assert "ahead of Friday's U.S.-Russia summit. The White House lowered" in final


def _fence_lines(markdown: str) -> int:
    return sum(1 for line in markdown.split("\n") if line.lstrip().startswith("```"))


def test_jupyter_display_closes_a_code_fence_cut_short_before_the_notice() -> None:
    handle, messages = _show("mistral/magistral-thinking-chunks.sse", cut=75)  # inside ```
    final = handle.markdown
    before, notice, _ = final.partition("> **⚠ Interrupted")
    assert notice
    assert _fence_lines(before) % 2 == 0  # the notice and footer are not in the code box
    response = messages[0].value.value
    assert _fence_lines(response.text) % 2 == 1  # the text itself is as it arrived
    assert response.text in handle.frames[-1].plain
    assert "To cross the street safely\n```\n\n> **⚠ Interrupted" in final


def test_jupyter_display_closes_bold_cut_short() -> None:
    handle, _ = _show("anthropic/web-search-citations.sse", cut=85)  # inside **1. Trump…
    final = handle.markdown
    assert "**1. Trump-Putin Summit and Ukraine Crisis**\n\n> **⚠ Interrupted" in final


@pytest.mark.parametrize("name", ["anthropic/web-search-citations.sse",
                                  "openai/responses-annotations-raw.sse"])
def test_jupyter_display_shows_every_cited_source_with_a_marker(name: str) -> None:
    handle, messages = _show(name)
    final = handle.markdown
    response = messages[0].value.value
    urls = {c["url"] for block in response.content if block.type == "text"
            for c in block.citations}
    assert urls
    answer, sources, _ = final.partition("**Sources**")
    assert sources
    targets = markdown_targets(final.partition("**Sources**")[2])
    for url in urls:
        assert any(same_url(target, url) for target in targets), url
    assert "<sup>[1]</sup>" in answer
    assert f"<sup>[{len(urls)}]</sup>" in answer


def test_jupyter_display_source_shows_the_cited_snippet() -> None:
    handle, _ = _show("anthropic/web-search-citations.sse")
    assert "<br>“Now, he could be fined for it · Aug 13, 2025 · Pinkfong!”" in handle.markdown
    assert ("summit<sup>[1][2]</sup>. The White House lowered its expectations surrounding "
            "the Trump-Putin summit on Friday<sup>[2]</sup>.") in handle.markdown


def test_jupyter_display_server_tools_show_what_ran() -> None:
    handle, _ = _show("anthropic/code-execution-bash.sse")
    final = handle.markdown
    assert ('>⚙ bash_code_execution: echo "65465-6544 * 65464-6+1.02255'
            '" | bc -l</div>') in final  # (nothing more to show: a line, not collapsed)
    assert ("<summary>⚙ bash_code_execution: exit code 0</summary>\n\n"
            "> &#45;428330955.97745") in final  # (a "-" that would start a list: as text)
    assert "`[server_tool_use]`" not in final


def test_jupyter_displays_sharing_a_cell_are_each_labelled_with_their_reply() -> None:
    # bug: two displays in one cell looked alike, nothing said which reply was which
    display = FakeDisplay()
    for name in ("anthropic/thinking-signature.sse", "openai/chat-text-basic.sse"):
        scheduler = TestScheduler()
        source = cold_timeline(scheduler, events_of(capture(name).data))
        scheduler.start(lambda source=source: source.pipe(
            jupyter_display(display=display, refresh_per_second=0.1), lxo.to_response()))
    first, second = display.handles
    assert first.markdown.startswith("**claude-")  # drawn again, labelled, when the second opened
    assert second.markdown.startswith("**gpt-4o-2024-08-06 · chatcmpl-")
    alone = FakeDisplay()
    scheduler = TestScheduler()
    source = cold_timeline(scheduler, events_of(capture("openai/chat-text-basic.sse").data))
    scheduler.start(lambda: source.pipe(jupyter_display(display=alone), lxo.to_response()))
    assert alone.handles[0].markdown.startswith("I'm unable")  # one display: no label
