"""What a reply cannot do: hostile replies (tests/sinks/hostile.py) through every display.

The notebook's Markdown, every frame of it, rendered by markdown-it with HTML enabled (as a
notebook renders a trusted output): no element or attribute from the reply, no link but
``http``, ``https``, ``mailto``. The terminal's output, plain and rich: no control character
from the reply, and of escape sequences only those the display writes itself (colours, its
own cursor moves, links to ``http(s)`` URLs).
"""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt
from reactivex.testing import TestScheduler
from reactivex.testing.coldobservable import ColdObservable
from rich.console import Console

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import Event
from llm_rx.sinks import PlainPrinter, jupyter_display, terminal_display
from llm_rx.sinks._html_text import code_text, literal_text, markdown_text
from llm_rx.sinks._jupyter import render_frame
from llm_rx.sinks._term_text import terminal_text

from .hostile import BODIES, END, EVERYTHING, HTML, MARKDOWN, MATH, TERMINAL
from .test_jupyter import FakeDisplay
from .timeline import cold_timeline

#: The elements a frame may hold: Markdown's, and the display's own.
ELEMENTS = {"p", "strong", "em", "code", "pre", "a", "ul", "ol", "li", "blockquote", "hr",
            "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
            "br", "details", "summary", "div", "sub", "sup", "del", "s", "span"}
#: The attributes, each with what its value may be.
ATTRIBUTES = {"href": re.compile(r"(https?|mailto):", re.IGNORECASE),
              "style": re.compile(r"margin: 0 0 [0-9.]+em|text-align:(left|center|right)"),
              "class": re.compile(r"language-[\w+#.-]+"),
              "title": re.compile(r".*")}
#: What a terminal may receive that starts with ESC: the display's own colours, cursor
#: moves and line erases (rich ``Live``), and OSC 8 links to http(s) URLs.
OWN_SEQUENCES = re.compile(
    r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[[0-9]*[AK]|\x1b\[2K|\r"
    r"|\x1b\]8;id=[0-9]+;https?://[^\x1b\x07]*\x1b\\|\x1b\]8;;\x1b\\")
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


#: What a math typesetter (MathJax 2's tex2jax, MathJax 3's FindTeX) reads as math in one
#: string of a page's text: two dollars, ``\(``, ``\[``, an environment or a reference.
MATH_DELIMITER = re.compile(r"\$.*\$|\\[()\[\]]|\\(?:begin|end|ref|eqref)\{", re.DOTALL)


class MathText(HTMLParser):
    """A page's text as a math typesetter reads it: one string per run of text that no
    element breaks (``br`` and ``wbr`` do not; a comment is no text), outside ``pre``,
    ``code``, ``script``, ``style`` and ``textarea``, which it skips."""

    SKIPPED = frozenset({"pre", "code", "script", "style", "textarea"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.strings: list[str] = []
        self._now: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("br", "wbr"):
            self._flush()
            self._skipping += tag in self.SKIPPED

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("br", "wbr"):
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("br", "wbr"):
            self._flush()
            self._skipping -= tag in self.SKIPPED and self._skipping > 0

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self._now.append(data)

    def close(self) -> None:
        super().close()
        self._flush()

    def _flush(self) -> None:
        if self._now:
            self.strings.append("".join(self._now))
            self._now = []


def math_read(page: str) -> list[str]:
    """The strings of ``page`` in which a math typesetter would find math."""
    reader = MathText()
    reader.feed(page)
    reader.close()
    return [text for text in reader.strings if MATH_DELIMITER.search(text)]


class Elements(HTMLParser):
    """Every element and attribute of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def _check_page(markdown: str) -> None:
    """``markdown`` rendered with HTML on: only the allowed elements and attributes."""
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    parser = Elements()
    parser.feed(page)
    for tag, attrs in parser.found:
        assert tag in ELEMENTS, (tag, page)
        for name, value in attrs:
            assert name in ATTRIBUTES, (tag, name, value)
            assert ATTRIBUTES[name].fullmatch(value or "") or (name == "href" and \
                ATTRIBUTES[name].match(value or "")), (tag, name, value)
    assert UNSAFE.search(page) is None  # (nor any control character)


def _timeline(scheduler: TestScheduler, body: bytes) -> ColdObservable[Event]:
    """``body``'s events one per tick, then its end (its error, for a failed reply)."""
    events: list[Event] = []
    errors: list[Exception] = []
    llm_rx.from_bytes(body).subscribe(events.append, errors.append)
    return cold_timeline(scheduler, events, error=errors[0] if errors else None)


def _frames(body: bytes) -> list[str]:
    """Every frame jupyter_display() shows of ``body``, one event per tick."""
    scheduler = TestScheduler()
    display = FakeDisplay()
    source = _timeline(scheduler, body)
    scheduler.start(lambda: source.pipe(
        jupyter_display(display=display, refresh_per_second=1.0), lxo.to_response()))
    (handle,) = display.handles
    return [frame._repr_mimebundle_()["text/markdown"] for frame in handle.frames]


@pytest.mark.parametrize("name", list(BODIES))
def test_hostile_reply_renders_no_markup_in_the_notebook(name: str) -> None:
    frames = _frames(BODIES[name]())
    assert len(frames) > 3
    for markdown in frames:
        _check_page(markdown)
    assert END in frames[-1]


@pytest.mark.parametrize("name", list(BODIES))
def test_hostile_reply_plain_fallback_has_no_control_character(name: str) -> None:
    response = llm_rx.reassemble(BODIES[name]())
    assert UNSAFE.search(render_frame(response, final=True).plain) is None


#: The classes nbconvert's Markdown renderer gives: Pygments' in a highlighted code block.
_MISTUNE_CLASS = re.compile(r"highlight|[a-z][a-z0-9]{0,2}|anchor-link")


def _check_nbconvert_page(markdown: str) -> None:
    """``markdown`` rendered by nbconvert's Markdown renderer (mistune with math read
    first, raw HTML kept: what ``jupyter nbconvert --to html`` does with a notebook's
    Markdown output): only the allowed elements and attributes, and no math in the text."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    page = markdown2html_mistune(markdown)
    parser = Elements()
    parser.feed(page)
    for tag, attrs in parser.found:
        assert tag in ELEMENTS, (tag, page)
        for name, value in attrs:
            if name == "class":
                assert _MISTUNE_CLASS.fullmatch(value or ""), (tag, value)
            elif name == "id":  # (a heading's, for its anchor)
                assert tag.startswith("h"), (tag, value)
            elif name == "href":
                assert re.match(r"(https?:|mailto:|#)", value or "", re.IGNORECASE), value
            else:
                assert name in ATTRIBUTES, (tag, name, value)
                assert ATTRIBUTES[name].fullmatch(value or ""), (tag, name, value)
    assert math_read(page) == [], math_read(page)[:3]


@pytest.mark.parametrize("name", list(BODIES))
def test_hostile_reply_renders_no_markup_and_no_math_in_nbconvert(name: str) -> None:
    # bug: nbconvert reads $$ ... $$ before the Markdown: a tool name's $$ and one in its
    # arguments carried the code block's end out of the code, and a javascript: link after
    # it became live; and math left in the page's text is typeset (TeX's \href: a link)
    pytest.importorskip("nbconvert")
    for markdown in _frames(BODIES[name]()):
        _check_nbconvert_page(markdown)


def test_hostile_reply_each_piece_alone_renders_as_text() -> None:
    for piece in (*HTML, *MARKDOWN, *MATH, EVERYTHING):
        _check_page("".join(markdown_text(piece)))
        _check_page(literal_text(piece))
        _check_page("**Tool call** " + literal_text(piece))
        _check_nbconvert_page("".join(markdown_text(piece)))
        _check_nbconvert_page(literal_text(piece))


def test_literal_text_makes_no_element_wherever_it_stands() -> None:
    # bug: a tool's name, a title or a snippet with *stars*, _underscores_ or ~~tildes~~
    # rendered as emphasis; at a line's start (a server tool's result), "1. " as a list
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    markdown_it = MarkdownIt("commonmark", {"html": True}).enable("strikethrough")
    shapes = ("*em* _em_ ~~del~~ **strong** # heading", "1. item", "2) item", "- item",
              "+ item", "= underline", "# heading")
    for piece in (*HTML, *MARKDOWN, *MATH, *shapes, EVERYTHING):
        for markdown in (literal_text(piece), f"line\n{literal_text(piece)}",
                         f"> {literal_text(piece)}  ", f"**Tool call** {code_text(piece)}"):
            for page in (markdown_it.render(markdown), markdown2html_mistune(markdown)):
                parser = Elements()
                parser.feed(page)
                made = {tag for tag, _ in parser.found} - {"p", "span", "code", "blockquote"}
                assert made <= {"strong", "a"}, (piece, page)
                assert page.count("<strong>") <= 1, (piece, page)  # (the display's own)
                for tag, attrs in parser.found:  # (a bare URL a renderer links: http(s))
                    assert tag != "a" or re.match(r"https?://", dict(attrs)["href"] or "")


def test_markdown_of_a_benign_answer_is_kept() -> None:
    benign = ("# Title\n\n**bold** and *em*, `code`, a < b and a<=b, [a link](https://x.org)"
              " and <mailto:a@b.org>?\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
              "```html\n<div class=\"x\">fenced</div>\n```\n")
    (escaped,) = markdown_text(benign.replace(" and <mailto:a@b.org>?", ""))
    assert escaped == benign.replace(" and <mailto:a@b.org>?", "")


def test_code_span_with_markup_keeps_looking_like_code() -> None:
    (escaped,) = markdown_text("use the `<div>` tag")
    page = MarkdownIt("commonmark", {"html": True}).render(escaped)
    assert page == "<p>use the <code>&lt;div&gt;</code> tag</p>\n"


def test_link_targets_only_http_https_mailto() -> None:
    for target in ("javascript:alert(1)", "JaVaScRiPt:x", "data:text/html,x", "file:///etc",
                   "vbscript:x", "ssh://host", "/relative", "#anchor", "java&#115;cript:x"):
        (escaped,) = markdown_text(f"[a]({target}) [b][r]\n\n[r]: {target}\n")
        page = MarkdownIt("commonmark", {"html": True}).render(escaped)
        assert "<a " not in page, (target, page)
    (escaped,) = markdown_text("[a](https://x.org) [b](mailto:a@b.org) [c](http://y.org)")
    page = MarkdownIt("commonmark").render(escaped)
    assert page.count("<a href") == 3


def test_markers_never_land_in_code_or_open_a_line() -> None:
    text = "See\n```\n<b>code</b>\n```\nafter"
    pieces = markdown_text(text, [4, 9, 21])
    joined = "[1]".join(pieces)
    assert "```\n<b>code</b>\n```" in joined  # the block untouched
    assert all(not line.startswith("[1]") for line in joined.split("\n"))


@pytest.mark.parametrize("name", list(BODIES))
def test_hostile_reply_plain_printer_writes_no_control_character(name: str) -> None:
    out = io.StringIO()
    printer = PlainPrinter(out)
    llm_rx.from_bytes(BODIES[name]()).subscribe(
        printer.on_next, printer.on_error, printer.on_completed)
    assert UNSAFE.search(out.getvalue()) is None
    assert END in out.getvalue()


@pytest.mark.parametrize("name", list(BODIES))
def test_hostile_reply_rich_view_writes_only_its_own_sequences(name: str) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, force_interactive=True, width=100,
                      height=30, color_system="standard", _environ={"TERM": "xterm"})
    scheduler = TestScheduler()
    source = _timeline(scheduler, BODIES[name]())
    scheduler.start(lambda: source.pipe(
        terminal_display(console, refresh_per_second=1.0), lxo.to_response()))
    written = out.getvalue()
    rest = OWN_SEQUENCES.sub("", written)
    assert UNSAFE.search(rest) is None, repr(UNSAFE.search(rest))
    assert END in written


def test_terminal_text_drops_every_sequence_whole() -> None:
    for sequence in TERMINAL:
        assert UNSAFE.search(terminal_text(sequence)) is None
        assert "PWNED" not in terminal_text(sequence)
    assert terminal_text("a\tb\nc") == "a\tb\nc"
    assert terminal_text("\x1b]0;title without its end\nnext line") == "\nnext line"
    assert terminal_text("\x1b[31mred\x1b[0m") == "red"


def test_fences_are_rewritten_so_that_no_renderer_closes_them_elsewhere() -> None:
    # marked (JupyterLab) closes a ``` fence on a line "```~"; CommonMark does not: a block
    # read as code here and as closed there would leave the HTML after it raw
    text = "```html onerror=x\ncode\n```~\n<img src=x onerror=alert(1)>\n```\nafter <b>"
    (escaped,) = markdown_text(text)
    assert escaped == ("````html\ncode\n```~\n<img src=x onerror=alert(1)>\n````\n"
                       "after &lt;b>")  # (no line inside starts with the 4-backtick fence)
    (unclosed,) = markdown_text("```\n<b>open")
    assert unclosed == "```\n<b>open\n```"
    _check_page(escaped)
