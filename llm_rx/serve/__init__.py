"""``llm-rx serve``: a provider emulator that answers on each provider's real endpoints with
recorded captures, at a pace, with faults on request (needs the ``serve`` extra).

::

    from llm_rx.serve import EmulatorThread

    with EmulatorThread(["tests/captures"]) as server:      # 127.0.0.1, any free port
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="-")
        client.chat.completions.create(model="openai__chat-text-basic", messages=[...],
                                       stream=True)

Importing ``llm_rx`` never imports this package; importing this package imports starlette and
uvicorn only when one of their users (the app, the server) is first asked for, so the
``llm-rx`` command starts without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._faults import FAULT_HEADER, PACE_HEADER, Fault, parse_fault
from ._index import Capture, CaptureIndex, capture_id
from ._journal import JournalEntry
from ._main import add_arguments, main, run
from ._stats import Stats
from ._timing import Timing

if TYPE_CHECKING:
    from ._app import CAPTURE_HEADER, Emulator, create_app
    from ._media import Pacing
    from ._record_main import RecorderThread
    from ._server import EmulatorThread
    from ._verdict import Verdict, check_client

__all__ = [
    "CAPTURE_HEADER",
    "FAULT_HEADER",
    "PACE_HEADER",
    "Capture",
    "CaptureIndex",
    "Emulator",
    "EmulatorThread",
    "Fault",
    "JournalEntry",
    "Pacing",
    "RecorderThread",
    "Stats",
    "Timing",
    "Verdict",
    "add_arguments",
    "capture_id",
    "check_client",
    "create_app",
    "main",
    "parse_fault",
    "run",
]

_LAZY = {"CAPTURE_HEADER": "_app", "Emulator": "_app", "create_app": "_app",
         "EmulatorThread": "_server", "Pacing": "_media", "RecorderThread": "_record_main",
         "Verdict": "_verdict", "check_client": "_verdict"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
