"""Which URLs from a provider may become links: the one rule every medium uses (a UI's
sources, HTML, Markdown, a terminal's hyperlinks).

A provider's URL is data: a citation can carry ``javascript:alert(1)`` or a ``data:`` page,
and a UI that renders it as a link runs it on a click. Only ``http``, ``https`` and
``mailto`` URLs are links; anything else (another scheme, a relative or scheme-less URL, a
URL with control characters a browser would strip from its scheme) is not, and
the medium shows it as text or not at all.
"""

from __future__ import annotations

import re

__all__ = ["LINK_SCHEMES", "safe_link"]

#: the URL schemes that may be links
LINK_SCHEMES = frozenset({"http", "https", "mailto"})

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_HIDDEN = re.compile(r"[\x00-\x1f\x7f]")  # (control characters: a browser drops them from a
# scheme, so ``java\tscript:`` would run; a leading space fails the scheme's match)


def safe_link(url: str) -> str | None:
    """``url`` when it may be a link (an ``http``, ``https`` or ``mailto`` URL), else ``None``.

    Args:
        url: A URL as a provider gave it.

    Returns:
        The same URL, unchanged, or ``None`` when it must not become a link.
    """
    if not isinstance(url, str) or _HIDDEN.search(url):
        return None
    scheme = _SCHEME.match(url)
    if scheme is None or scheme.group(1).lower() not in LINK_SCHEMES:
        return None
    return url
