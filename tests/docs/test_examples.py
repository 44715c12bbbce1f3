"""Every ``python`` block on the site runs as written (from the checkout's root): against the
recorded replies bundled with llm-rx, the ``llm-rx serve`` emulator, a real Redis, or the
Durable Streams reference server."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from .pages import DOCS, DURABLE_URL, REDIS_URL, ROOT, SERVE_URL, Block, blocks

BLOCKS = blocks()


def test_every_how_to_page_has_examples_that_run() -> None:
    with_examples = {block.page.name for block in BLOCKS if block.page.parent.name == "how-to"}
    assert with_examples == {path.name for path in DOCS.glob("how-to/*.md")}


@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_example_runs(block: Block, request: pytest.FixtureRequest,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code = block.code
    fixtures: dict[str, Any] = {}
    if SERVE_URL in code or "llm_rx_server" in code:
        server = request.getfixturevalue("llm_rx_server")
        fixtures["llm_rx_server"] = server
        code = code.replace(SERVE_URL, server.url)
    if REDIS_URL in code:
        redis = request.getfixturevalue("server")  # (tests/redis: running and empty)
        code = code.replace(REDIS_URL, f"redis://127.0.0.1:{redis.port}")
    if DURABLE_URL in code:
        durable = request.getfixturevalue("durable_server")  # (tests/durable: the reference one)
        code = code.replace(DURABLE_URL, durable.url)
    source = "\n" * (block.line - 1) + code  # (a traceback's line numbers are the page's)
    scope: dict[str, Any] = {"__name__": "__docs__"}
    exec(compile(source, str(block.page), "exec"), scope)  # (the example itself)
    # A block that is an app's test file: its tests run, with their fixtures
    for name, value in list(scope.items()):
        if name.startswith("test_") and inspect.isfunction(value):
            value(**{wanted: fixtures[wanted] for wanted in inspect.signature(value).parameters})
