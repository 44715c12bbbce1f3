"""The emulator serving tests/captures, as for the serve tests (the plugin's own fixture)."""

from __future__ import annotations

import pytest

from llm_rx.testing import llm_rx_server
from tests.captures import HERE

__all__ = ["llm_rx_server"]


@pytest.fixture(scope="session")
def llm_rx_capture_paths() -> list[str]:
    return [str(HERE)]
