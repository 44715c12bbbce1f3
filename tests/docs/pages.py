"""The site's pages and the Python blocks in them (what ``tests/docs`` runs and checks)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = ROOT / "docs"

# A fence's language says what a block is: ```python runs as a test, ```py is shown only
# (it needs a notebook kernel or a provider's key), ```sh and ``` are not Python.
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)

# The documented address of ``llm-rx serve --port 8000``, and of a local Redis (and a
# Durable Streams server, below): a test
# points them at its own servers.
SERVE_URL = "http://127.0.0.1:8000"
REDIS_URL = "redis://127.0.0.1:6379"
#: The documented address of a Durable Streams server (the reference server's default port).
DURABLE_URL = "http://127.0.0.1:4437"


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the block's first line of code
    code: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(DOCS).as_posix()}:{self.line}"


def pages() -> list[Path]:
    return sorted(path for path in DOCS.rglob("*.md") if "hooks" not in path.parts)


def blocks(language: str = "python") -> list[Block]:
    found: list[Block] = []
    for page in pages():
        text = page.read_text("utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                line = text.count("\n", 0, match.start(2)) + 1
                found.append(Block(page, line, match.group(2)))
    return found
