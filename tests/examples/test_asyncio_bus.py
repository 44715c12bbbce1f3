"""The asyncio example (``examples/asyncio_bus.py``): concurrent replies from ``llm-rx serve``
over ``httpx.AsyncClient`` onto one Subject, one disposed, one cut, a throttled UI on a
thread pool — run as written against the emulator."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from pathlib import Path
from types import ModuleType

import llm_rx
from llm_rx.data import capture_path
from llm_rx.serve import EmulatorThread

EXAMPLE = Path(__file__).parents[2] / "examples" / "asyncio_bus.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("asyncio_bus", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_asyncio_bus_example(llm_rx_server: EmulatorThread) -> None:
    example = _example()
    before = llm_rx_server.stats["disconnected"]
    result = asyncio.run(example.main(llm_rx_server.url))
    responses, ui = result["responses"], result["ui"]

    weather = responses["weather"]
    assert weather.complete
    assert [call.name for call in weather.tool_calls] == ["GetWeatherArgs", "get_stock_price"]
    essay = responses["essay"]
    assert essay.complete
    assert essay.model_dump() == llm_rx.reassemble(
        capture_path("openai/chat-text-basic.sse")).model_dump()
    cut = responses["cut"]  # (its error reached its own consumer only, as a cut Response)
    assert not cut.complete
    assert cut.stop_reason == "interrupted"
    assert responses["abandoned"] == "disposed"
    assert llm_rx_server.stats.wait("disconnected", before + 1, timeout=10)

    # the UI: updated on its own thread, coalesced, with every text that arrived
    assert ui.threads
    assert threading.main_thread().name not in ui.threads
    assert ui.updates >= 1
    assert ui.text["essay"] == essay.text
    assert ui.text["cut"] == cut.text
    assert ui.text["abandoned"]  # (its first words, then nothing)
