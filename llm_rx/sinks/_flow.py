"""An answer's flow: adjacent text blocks read as one text, and a cut frame's Markdown closed.

A reply's text often arrives as several blocks of one answer (a cited stretch per block, a
signed part per block). Shown block by block, each becomes a paragraph of its own, and the
"." between two cited stretches stands alone on a line. The displays read them as one text.

A frame taken mid-stream (or a reply cut short) can end inside a code fence or inside
``**bold``: whatever the display appends after it (a tool call, the interrupted notice, the
footer) would then render inside the code box, or the ``**`` would show as typed. The
rendered Markdown is closed; the text itself is never changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..response import Block, TextBlock
from ..wire.citations import Citation

__all__ = ["TextRun", "closed_markdown", "text_runs"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_INLINE_CODE = re.compile(r"(`+)(?:.|\n)*?(?<!`)\1(?!`)")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class TextRun:
    """Adjacent text blocks of one answer, read as one text (``blocks`` in order), with the
    citations of each block (``citations[i]`` are ``blocks[i]``'s; ``()`` when not given)."""

    blocks: tuple[TextBlock, ...]
    citations: tuple[tuple[Citation, ...], ...] = ()

    @property
    def text(self) -> str:
        return "".join(block.text for block in self.blocks)


def text_runs(
    content: Sequence[Block], cited: Sequence[tuple[Citation, ...]] | None = None
) -> list[TextRun | Block]:
    """The content with each stretch of adjacent text blocks gathered into one run (``cited``:
    the citations of each block of ``content``, carried along on the runs)."""
    out: list[TextRun | Block] = []
    run: list[TextBlock] = []  # (the run being gathered, and its citations: made once)
    found: list[tuple[Citation, ...]] = []
    for position, block in enumerate(content):
        if isinstance(block, TextBlock):
            run.append(block)
            if cited is not None:
                found.append(cited[position])
            continue
        if run:
            out.append(TextRun(tuple(run), tuple(found)))
            run, found = [], []
        out.append(block)
    if run:
        out.append(TextRun(tuple(run), tuple(found)))
    return out


def closed_markdown(text: str) -> str:
    """``text`` as Markdown that ends closed: an open code fence gets its closing fence, an
    open ``**`` in the last paragraph its closing ``**`` (a bare opener is left out)."""
    fence, prose = _open_fence(text)
    if fence is not None:
        return text + ("" if text.endswith("\n") else "\n") + fence
    return _closed_bold(text, prose)


def _open_fence(text: str) -> tuple[str | None, str]:
    """The fence still open at the end of ``text`` (``None``: all closed), and the text of
    the last stretch outside any fence (where an open ``**`` can still be)."""
    opened: str | None = None
    prose_start = 0
    offset = 0
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if match is not None:
            marker = match.group(1)
            if opened is None:
                if not (marker[0] == "`" and "`" in match.group(2)):  # (an info string
                    opened = marker  # with a backtick is inline code, not a fence)
            elif _closes(opened, marker, match.group(2)):
                opened = None
                prose_start = offset + len(line) + 1
        offset += len(line) + 1
    return opened, text[prose_start:]


def _closes(opened: str, marker: str, rest: str) -> bool:
    return marker[0] == opened[0] and len(marker) >= len(opened) and not rest.strip()


def _closed_bold(text: str, prose: str) -> str:
    paragraph = _BLANK_LINE.split(_INLINE_CODE.sub(_blanked, prose))[-1]
    if paragraph.count("**") % 2 == 0:
        return text
    opener = len(text) - len(paragraph) + paragraph.rfind("**")
    rest = text[opener + 2:]
    if not rest.strip():
        return text[:opener].rstrip(" ")  # (``**`` with nothing after it yet)
    return text.rstrip() + "**"


def _blanked(match: re.Match[str]) -> str:
    """Inline code kept as long as it was (offsets unchanged) with no ``*`` inside."""
    return re.sub(r"[^\n]", " ", match.group(0))
