"""The rich ``Live`` view behind ``terminal_display()`` (imported only when rich is used)."""

from __future__ import annotations

from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

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
from ._html_text import link_target
from ._server_tools import ToolLines, server_tool_lines
from ._sources import Source, Sources, cited_pieces, markers, snippet_text
from ._term_text import terminal_text

__all__ = ["RichView", "render_reply"]

#: Lines of a thinking block shown while it streams (it is collapsed to a title after).
THINKING_TAIL = 3
#: Lines of a server tool's input (a program) shown under its title.
CODE_SHOWN = 8
#: While a reply streams, a frame draws at most this many of the answer's last characters
#: (its screen shows the newest lines only): a frame's cost does not grow with the reply.
#: The final frame draws the whole reply, once.
STREAM_TAIL = 16_000
#: An answer longer than this is drawn as text, its Markdown not rendered (rich takes about
#: 15 µs a character to render Markdown: 45 s for 3 MB; as text, a few seconds).
MARKDOWN_LIMIT = 200_000
#: While a reply streams, the sources listed at most (the latest; the final frame: all).
STREAM_SOURCES = 40
#: Columns the lines under a title are set in.
INDENT = 4


class RichView:
    """A ``Live`` region on the console, refreshed only when a frame is rendered.

    ``auto_refresh`` is off: the frames come from the tap's scheduler, not from rich's own
    thread. While streaming, only the last lines that fit the terminal are drawn (the newest
    text stays in view); the final frame is drawn in full and ends with a newline.
    """

    def __init__(self, console: Console) -> None:
        self._live = Live(console=console, auto_refresh=False, transient=False)
        self._live.start()

    def update(self, snapshot: Snapshot) -> None:
        self._live.update(_Tail(render_reply(snapshot.response, final=False)), refresh=True)

    def close(self, snapshot: Snapshot) -> None:
        self._live.vertical_overflow = "visible"  # the final frame in full, however tall
        self._live.update(render_reply(snapshot.response, final=True, notes=snapshot.notes))
        self._live.stop()  # draws the last frame, then ends its line


class _Tail:
    """The last ``height`` lines of a renderable (default: as many as fit the console)."""

    def __init__(self, renderable: RenderableType, height: int | None = None) -> None:
        self.renderable = renderable
        self.height = height

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options, pad=False)
        room = self.height or max(1, options.size.height - 1)
        new_line = Segment.line()
        for line in lines[-room:]:
            yield from line
            yield new_line


def render_reply(
    response: Response, final: bool, notes: tuple[str, ...] = ()
) -> RenderableType:
    """The reply as rich renderables: thinking collapsed, Markdown text, tool calls, footer."""
    parts: list[RenderableType] = []
    blocks = text_runs(response.content, citations(response))
    last = len(blocks) - 1
    sources = Sources()
    for position, block in enumerate(blocks):
        if isinstance(block, TextRun):  # adjacent text blocks: one flow of the answer
            text = block.text
            answer = answer_json_text(text, final)  # (a JSON answer: its object, indented)
            if answer is not None:
                parts.append(Text(terminal_text(answer), style="cyan"))
            elif text:
                cited = "".join(piece + markers(numbers)
                                for piece, numbers in cited_pieces(block, sources))
                if not final:
                    cited = _newest(cited)
                if len(cited) > MARKDOWN_LIMIT:  # (rich's Markdown: ~15 µs a character)
                    parts.append(Text(terminal_text(cited)))
                else:
                    parts.append(_SafeMarkdown(closed_markdown(terminal_text(cited))))
        elif isinstance(block, ThinkingBlock):
            parts.extend(_thinking(block, streaming=not final and position == last))
        elif isinstance(block, ToolCallBlock):
            name = terminal_text(block.name or "?")
            parts.append(Text.assemble(("tool call ", "bold cyan"), (name, "bold")))
            arguments = terminal_text(arguments_text(block, final))
            if arguments:
                parts.append(Text(arguments, style="cyan"))
        elif isinstance(block, RefusalBlock):
            parts.append(Text(terminal_text(f"refusal: {block.text}"), style="yellow"))
        elif isinstance(block, OpaqueBlock):  # (a server tool: what ran, a line or few)
            parts.extend(_server_tool(server_tool_lines(block)))
        elif isinstance(block, ApprovalRequestBlock):  # (the reply waits for the user)
            title, arguments = approval_text(block)
            parts.append(Text(terminal_text(title), style="bold yellow"))
            if arguments:
                parts.append(Text(terminal_text(arguments), style="yellow"))
    if sources:
        parts += [Text(""), _sources(sources, final)]  # (a blank line: not the answer)
    problem = problem_text(response) if final else None
    if problem:
        parts.append(Text(terminal_text(f"⚠ {problem}"), style="bold red"))
    if parts:
        parts.append(Text(""))  # (the footer under a blank line)
    parts.append(_Footer(response, final, notes))
    return Group(*parts)


def _indented(text: Text) -> Padding:
    """``text`` four columns in, and so are the lines it wraps or folds onto."""
    return Padding(text, (0, 0, 0, INDENT))


def _server_tool(tool: ToolLines) -> list[RenderableType]:
    """The title, then the input as code (its first lines), then the result's first lines."""
    parts: list[RenderableType] = [Text(terminal_text(f"▸ {tool.title}"), style="dim italic")]
    if tool.code is not None:
        lines = terminal_text(tool.code).splitlines()
        more = len(lines) - CODE_SHOWN
        shown = "\n".join(lines[:CODE_SHOWN]).rstrip()
        parts.append(_indented(Text(shown, style="cyan dim", overflow="fold")))
        if more > 0:
            parts.append(_indented(Text(f"… and {more} more lines", style="dim")))
    parts.extend(_indented(Text(terminal_text(line), style="dim")) for line in tool.details)
    return parts


def _newest(text: str, limit: int = STREAM_TAIL) -> str:
    """The last ``limit`` characters of ``text``, from a line's start where there is one."""
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    start = tail.find("\n")
    return tail[start + 1:] if 0 <= start < len(tail) - 1 else tail


def _sources(sources: list[Source], final: bool = True) -> Group:
    """A numbered list under the answer: title, URL, the cited snippet (dim), each source's
    lines starting under its title (a long title, a folded URL, a wrapped snippet too). The
    URL is a link (OSC 8) where the terminal has them: one wider than the console, folded
    onto the next lines, stays one link to the whole URL."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    earlier = 0 if final else max(0, len(sources) - STREAM_SOURCES)
    if earlier:
        grid.add_row(Text("…", style="dim"), Text(f"{earlier:,} sources above", style="dim"))
    for source in sources[earlier:]:
        lines: list[RenderableType] = []
        shown = None if source.url is None else terminal_text(source.url)
        link = None if shown is None or link_target(shown) is None else shown
        url = None if shown is None else Text(  # (a Style: a URL may hold spaces)
            shown, Style(color="blue", underline=True, link=link), overflow="fold")
        if source.title is not None:
            lines.append(Text(terminal_text(source.title)))
        if url is not None:  # (with no title: the URL alone, once)
            lines.append(url)
        snippet = snippet_text(source)
        if snippet:
            lines.append(Text(terminal_text(f"“{snippet}”"), style="dim"))
        grid.add_row(Text(f"[{source.number}]", style="bold"), Group(*lines))
    return Group(Text("Sources", style="bold"), grid)


class _SafeMarkdown(Markdown):
    """Markdown whose parsed text holds no control character (an entity such as ``&#x202e;``
    is decoded by the parser: escaped again here), and whose links lead only to ``http``,
    ``https`` or ``mailto`` (any other link is its text alone, an image its name)."""

    def __init__(self, markup: str) -> None:
        super().__init__(markup)
        unsafe = False  # (in a link that may not be one: its text alone)
        for token in self._flatten_tokens(self.parsed):
            _safe_token(token)
            if token.type == "link_open":
                unsafe = not token.attrs["href"]
            if unsafe and token.type in ("link_open", "link_close"):
                token.type = "text"


def _safe_token(token: Token) -> None:
    token.content = terminal_text(token.content)
    token.info = terminal_text(token.info)
    for child in token.children or ():
        _safe_token(child)
    for name in ("href", "src"):
        target = token.attrs.get(name)
        if target is not None:
            target = terminal_text(str(target))
            token.attrs[name] = target if link_target(target) is not None else ""


class _Footer:
    """The footer, broken between its parts to the console's width (never inside one)."""

    def __init__(self, response: Response, final: bool, notes: tuple[str, ...]) -> None:
        self.response = response
        self.final = final
        self.notes = notes

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        footer = footer_text(self.response, self.final, options.max_width, self.notes)
        yield Text(terminal_text(footer), style="dim")


def _thinking(block: ThinkingBlock, streaming: bool) -> list[RenderableType]:
    parts: list[RenderableType] = [
        Text(f"▸ {thinking_title(block, streaming)}", style="dim italic")
    ]
    if streaming and block.text.strip():
        newest = terminal_text(_newest(block.text.strip()))  # (its last lines only)
        parts.append(_Tail(Text(newest, style="dim"), THINKING_TAIL))
    return parts
