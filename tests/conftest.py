"""Settings every test module shares.

Hypothesis draws new examples on every run; under CI (the ``CI`` environment variable set)
the draws are derandomized, so a submission is judged on the same examples every time it is
run, and a property that fails there fails again when rerun. Run the suite locally (or the
fuzzer, ``python -m tests.fuzz``) to explore new examples.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


# The fast tier, ``pytest -m "not slow"``: the core (wire, builder, operators, sinks, encoders'
# rules) in under a minute on two cores, for working; CI runs everything. Slow are the tests
# that start real servers, kernels, browsers or interpreters, run the static checks, or draw
# many hypothesis examples: whole folders, and these modules.
_SLOW_FOLDERS = ("docs", "examples", "redis", "serve")
_SLOW_MODULES = frozenset({
    "encoders/test_open_responses.py",
    "encoders/test_round_trip.py",
    "encoders/test_ui_targets.py",
    "sinks/test_asgi_memory.py",
    "sinks/test_asgi_slow_client.py",
    "sinks/test_asgi_ui.py",
    "sinks/test_citation_cost.py",
    "sinks/test_display_cost.py",
    "sinks/test_gallery.py",
    "sinks/test_hostile_browser.py",
    "sinks/test_hostile_nbconvert.py",
    "sinks/test_hostile_terminal.py",
    "sinks/test_notebooks.py",
    "sources/test_engine_sync_async.py",
    "sources/test_httpx.py",
    "sources/test_httpx_limits.py",
    "sources/test_httpx_reads.py",
    "sources/test_sdk.py",
    "test_benchmarks.py",
    "test_boundary.py",
    "test_bounded_cost.py",
    "test_cli.py",
    "test_cli_process.py",
    "test_editable_install.py",
    "test_error_payloads.py",
    "test_fuzz.py",
    "test_native_any_response.py",
    "test_properties.py",
    "test_static.py",
    "wire/test_changed_fields.py",
    "wire/test_error_bodies.py",
    "wire/test_fast_obfuscation.py",
    "wire/test_fast_paths.py",
})
_TESTS = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    for item in items:
        relative = item.path.relative_to(_TESTS).as_posix()
        if relative.split("/", 1)[0] in _SLOW_FOLDERS or relative in _SLOW_MODULES:
            item.add_marker(slow)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not slow"`` the slow folders and modules are not even imported (their
    imports — every official SDK, a kernel client, a browser driver — were half the time)."""
    if config.getoption("markexpr", "") != "not slow":
        return None
    try:
        relative = collection_path.relative_to(_TESTS).as_posix()
    except ValueError:
        return None
    if relative in _SLOW_FOLDERS or relative in _SLOW_MODULES:
        return True
    return None
