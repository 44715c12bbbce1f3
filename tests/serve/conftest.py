"""The emulator for these tests: the plugin's own fixture, serving tests/captures.

The fixture is imported (not only found through the installed entry point) so the tests run
from a checkout whose plugin is not registered yet; a conftest's fixture of the same name
simply takes the place of the plugin's.
"""

from __future__ import annotations

import pytest

from llm_rx.testing import llm_rx_server
from tests.captures import HERE

__all__ = ["llm_rx_server"]


@pytest.fixture(scope="session")
def llm_rx_capture_paths() -> list[str]:
    return [str(HERE)]
