"""Real recorded provider streams bundled for ``llm-rx demo`` (provenance in PROVENANCE.tsv)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["DEMO_CAPTURES", "bundled_folder", "capture_path"]

#: The bundled captures, in the order the demo plays them.
DEMO_CAPTURES = (
    "anthropic-thinking-signature.sse",
    "openai-chat-parallel-tool-calls.sse",
    "openai-chat-text-basic.sse",
)


def capture_path(name: str) -> Path:
    """The file of a bundled capture."""
    return Path(str(resources.files(__package__).joinpath(name)))


def bundled_folder() -> Path:
    """The folder of the bundled captures (what ``llm-rx serve`` serves with no path)."""
    return Path(str(resources.files(__package__)))
