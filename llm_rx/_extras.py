"""How to install one of llm-rx's extras, for the messages that ask for one.

llm-rx is installed from a checkout of its repository (it is on no package index:
installing the name ``llm-rx`` from one would fetch whatever someone else published under it),
so the command names the checkout: this one when llm-rx runs from it (an editable install,
or the checkout on ``sys.path``), else the checkout's root as ``.``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

__all__ = ["install_hint"]


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` (``"serve"``, ``"structured"``, ...)."""
    root = Path(__file__).resolve().parent.parent
    if (root / "setup.cfg").is_file() and (root / "llm_rx").is_dir():
        return f"python3 -m pip install {shlex.quote(f'{root}[{extra}]')}"
    return f"python3 -m pip install '.[{extra}]' in llm-rx's checkout"
