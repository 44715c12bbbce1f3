"""A pytest plugin for an app's own test suite: ``llm-rx serve`` on loopback, no network.

Installed with llm-rx (entry point ``pytest11``), it gives two session-scoped fixtures:

``llm_rx_server``
    An emulator running in a background thread on ``127.0.0.1`` (a free port), serving
    recorded captures on each provider's real endpoints; an
    :class:`~llm_rx.serve.EmulatorThread` with ``url``, ``captures`` (the ids a request's
    model may name), ``headers(capture=..., fault=..., pace=...)`` (the headers that pick a
    capture, inject a fault or set the pace) and ``stats`` (what the server saw: completed,
    disconnected and dropped streams, with ``stats.wait(name, count, timeout)``). Point each
    SDK at it::

        def test_reply(llm_rx_server):
            client = openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="test")
            stream = client.chat.completions.create(
                model="openai__chat-text-basic", messages=[], stream=True)

    (anthropic: ``base_url=url``; google-genai: ``http_options={"base_url": url}``; ollama:
    ``Client(host=url)``; boto3: ``endpoint_url=url``.)

``llm_rx_capture_paths``
    The folders or files served; ``None`` (the default) serves the captures bundled with
    llm-rx. Override it in a ``conftest.py`` to serve your own recordings::

        @pytest.fixture(scope="session")
        def llm_rx_capture_paths():
            return ["tests/recordings"]

Needs the ``serve`` extra (starlette, uvicorn); they are imported when the server fixture is
first used, so a session that does not use it starts as fast as without the plugin.
"""

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
    """The emulator on 127.0.0.1 for the session (see the module docstring)."""
    from .serve._server import EmulatorThread

    with EmulatorThread(llm_rx_capture_paths) as server:
        yield server
