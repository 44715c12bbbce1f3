"""Links in a rendered frame, as a reader's browser follows them: the Markdown link targets
and the HTML ``href``\\ s, percent-decoded, to compare with the URLs the wire cited."""

from __future__ import annotations

import html
import re
from urllib.parse import unquote

#: A Markdown link's target in angle brackets (as the notebook frame writes each source).
_TARGET = re.compile(r"\]\(<([^<>\n]*)>\)")
_HREF = re.compile(r'href="([^"]*)"')
#: What a URL in a link's target must not hold raw: a browser or a Markdown renderer would
#: cut the link there or read it as something else.
_UNSAFE = re.compile(r"[\s<>\"`{}|\\^]|[^\x00-\x7f]")


def markdown_targets(markdown: str) -> list[str]:
    """The targets of the ``[text](<target>)`` links in ``markdown``, as written."""
    return _TARGET.findall(markdown)


def html_targets(rendered: str) -> list[str]:
    """The ``href`` of each link in ``rendered`` HTML, unescaped."""
    return [html.unescape(target) for target in _HREF.findall(rendered)]


def same_url(target: str, url: str) -> bool:
    """``target`` leads where ``url`` does (both percent-decoded; the wire's may hold raw
    spaces, the link's holds them encoded)."""
    return unquote(target) == unquote(url.strip())


def whole(target: str) -> bool:
    """A target with nothing raw in it that would cut the link short."""
    return _UNSAFE.search(target) is None
