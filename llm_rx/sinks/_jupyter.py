"""``jupyter_display()``: a reply rendered live in a notebook cell, updated in place."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from reactivex import Observable, abc

from .._extras import install_hint
from ..events import Event
from ..fold.builder import Snapshot
from ..response import (
    ApprovalRequestBlock,
    OpaqueBlock,
    RefusalBlock,
    Response,
    ThinkingBlock,
    ToolCallBlock,
)
from ..wire.citations import citations
from ._flow import TextRun, closed_markdown, text_runs
from ._format import (
    answer_json_text,
    approval_text,
    arguments_text,
    footer_text,
    problem_text,
    thinking_title,
)
from ._html_text import code_block, code_text, link_target, literal_text, markdown_text
from ._live import DEFAULT_REFRESH_PER_SECOND, live
from ._server_tools import ToolLines, server_tool_lines
from ._sources import Source, Sources, cited_pieces, markers, short_url, snippet_text
from ._term_text import terminal_text

__all__ = ["DisplayUnavailableError", "ReplyFrame", "jupyter_display"]

DisplayFunction = Callable[..., Any]


class DisplayUnavailableError(RuntimeError):
    """The display cannot be shown here (no Jupyter kernel, IPython not installed)."""


class ReplyFrame:
    """One frame of a reply, as IPython displays it: Markdown, with a plain-text fallback.

    Args:
        markdown: The frame as Markdown (``text/markdown``).
        plain: The same frame as plain text (``text/plain``).
    """

    __slots__ = ("markdown", "plain")

    def __init__(self, markdown: str, plain: str) -> None:
        self.markdown = markdown
        self.plain = plain

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, str]:
        return {"text/markdown": self.markdown, "text/plain": self.plain}

    def __repr__(self) -> str:
        return self.plain


def jupyter_display(
    *,
    refresh_per_second: float = DEFAULT_REFRESH_PER_SECOND,
    scheduler: abc.SchedulerBase | None = None,
    display: DisplayFunction | None = None,
) -> Callable[[Observable[Event]], Observable[Event]]:
    """Show the reply in the notebook as it arrives, passing every event through.

    ```text
    events:  -S-b-t-t-t-t-t-t-U-M-|
    jupyter_display()
    result:  -S-b-t-t-t-t-t-t-U-M-|      (the same events, at the same times)
    output:  -f-----f-----f-------F      (f: update_display_data, F: the whole reply)
    ```

    ```python
    response = events.pipe(lxs.jupyter_display(), lxo.to_response()).run()
    response = await events.pipe(lxs.jupyter_display(), lxo.to_response())
    ```

    One output is displayed per subscription and updated in place (``update_display_data``)
    at most ``refresh_per_second`` times a second: the answer as Markdown, thinking in a
    collapsed ``<details>``, tool calls as JSON, then a footer with the model and the usage.
    The final update shows the whole reply; one that did not finish is marked interrupted
    (or failed) with the reason. What the provider wrote is data, never markup: no HTML
    element or attribute of the reply reaches the output, and links lead only to ``http``,
    ``https`` or ``mailto`` (see ``docs/guarantees.md``, "What a reply cannot do").
    Frames are timed on ``scheduler``, else the subscription's
    (``await`` runs them on the notebook's event loop).

    ``display`` is IPython's ``display`` function unless given (tests inject one); outside
    a Jupyter kernel this raises [`DisplayUnavailableError`][llm_rx.sinks.DisplayUnavailableError].

    Args:
        refresh_per_second: The most frames a second.
        scheduler: The scheduler that times the frames (see above).
        display: IPython's ``display`` function, or one like it.

    Returns:
        An operator for ``.pipe()``.
    """
    show = display if display is not None else _ipython_display()

    def open_view() -> _NotebookView:
        return _NotebookView(show)

    return live(open_view, refresh_per_second=refresh_per_second, scheduler=scheduler)


def _ipython_display() -> DisplayFunction:
    try:
        ipython = importlib.import_module("IPython")
    except ImportError as error:
        raise DisplayUnavailableError(
            f"jupyter_display() needs IPython: {install_hint('jupyter')}"
        ) from error
    shell = ipython.get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        raise DisplayUnavailableError(
            "jupyter_display() updates a notebook output, and this is not a Jupyter kernel; "
            "outside a notebook use terminal_display()"
        )
    show: DisplayFunction = importlib.import_module("IPython.display").display
    return show


class _NotebookView:
    """One display. Where a cell shows several, each is labelled with its reply's model and
    id (the first too, drawn again when the second opens)."""

    def __init__(self, show: DisplayFunction) -> None:
        handle = show(ReplyFrame("*waiting for the reply…*", "waiting for the reply…"),
                      display_id=True)
        if not callable(getattr(handle, "update", None)):
            raise DisplayUnavailableError(
                "display(..., display_id=True) gave no display handle: "
                "jupyter_display() needs a Jupyter kernel"
            )
        self._handle = handle
        self._labelled = False
        self._last: tuple[Response, bool, tuple[str, ...]] | None = None
        siblings = _cell_views(show)
        siblings.append(self)
        if len(siblings) > 1:
            for view in siblings:
                view._label()

    def _label(self) -> None:
        if not self._labelled:
            self._labelled = True
            if self._last is not None:
                self._draw(*self._last)

    def _draw(self, response: Response, final: bool, notes: tuple[str, ...] = ()) -> None:
        self._last = (response, final, notes)
        self._handle.update(render_frame(response, final, notes, label=self._labelled))

    def update(self, snapshot: Snapshot) -> None:
        self._draw(snapshot.response, False)

    def close(self, snapshot: Snapshot) -> None:
        self._draw(snapshot.response, True, snapshot.notes)


#: The views of the cell that runs now: the display function and the shell's execution
#: count that opened them (only the latest cell's are kept).
_cell: tuple[DisplayFunction, object, list[_NotebookView]] | None = None


def _cell_views(show: DisplayFunction) -> list[_NotebookView]:
    """The views opened with ``show`` in the cell that runs now (``show`` held, so that
    no other function can take its identity while it is kept)."""
    global _cell
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    count = getattr(shell, "execution_count", None)
    if _cell is None or _cell[0] is not show or _cell[1] != count:
        _cell = (show, count, [])
    return _cell[2]


def render_frame(
    response: Response, final: bool, notes: tuple[str, ...] = (), label: bool = False
) -> ReplyFrame:
    """The Markdown and plain text of a reply (``final``: as it ended, else in progress;
    ``notes``: footer lines of the operators after the display; ``label``: headed by the
    reply's model and id, for a cell that shows several)."""
    markdown: list[str | _Line] = []
    plain: list[str] = []
    if label:
        name = " · ".join(part for part in (response.model, response.id) if part) or "reply"
        markdown.append(f"**{literal_text(name)}**")
        plain.append(f"[{name}]")
    parts = text_runs(response.content, citations(response))
    last = len(parts) - 1
    sources = Sources()
    for position, block in enumerate(parts):
        if isinstance(block, TextRun):  # adjacent text blocks: one flow of the answer
            text = block.text
            answer = answer_json_text(text, final)  # (a JSON answer: its object, indented)
            if answer is not None:
                markdown.append(code_block(answer, "json"))
            else:
                markdown.append(closed_markdown(_cited_markdown(block, sources)))
            plain.append(text if answer is None else answer)
        elif isinstance(block, ThinkingBlock):
            thinking = not final and position == last
            markdown.append(_thinking_markdown(block, thinking))
            plain.append(f"[{thinking_title(block, thinking)}]")
        elif isinstance(block, ToolCallBlock):
            arguments = arguments_text(block, final)
            markdown.append(f"**Tool call** {code_text(block.name or '?')}\n"
                            + code_block(arguments, "json"))
            plain.append(f"[tool call] {block.name}({arguments})")
        elif isinstance(block, RefusalBlock):
            (refusal,) = markdown_text(block.text, inline=True)
            markdown.append(_quote(f"**Refusal:** {refusal}"))
            plain.append(f"[refusal] {block.text}")
        elif isinstance(block, OpaqueBlock):  # (a server tool: what ran, collapsed)
            tool = server_tool_lines(block)
            markdown.append(_Line(f"⚙ {literal_text(tool.title)}", _tool_body(tool)))
            plain.append(f"[{tool.title}]")
        elif isinstance(block, ApprovalRequestBlock):  # (the reply waits for the user)
            title, arguments = approval_text(block)
            markdown.append(f"**{literal_text(title)}**"
                            + ("\n" + code_block(arguments, "json") if arguments else ""))
            plain.append(f"[{title}] {arguments}".rstrip())
    if sources:
        markdown.append(_sources_markdown(sources))
        plain.extend(f"[{source.number}] {source.url or source.name}" for source in sources)
    problem = problem_text(response) if final else None
    if problem:
        markdown.append(_quote(f"**⚠ {literal_text(problem)}**"))
        plain.append(f"[{problem}]")
    footer = footer_text(response, final, notes=notes)
    one_line = footer.replace("\n", " · ")  # (the notebook wraps it to its width)
    markdown.append(f"<sub>{literal_text(one_line)}</sub>")
    plain.append("\n".join(f"-- {line}" for line in footer.split("\n")))
    return ReplyFrame(_joined(markdown),
                      terminal_text("\n".join(part for part in plain if part)))


def _cited_markdown(run: TextRun, sources: Sources) -> str:
    """The run's text as safe Markdown, each cited span's end marked with its sources'
    numbers (a mark never inside code: see ``markdown_text``)."""
    pieces = cited_pieces(run, sources)
    cuts = list(accumulate(len(piece) for piece, _ in pieces[:-1]))
    escaped = markdown_text("".join(piece for piece, _ in pieces), cuts)
    return "".join(text + (f"<sup>{markers(numbers)}</sup>" if numbers else "")
                   for text, (_, numbers) in zip(escaped, pieces, strict=True))


@dataclass(frozen=True)
class _Line:
    """A line about the reply rather than of it (thinking, a server tool): collapsed, it
    opens on ``body``; with nothing to open, the summary alone (a disclosure triangle that
    opens on nothing looks broken)."""

    summary: str
    body: str = ""

    def markdown(self, gap: str) -> str:
        style = f' style="margin: 0 0 {gap}"'  # (a <p>'s margin and a <details>' differ)
        if not self.body:
            return f"<div{style}>{self.summary}</div>"
        return (f"<details{style}><summary>{self.summary}</summary>\n\n{self.body}\n\n"
                "</details>")


#: Under a line about the reply: the next such line, close; the answer, a paragraph's gap.
_LINE_GAP, _PARAGRAPH_GAP = "0.35em", "1em"


def _joined(parts: list[str | _Line]) -> str:
    """The frame's parts one after the other; each line spaced by what follows it."""
    shown = [part for part in parts if part]
    out: list[str] = []
    for position, part in enumerate(shown):
        if isinstance(part, _Line):
            following = shown[position + 1] if position + 1 < len(shown) else None
            part = part.markdown(_LINE_GAP if isinstance(following, _Line) else _PARAGRAPH_GAP)
        out.append(part)
    return "\n\n".join(out)


def _thinking_markdown(block: ThinkingBlock, thinking: bool) -> _Line:
    """Collapsed: a ``<details>`` whose summary says how much, the text quoted inside."""
    summary = thinking_title(block, thinking).capitalize()
    text = block.text.strip("\n")
    return _Line(summary, _quote(markdown_text(text)[0]) if text.strip() else "")


def _tool_body(tool: ToolLines) -> str:
    """What a server tool was given (the whole input, as code), then its result's lines."""
    parts = []
    if tool.code is not None:
        parts.append(code_block(tool.code))
    if tool.details:
        parts.append("\n".join(f"> {literal_text(line)}  " for line in tool.details))
    return "\n\n".join(parts)


def _sources_markdown(sources: list[Source]) -> str:
    """A numbered list under the answer: each source a link (its text the title, else the
    URL's host and path, shortened; its target the whole URL, encoded where it must be),
    where it leads when the title does not say, and the cited snippet."""
    lines = ["**Sources**", ""]
    for source in sources:
        text = literal_text(source.link_text)
        target = None if source.url is None else link_target(source.url)
        if target is None:  # (a document, a file, a URL that may not be a link: named)
            line = f"{source.number}. {text}"
        else:
            line = f"{source.number}. [{text}](<{target}>)"
        if source.url is not None and source.title is not None \
                and not _names_a_site(source.title):
            line += f" <sub>{literal_text(short_url(source.url))}</sub>"
        snippet = snippet_text(source)
        if snippet:
            line += f"<br>“{literal_text(snippet)}”"
        lines.append(line)
    return "\n".join(lines)


def _names_a_site(title: str) -> bool:
    """A title that is a host name (``timeanddate.com``) already says where it leads."""
    return "." in title and not any(c.isspace() for c in title.strip())


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))
