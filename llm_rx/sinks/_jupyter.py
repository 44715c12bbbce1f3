"""``jupyter_display()``: a reply rendered live in a notebook cell, updated in place."""

from __future__ import annotations

import html
import importlib
import re
from collections.abc import Callable
from typing import Any

from reactivex import Observable, abc

from ..builder import Snapshot
from ..events import Event
from ..response import (
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
    arguments_text,
    footer_text,
    problem_text,
    thinking_title,
)
from ._live import DEFAULT_REFRESH_PER_SECOND, live
from ._server_tools import server_tool_lines
from ._sources import Source, cited_pieces, markers, snippet_text

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
    (or failed) with the reason. Frames are timed on ``scheduler``, else the subscription's
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
            "jupyter_display() needs IPython: pip install 'llm-rx[jupyter]'"
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
    def __init__(self, show: DisplayFunction) -> None:
        handle = show(ReplyFrame("*waiting for the reply…*", "waiting for the reply…"),
                      display_id=True)
        if not callable(getattr(handle, "update", None)):
            raise DisplayUnavailableError(
                "display(..., display_id=True) gave no display handle: "
                "jupyter_display() needs a Jupyter kernel"
            )
        self._handle = handle

    def update(self, snapshot: Snapshot) -> None:
        self._handle.update(render_frame(snapshot.response, final=False))

    def close(self, snapshot: Snapshot) -> None:
        self._handle.update(render_frame(snapshot.response, final=True, notes=snapshot.notes))


def render_frame(
    response: Response, final: bool, notes: tuple[str, ...] = ()
) -> ReplyFrame:
    """The Markdown and plain text of a reply (``final``: as it ended, else in progress;
    ``notes``: footer lines of the operators after the display)."""
    markdown: list[str] = []
    plain: list[str] = []
    parts = text_runs(response.content, citations(response))
    last = len(parts) - 1
    sources: list[Source] = []
    for position, block in enumerate(parts):
        if isinstance(block, TextRun):  # adjacent text blocks: one flow of the answer
            text = block.text
            answer = answer_json_text(text, final)  # (a JSON answer: its object, indented)
            if answer is not None:
                fence = _fence(answer)
                markdown.append(f"{fence}json\n{answer}\n{fence}")
            else:
                cited = "".join(piece + (f"<sup>{markers(numbers)}</sup>" if numbers else "")
                                for piece, numbers in cited_pieces(block, sources))
                markdown.append(closed_markdown(cited))
            plain.append(text if answer is None else answer)
        elif isinstance(block, ThinkingBlock):
            thinking = not final and position == last
            markdown.append(_thinking_markdown(block, thinking))
            plain.append(f"[{thinking_title(block, thinking)}]")
        elif isinstance(block, ToolCallBlock):
            arguments = arguments_text(block, final)
            fence = _fence(arguments)
            markdown.append(f"**Tool call** `{block.name}`\n{fence}json\n{arguments}\n{fence}")
            plain.append(f"[tool call] {block.name}({arguments})")
        elif isinstance(block, RefusalBlock):
            markdown.append(_quote(f"**Refusal:** {block.text}"))
            plain.append(f"[refusal] {block.text}")
        elif isinstance(block, OpaqueBlock):  # (a server tool: what ran, collapsed)
            title, details = server_tool_lines(block)
            body = "\n".join(f"> {html.escape(line, quote=False)}  " for line in details)
            markdown.append(_collapsed(f"⚙ {html.escape(title)}", body))
            plain.append(f"[{title}]")
    if sources:
        markdown.append(_sources_markdown(sources))
        plain.extend(f"[{source.number}] {source.url or source.name}" for source in sources)
    problem = problem_text(response) if final else None
    if problem:
        markdown.append(_quote(f"**⚠ {problem}**"))
        plain.append(f"[{problem}]")
    footer = footer_text(response, final, notes=notes)
    one_line = footer.replace("\n", " · ")  # (the notebook wraps it to its width)
    markdown.append(f"<sub>{html.escape(one_line)}</sub>")
    plain.append("\n".join(f"-- {line}" for line in footer.split("\n")))
    return ReplyFrame("\n\n".join(part for part in markdown if part),
                      "\n".join(part for part in plain if part))


def _thinking_markdown(block: ThinkingBlock, thinking: bool) -> str:
    """Collapsed: a ``<details>`` whose summary says how much, the text quoted inside."""
    summary = thinking_title(block, thinking).capitalize()
    text = block.text.strip("\n")
    return _collapsed(summary, _quote(html.escape(text, quote=False)) if text.strip() else "")


def _collapsed(summary: str, body: str) -> str:
    """A ``<details>`` that opens on ``body``; with nothing to open, the summary alone (a
    disclosure triangle that opens on nothing looks broken)."""
    if not body:
        return f"<p>{summary}</p>"
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def _sources_markdown(sources: list[Source]) -> str:
    """A numbered list under the answer: title (a link to the URL), the URL, the snippet."""
    lines = ["**Sources**", ""]
    for source in sources:
        title = source.name.replace("[", "\\[").replace("]", "\\]")
        if source.url is None:  # (a document, a file: named, nothing to link to)
            line = f"{source.number}. {title}"
        elif source.title is None:  # (a bare URL: shown once)
            line = f"{source.number}. [{title}](<{source.url}>)"
        else:
            line = (f"{source.number}. [{title}](<{source.url}>) "
                    f"<sub>{html.escape(source.url)}</sub>")
        snippet = snippet_text(source)
        if snippet:
            line += f"<br>“{html.escape(snippet)}”"
        lines.append(line)
    return "\n".join(lines)


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks inside ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)
