"""The pytest plugin llm-rx registers (entry point ``pytest11``): the fixtures documented in
``llm_rx.testing``. It imports only pytest here; the emulator (starlette, uvicorn, the
engine) is imported when a test first asks for ``llm_rx_server``."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .serve import EmulatorThread

__all__ = ["llm_rx_capture_paths", "llm_rx_server"]


@pytest.fixture(scope="session")
def llm_rx_capture_paths() -> Sequence[str | os.PathLike[str]] | None:
    """The captures ``llm_rx_server`` serves (``None``: llm-rx's bundled ones)."""
    return None


@pytest.fixture(scope="session")
def llm_rx_server(
    llm_rx_capture_paths: Sequence[str | os.PathLike[str]] | None,
) -> Iterator[EmulatorThread]:
    """The emulator on 127.0.0.1 for the session (see ``llm_rx.testing``)."""
    from .serve._server import EmulatorThread

    with EmulatorThread(llm_rx_capture_paths) as server:
        yield server


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """After a test that used the server: its queued replies, journal and fault are cleared."""
    server = getattr(item, "funcargs", {}).get("llm_rx_server")
    reset = getattr(server, "reset", None)
    if reset is not None:
        reset()
