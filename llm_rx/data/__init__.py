"""Real recorded provider streams bundled for ``llm-rx demo`` and ``llm-rx serve``
(provenance in PROVENANCE.tsv).

They are laid out as the project's captures are, ``PROVIDER/NAME.EXT``, so a bundled capture
has the id the same file has anywhere else (``anthropic/thinking-signature.sse`` is
``anthropic__thinking-signature``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["DEMO_CAPTURES", "bundled_folder", "capture_files", "capture_path"]

#: The bundled captures, in the order the demo plays them.
DEMO_CAPTURES = (
    "anthropic/thinking-signature.sse",
    "openai/chat-parallel-tool-calls.sse",
    "openai/chat-text-basic.sse",
)

_CAPTURE_SUFFIXES = frozenset({".sse", ".ndjson", ".eventstream", ".json"})


def capture_path(name: str) -> Path:
    """The file of a bundled capture: ``anthropic/thinking-signature.sse`` (the flat name
    of earlier versions, ``anthropic-thinking-signature.sse``, still finds it)."""
    path = bundled_folder().joinpath(name)
    if not path.exists() and "/" not in name and "-" in name:
        path = bundled_folder().joinpath(name.replace("-", "/", 1))
    return path


def bundled_folder() -> Path:
    """The folder of the bundled captures (what ``llm-rx serve`` serves with no path)."""
    return Path(str(resources.files(__package__)))


def capture_files() -> list[Path]:
    """The bundled capture files, ``PROVIDER/NAME.EXT``, sorted.

    Only the recordings: the folder also holds this module, and Python may write its
    bytecode beside it (``__pycache__/``), which a glob of ``*/*.*`` would take for a
    provider's capture.
    """
    return sorted(
        path
        for path in bundled_folder().glob("*/*.*")
        if not path.parent.name.startswith(("_", ".")) and path.suffix in _CAPTURE_SUFFIXES
    )
