"""A pytest plugin for an app's own test suite: ``llm-rx serve`` on loopback, no network.

Installed with llm-rx (entry point ``pytest11``: the fixtures are defined in the small
``llm_rx._pytest_plugin``, so a pytest run of any project in the environment imports
nothing of llm-rx's engine until a test asks for them), it gives two session-scoped
fixtures, also importable from here (``from llm_rx.testing import llm_rx_server`` in a
``conftest.py`` where the entry point is not installed):

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

Scripted replies, the journal and per-test faults::

    from llm_rx.testing import reply

    def test_weather_tool(llm_rx_server):
        llm_rx_server.queue(reply(tool_calls=[("get_weather", {"city": "Paris"})],
                                  stop="tool_use"),
                            reply("It is sunny in Paris."))
        with llm_rx_server.fault("malformed"):      # (every request in the block)
            ...
        assert llm_rx_server.requests[-1].json["messages"][-1]["role"] == "tool"

The journal redacts credentials (``Authorization: Bearer sk-p…abcd``, ``x-api-key``,
``x-goog-api-key``, cookies, ``?key=``); ``with llm_rx_server.keep_credentials():`` keeps them
whole for a test that asserts the exact key. The queue, the journal, the standing fault and
a ``keep_credentials()`` are cleared after each test that used the server. The server
answers only requests whose ``Host`` and ``Origin`` are loopback (a web page cannot reach
it). ``check_client(llm_rx_server, client)`` runs a client function under each fault
and says, in llm-rx's terms, what it got wrong (see ``llm_rx.serve._verdict``)::

    def test_my_client_survives_faults(llm_rx_server):
        check_client(llm_rx_server, my_client).assert_ok()

Needs the ``serve`` extra (starlette, uvicorn); they are imported when the server fixture is
first used, so a session that does not use it starts as fast as without the plugin.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._pytest_plugin import llm_rx_capture_paths, llm_rx_server

if TYPE_CHECKING:
    from .serve._scripted import reply
    from .serve._verdict import Verdict, check_client

__all__ = ["Verdict", "check_client", "llm_rx_capture_paths", "llm_rx_server", "reply"]

_LAZY = {"reply": "llm_rx.serve._scripted", "check_client": "llm_rx.serve._verdict",
         "Verdict": "llm_rx.serve._verdict"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)  # (imported when asked for: the plugin itself stays light)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
