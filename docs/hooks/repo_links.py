"""A MkDocs hook: links to files of the repository (``[text](repo:tests/test_x.py)``).

Each file so linked is published with the site under ``source/`` and the link points at
that copy, so it works in a built site with no host behind it; a link to a path that is
not in the checkout fails the build.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

LINK = re.compile(r"\]\(repo:([^)\s#]+)(#[^)\s]*)?\)")
PUBLISHED = "source"


def _root(config: Any) -> Path:
    return Path(config.config_file_path).resolve().parent


def on_files(files: Files, config: Any) -> Files:
    """Add every linked repository file to the site's files."""
    root = _root(config)
    linked: set[str] = set()
    for page in Path(config.docs_dir).rglob("*.md"):
        linked.update(match.group(1) for match in LINK.finditer(page.read_text("utf-8")))
    for path in sorted(linked):
        source = root / path
        if not source.is_file():
            raise PluginError(f"a page links to repo:{path}, which is no file in the checkout")
        files.append(File.generated(config, f"{PUBLISHED}/{path}", abs_src_path=str(source)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Point each ``repo:`` link at the published copy, relative to the page."""
    here = posixpath.dirname(page.file.src_uri)

    def link(match: re.Match[str]) -> str:
        target = posixpath.relpath(f"{PUBLISHED}/{match.group(1)}", here or ".")
        return f"]({target}{match.group(2) or ''})"

    return LINK.sub(link, markdown)
