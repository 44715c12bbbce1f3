"""The ``llm-rx`` command's entry point: ``--version`` answers before anything is imported
(the engine, the parsers' provider lists), every other command runs ``llm_rx.cli``."""

from __future__ import annotations

import sys

from . import __version__

__all__ = ["main"]


def main() -> int:
    """Run ``llm-rx`` with this process's command line."""
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"llm-rx {__version__}\n")
        return 0
    from .cli import main as run

    return run()
