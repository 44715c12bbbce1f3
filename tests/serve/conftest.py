"""The emulator for these tests: the plugin's own fixture, serving tests/captures.

The fixture and the plugin's hook (the per-test reset of queued replies, journal and fault)
are imported (not only found through the installed entry point) so the tests run from a
checkout whose plugin is not registered yet; a conftest's fixture of the same name simply
takes the place of the plugin's, and the hook run twice resets twice.
"""

from __future__ import annotations

import pytest

from llm_rx._pytest_plugin import pytest_runtest_teardown
from llm_rx.testing import llm_rx_server
from tests.captures import HERE

__all__ = ["llm_rx_server", "pytest_runtest_teardown"]


@pytest.fixture(scope="session")
def llm_rx_capture_paths() -> list[str]:
    return [str(HERE)]
