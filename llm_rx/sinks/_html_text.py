r"""The notebook rule: what a provider wrote reaches the Markdown output as text, never as HTML.

A notebook trusts the outputs its kernel produces (JupyterLab and Notebook 7 render their
HTML, scripts' event handlers included), so every string that came from the wire goes
through one of these before it joins ``jupyter_display()``'s ``text/markdown``:

* :func:`markdown_text` for text the model wrote as Markdown (the answer, thinking, a
  refusal): its formatting renders (bold, code, lists, tables, headings, links), and
  - no ``<`` that could open an HTML element, a comment or an autolink stays raw (it is
    written ``&lt;``, which reads ``<``); in a code span that holds one, the span is
    written as ``<code>`` with its text escaped (it looks the same);
  - a link's target (``[text](target)``, a reference ``[label]: target``) is kept only
    when it is ``http``, ``https`` or ``mailto``; any other link shows as the text it is;
  - an image (``![alt](url)``) shows as a link to it, never loaded by the page (an image
    a reply names could carry what the page shows to its server);
  - a fenced code block opened at the start of a line is left as it is (code is text to
    the renderer); one opened further in (inside a list) has its ``<`` escaped like prose.
* :func:`literal_text` for text shown as it is (a tool's name, a title, a URL, a snippet,
  an error message, the model id): on one line, no character of it read as Markdown or
  HTML (``&``, ``<``, ``>``, brackets, backslash and backtick written as entities; so are
  a ``*``, ``_`` or ``~`` that could open or close emphasis, and a list's or a heading's
  marker at its start).
* :func:`code_text` for a name shown as code, :func:`code_block` for text shown as a block
  of code (a tool's arguments, a JSON answer, a server tool's input), :func:`link_target`
  for a URL as a link.

All drop what the terminal rule drops (control characters, escape sequences, bidirectional
overrides: :mod:`._term_text`), which no page needs either.

No math either: a notebook's renderer reads math before the Markdown (nbconvert's mistune,
JupyterLab: a ``$$`` in a tool's name and one in its arguments would take the code block's
end into the math, and what follows out of the code) or after it, in the page's text
(MathJax, where TeX's ``\href`` makes a link). So no dollar and no backslash that could
delimit math (``\(``, ``\[``, ``\\``, ``\$``, ``\begin{``, ``\end{``, ``\ref{``; nor one
written as a character reference, ``&#36;``, which the Markdown decodes) is left in it:
each is written as a character reference inside an element of its own
(``<span>&#36;</span>``: the source holds no delimiter, and the page's text none a math
reader joins), a Markdown escape as the character it escapes (``\(`` as ``&#40;``), in a
link's target percent-encoded; a code block or span holding one is written as HTML
(``<pre><code>``, ``<code>``) with its text escaped. The math a reply writes shows as the
text it is, never typeset.

Escaping never relies on reading the Markdown the way the renderer does: where the reading
could differ (is this a code span?), what is kept raw holds nothing that escaping would
have changed, so either reading renders no markup from the reply.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from html import unescape
from itertools import accumulate, pairwise
from urllib.parse import quote

from .._links import LINK_SCHEMES, safe_link
from ._term_text import terminal_text

__all__ = ["code_block", "code_text", "href", "link_target", "literal_text", "markdown_text"]

#: The link targets a reply may give (the one rule, ``llm_rx._links``): anything else is
#: shown as text.
SCHEMES = tuple(sorted(f"{scheme}:" for scheme in LINK_SCHEMES))
#: What stays as it is in a link's target: the URL's own delimiters (a dollar is
#: percent-encoded: it could delimit math) and its ``%`` escapes.
_URL_SAFE = "!#%&'()*+,-./:;=?@[]_~"

#: A dollar and a backslash as text: a character reference (no reader of the Markdown's
#: source takes it for a delimiter) in an element of its own (no math reader of the page
#: joins it to the text around it).
_DOLLAR = "<span>&#36;</span>"
_BACKSLASH = "<span>&#92;</span>"
#: What a math renderer could read as a delimiter: a dollar; a backslash before a backslash,
#: a dollar, a parenthesis or a bracket; a backslash before an environment or a reference.
_MATH = re.compile(r"\$|\\(?:[\\$()\[\]]|(?=begin|end|ref|eqref))")
#: Each of them in prose: the character a Markdown escape escapes, or the character itself.
_MATH_TEXT = {"$": _DOLLAR, "\\$": _DOLLAR, "\\\\": _BACKSLASH, "\\": _BACKSLASH,
              "\\(": "&#40;", "\\)": "&#41;", "\\[": "&#91;", "\\]": "&#93;"}

_LITERAL = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "&#91;",
                          "]": "&#93;", "\\": _BACKSLASH, "`": "&#96;", "$": _DOLLAR})
#: An emphasis or strikethrough character that could open or close one (group 1): not one
#: with white space (or an end) on both sides, nor ``_`` inside a word.
_EMPHASIS = re.compile(r"(?<!\S)[*_~](?!\S)|(?<=[^\W_])_(?=[^\W_])|([*_~])")
#: What makes a line a heading or a list item, or a heading's underline, at its start.
_LINE_START = re.compile(r"[-+=*#]|\d{1,9}(?=[.)])")
#: A code block's text in ``<pre>``: no element, no line that could open a fence or close
#: the display's bold, no math.
_PRE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "`": "&#96;", "~": "&#126;",
                      "*": "&#42;", "\\": _BACKSLASH, "$": _DOLLAR})
_SPACE = re.compile(r"\s+")
_NAME = re.compile(r"[\w.:/@+-]+")

#: A fence that opens at the very start of a line (no container can hold it).
_OPENER = re.compile(r"(`{3,}|~{3,})([^\n]*)")
_INFO = re.compile(r"[\w+#.-]*")
#: A dollar or a backslash written as a character reference, which the Markdown decodes
#: into the page's text (where a math reader would find it).
_MATH_ENTITY = r"&(?:#0*(?:36|92)|#[xX]0*(?:24|5[cC])|dollar|bsol);"
#: What, outside code, could become markup: a tag's or autolink's ``<``, a link's ``](``,
#: a reference's ``]:``, an image's ``![``; and math (``_MATH``, ``_MATH_ENTITY``).
_MARKUP = re.compile(r"<(?=[A-Za-z/!?])|\]\(|\]:|!\[|" + _MATH.pattern + "|" + _MATH_ENTITY)
_BACKTICKS = re.compile(r"`+")
_BLANK = re.compile(r"\n[ \t]*\n")
#: Before a link's target: blanks, at most one line end, then an optional ``<``.
_BEFORE_TARGET = re.compile(r"[ \t]*(?:\n[ \t]*)?<?")


def literal_text(text: str) -> str:
    """``text`` on one line (runs of white space as one space), to be read as it is,
    wherever it stands (at a line's start too: no list item, no heading)."""
    literal = _SPACE.sub(" ", terminal_text(text)).strip().translate(_LITERAL)
    literal = _EMPHASIS.sub(_unemphasised, literal)  # (what translate wrote is no letter)
    start = _LINE_START.match(literal)
    if start is None:
        return literal
    end = start.end()
    if start.group(0)[0].isdigit():  # (``1.``: the dot)
        return f"{literal[:end]}&#{ord(literal[end])};{literal[end + 1:]}"
    return f"&#{ord(literal[0])};{literal[1:]}"


def _unemphasised(match: re.Match[str]) -> str:
    found = match.group(1)
    return match.group(0) if found is None else f"&#{ord(found)};"


def code_block(text: str, info: str = "") -> str:
    """``text`` as a block of code: fenced (``info``: the language), with a fence longer than
    any run of backticks inside; as HTML (``<pre><code>``, its text escaped) when it holds
    what a math reader could take for a delimiter."""
    text = terminal_text(text)
    if _MATH.search(text):
        return _pre(text)
    fence = _own_fence(text)
    return f"{fence}{info}\n{text}\n{fence}"


def code_text(text: str) -> str:
    """``text`` as inline code: a plain name in backticks, anything else as ``<code>``."""
    if _NAME.fullmatch(text):
        return f"`{text}`"
    return f"<code>{literal_text(text)}</code>"


def link_target(url: str) -> str | None:
    """``url`` as a link's target (:func:`href`) when it may be one (``http``, ``https``,
    ``mailto``); ``None`` for any other URL (shown as text)."""
    safe = safe_link(url.strip())
    return None if safe is None else href(safe)


def href(url: str) -> str:
    """``url`` as a link's target: whole, with what may not stand in one percent-encoded
    (a space, ``<``, ``>``, a quote, non-ASCII); its own ``%`` escapes kept as they are."""
    return quote(url.strip(), safe=_URL_SAFE)


def markdown_text(text: str, cuts: Sequence[int] = (), inline: bool = False) -> list[str]:
    """``text`` (Markdown) made safe, cut into ``len(cuts) + 1`` pieces at the offsets
    ``cuts`` (ascending: where the caller adds its own markup, a citation's marker). A cut
    that falls inside code or at the start of a line moves back to the last place where
    markup can go (else to the end). ``inline``: the text continues a line (its first line
    cannot open a code block)."""
    bounds = [0, *(min(max(cut, 0), len(text)) for cut in cuts), len(text)]
    parts = [terminal_text(text[start:end]) for start, end in pairwise(bounds)]
    text = "".join(parts)  # (no control character either: see the terminal rule)
    cuts = list(accumulate(len(part) for part in parts[:-1]))
    # (prose with nothing to escape and no cut to place needs no reading of its code spans)
    edits, code = _edits(text, inline, bool(cuts) or _MARKUP.search(text) is not None)
    starts = [start for start, _ in code]
    places = [_place(cut, text, code, starts) for cut in cuts]
    pieces: list[str] = []
    out: list[str] = []
    at = 0
    edit = 0
    for cut in [*places, len(text)]:
        while edit < len(edits) and edits[edit][0] < cut:
            start, end, replacement = edits[edit]
            out += [text[at:start], replacement]
            at = end
            edit += 1
        if cut > at:
            out.append(text[at:cut])
            at = cut
        pieces.append("".join(out))
        out = []
    pieces[-1] += "".join(replacement for _, _, replacement in edits[edit:])  # (at the end)
    return pieces


def _place(cut: int, text: str, code: list[tuple[int, int]], starts: list[int]) -> int:
    """Where a cut's markup can go: not in code, not at a line's start (``starts``: where
    each stretch of ``code`` starts, made once for all the cuts)."""
    position = min(max(cut, 0), len(text))
    while True:
        found = bisect_left(starts, position) - 1  # (the last stretch starting before)
        if found >= 0 and position < code[found][1]:
            position = code[found][0]
        elif position > 0 and text[position - 1] == "\n":
            position -= 1
        else:
            return position if position > 0 or not text else len(text)


def _edits(
    text: str, inline: bool, prose: bool = True
) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]]]:
    """The replacements that make ``text`` safe (``(start, end, new)``, in order), and the
    stretches of code (fences and code spans) where no markup may be added; ``prose``
    false: the fences only (prose known to need no edit, and no cut to place).

    A fenced block is written again with fences of its own (backticks, longer than any run
    of backticks inside, the info string's first word only), closed where it was closed (or
    at the end): renderers that differ on what closes a fence (CommonMark, marked's mixed
    fence characters) all read the block where it is read here."""
    edits: list[tuple[int, int, str]] = []
    code: list[tuple[int, int]] = []
    prose_start = 0
    position = 0
    opened: str | None = None  # the marker of the fence we are in
    fence_start = opener_end = 0
    info = ""
    for line in text.split("\n"):
        end = position + len(line)
        if opened is not None:
            stripped = line.lstrip(" ")
            if (len(line) - len(stripped) <= 3 and stripped.startswith(opened[0] * len(opened))
                    and not stripped.lstrip(opened[0]).strip()):
                if _MATH.search(text, opener_end, position):  # (a delimiter: as HTML)
                    edits.append((fence_start, end, _pre(text[opener_end + 1:position - 1])))
                else:
                    fence = _own_fence(text[opener_end:position])
                    edits += [(fence_start, opener_end, fence + info), (position, end, fence)]
                opened = None
                code.append((fence_start, end + 1))  # (its line's end too)
                prose_start = end + 1
        elif not (inline and position == 0):
            match = _OPENER.match(line)
            if match is not None and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                if prose:
                    _prose(text, prose_start, position, edits, code)
                opened, fence_start, opener_end = match.group(1), position, end
                safe = _INFO.match(match.group(2).strip())
                info = safe.group(0) if safe is not None else ""
        position = end + 1
    if opened is not None:  # (open to the end: closed here, as the display closes it)
        if _MATH.search(text, opener_end):
            content = text[opener_end + 1:]
            edits.append((fence_start, len(text), _pre(content.removesuffix("\n"))))
        else:
            fence = _own_fence(text[opener_end:])
            edits += [(fence_start, opener_end, fence + info),
                      (len(text), len(text), ("" if text.endswith("\n") else "\n") + fence)]
        code.append((fence_start, len(text) + 1))
    elif prose:
        _prose(text, prose_start, len(text), edits, code)
    return edits, code


def _pre(code: str) -> str:
    """``code`` as an HTML block (CommonMark's kind 1: it ends only at ``</pre>``, blank
    lines and all)."""
    return f"<pre><code>{code.translate(_PRE)}</code></pre>"


def _own_fence(content: str) -> str:
    """Backticks, more than any run of them in ``content`` (so no line of it closes them)."""
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    return "`" * max(3, longest + 1)


def _prose(text: str, start: int, end: int, edits: list[tuple[int, int, str]],
           code: list[tuple[int, int]]) -> None:
    """The edits of the stretch ``text[start:end]`` outside fences: code spans, then markup."""
    at = start
    for span_start, span_end in _code_spans(text, start, end):
        _escape(text, at, span_start, edits)
        content = text[span_start:span_end]
        inner: list[tuple[int, int, str]] = []
        _escape(content, 0, len(content), inner)
        if inner:  # (a span whose text escaping would change: written as <code>)
            body = content.strip("`")
            edits.append((span_start, span_end, f"<code>{literal_text(body)}</code>"))
        code.append((span_start, span_end))
        at = span_end
    _escape(text, at, end, edits)


def _code_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The code spans of ``text[start:end]``: a run of backticks (not escaped) up to the
    next run as long, within one paragraph."""
    spans: list[tuple[int, int]] = []
    runs = list(_BACKTICKS.finditer(text, start, end))
    by_width: dict[int, list[int]] = {}
    for position, run in enumerate(runs):
        by_width.setdefault(len(run.group(0)), []).append(position)
    blanks = [blank.start() for blank in _BLANK.finditer(text, start, end)]
    index = 0
    while index < len(runs):
        opener = runs[index]
        escaped = _backslashes(text, opener.start()) % 2 == 1
        width = len(opener.group(0)) - (1 if escaped else 0)
        begin = opener.start() + (1 if escaped else 0)
        same = by_width.get(width, [])
        after = bisect_right(same, index)
        closer = same[after] if width and after < len(same) else None
        if closer is None or bisect_left(blanks, begin) < bisect_left(
                blanks, runs[closer].start()):  # (none, or a paragraph's end between)
            index += 1
            continue
        spans.append((begin, runs[closer].end()))
        index = closer + 1
    return spans


def _backslashes(text: str, position: int) -> int:
    count = 0
    while position - count > 0 and text[position - count - 1] == "\\":
        count += 1
    return count


def _escape(text: str, start: int, end: int, edits: list[tuple[int, int, str]]) -> None:
    """The edits of prose ``text[start:end]`` (a link's target is read past ``end``)."""
    target_end = start  # (where the target of the last link kept ends)
    for match in _MARKUP.finditer(text, start, end):
        found = match.group(0)
        at = match.start()
        if found == "<":
            edits.append((at, at + 1, "&lt;"))
        elif found == "![":
            edits.append((at, at + 1, "&#33;"))
        elif found in ("](", "]:"):
            if not _allowed(text, match.end()):
                edits.append((at + 1, at + 2, "&#40;" if found == "](" else "&#58;"))
            elif at >= target_end:
                target_end = _target_end(text, match.end())
        else:
            edits.append((at, match.end(), _math_text(found, at < target_end)))


def _math_text(found: str, in_target: bool) -> str:
    """What a dollar, a backslash, a Markdown escape of one, a parenthesis or a bracket, or a
    reference to one, is written as: in a link's target, percent-encoded."""
    if found.startswith("&"):
        found = unescape(found)  # ("$" or "\\")
    if in_target:
        return found.replace("\\", "%5C").replace("$", "%24")
    return _MATH_TEXT[found]


def _target_end(text: str, position: int) -> int:
    """Where the link target starting at ``position`` ends, read as CommonMark reads one:
    at a blank, or at a ``)`` that closes none opened in it. (Only the form a dollar or a
    backslash in it takes depends on this reading: percent-encoded or as text.)"""
    lead = _BEFORE_TARGET.match(text, position)
    at = lead.end() if lead is not None else position
    depth = 0
    while at < len(text):
        char = text[at]
        if char in " \t\n" or (char == ")" and depth == 0):
            break
        depth += (char == "(") - (char == ")")
        at += 2 if char == "\\" else 1
    return at


def _allowed(text: str, position: int) -> bool:
    """Whether the link target starting at ``position`` is ``http``, ``https``, ``mailto``."""
    lead = _BEFORE_TARGET.match(text, position)
    at = lead.end() if lead is not None else position
    return text[at:at + 8].lower().startswith(SCHEMES)
