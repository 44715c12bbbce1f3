"""The display tests see the same terminal whatever terminal runs them.

rich reads ``TERM`` (a ``dumb`` or ``unknown`` terminal gets no cursor moves and no links),
``NO_COLOR``, ``FORCE_COLOR``, ``COLUMNS`` and ``LINES`` when it draws, even on a console a
test made with ``force_terminal=True``: each display test runs as on an ordinary terminal.
Tests of another terminal (``TERM=dumb``) say so themselves.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def ordinary_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    for name in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TTY_COMPATIBLE",
                 "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
