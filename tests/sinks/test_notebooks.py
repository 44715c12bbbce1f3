"""The notebooks in ``notebooks/`` run headless through a real kernel (nbclient + ipykernel).

nbclient rewrites a display in place, so the executed notebook keeps only the final frame;
the client below also counts the ``update_display_data`` messages each display received,
to check that the display was updated repeatedly while the reply streamed, and that it
ended with the whole reply.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

import llm_rx
from llm_rx.data import capture_path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


class FrameCountingClient(NotebookClient):
    """Records every display and every update of it, by display id, as the kernel sent them."""

    def __init__(self, nb: nbformat.NotebookNode, **kwargs: Any) -> None:
        super().__init__(nb, **kwargs)
        self.frames: dict[str, list[tuple[str, int, dict[str, Any]]]] = {}

    def create_kernel_manager(self) -> AsyncKernelManager:
        """ipykernel's own python3 kernel on this interpreter (no kernel spec to install)."""
        self.km = AsyncKernelManager(kernel_name="python3",
                                     kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
        return self.km

    def process_message(
        self, msg: dict[str, Any], cell: nbformat.NotebookNode, cell_index: int
    ) -> nbformat.NotebookNode | None:
        kind = msg["msg_type"]
        if kind in ("display_data", "update_display_data"):
            display_id = msg["content"].get("transient", {}).get("display_id")
            if display_id is not None:
                self.frames.setdefault(display_id, []).append(
                    (kind, cell_index, msg["content"]["data"])
                )
        return super().process_message(msg, cell, cell_index)


class Run:
    def __init__(self, nb: nbformat.NotebookNode, client: FrameCountingClient) -> None:
        self.nb = nb
        self.frames = client.frames

    def displays_of(self, cell_index: int) -> list[list[tuple[str, int, dict[str, Any]]]]:
        return [frames for frames in self.frames.values() if frames[0][1] == cell_index]

    def stdout(self, cell_index: int) -> str:
        return "".join(output.get("text", "") for output in self.nb.cells[cell_index].outputs
                       if output.get("name") == "stdout")

    def cell_index(self, needle: str) -> int:
        return next(n for n, cell in enumerate(self.nb.cells)
                    if cell.cell_type == "code" and needle in cell.source)


NAMES = ("01-quickstart.ipynb", "02-composing-pipelines.ipynb", "03-event-bus.ipynb")
#: Every notebook kept: the gallery (04) is executed by test_gallery.py.
ALL_NAMES = (*NAMES, "04-gallery.ipynb")


@pytest.fixture(scope="module")
def runs() -> dict[str, Run]:
    """Every notebook executed once, each in its own kernel, the three kernels side by side."""
    clients = {
        name: FrameCountingClient(nbformat.read(NOTEBOOKS / name, as_version=4), timeout=60,
                                  resources={"metadata": {"path": str(NOTEBOOKS)}})
        for name in NAMES
    }

    async def execute_all() -> None:
        await asyncio.gather(*(client.async_execute() for client in clients.values()))

    with pytest.MonkeyPatch.context() as patch:  # the kernels import this checkout
        patch.setenv("PYTHONPATH", os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        ))
        asyncio.run(execute_all())
    return {name: Run(client.nb, client) for name, client in clients.items()}


@pytest.fixture
def quickstart(runs: dict[str, Run]) -> Run:
    return runs["01-quickstart.ipynb"]


@pytest.fixture
def composing(runs: dict[str, Run]) -> Run:
    return runs["02-composing-pipelines.ipynb"]


@pytest.fixture
def event_bus(runs: dict[str, Run]) -> Run:
    return runs["03-event-bus.ipynb"]


def _markdown(frame: tuple[str, int, dict[str, Any]]) -> str:
    text: str = frame[2]["text/markdown"]
    return text


def test_notebooks_are_stored_without_outputs() -> None:
    names = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))
    assert names == list(ALL_NAMES)
    for name in names:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        nbformat.validate(nb)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [], name
                assert cell.execution_count is None, name


def test_notebook_quickstart_display_updated_repeatedly_and_ends_with_the_full_text(
    quickstart: Run,
) -> None:
    cell = quickstart.cell_index("lxs.jupyter_display(),\n")
    (frames,) = quickstart.displays_of(cell)
    kinds = [kind for kind, _, _ in frames]
    assert kinds[0] == "display_data"
    assert kinds.count("update_display_data") >= 3  # live: updated while it streamed
    expected = llm_rx.reassemble(capture_path("anthropic/thinking-signature.sse"))
    final = _markdown(frames[-1])
    assert expected.text in final  # the last frame: the whole answer
    assert "<summary>Thinking (202 characters)</summary>" in final
    assert "usage: input 43 · output 282" in final
    assert "stop: end_turn" in final
    assert any("streaming…" in _markdown(frame) for frame in frames[1:-1])
    # nbclient kept the final state in the saved output
    (output,) = quickstart.nb.cells[cell].outputs
    assert output["data"]["text/markdown"] == final


def test_notebook_quickstart_response_and_await(quickstart: Run) -> None:
    summary = quickstart.stdout(quickstart.cell_index("print(response.usage)"))
    assert summary.startswith("end_turn complete\n")
    assert "input_tokens=43 output_tokens=282" in summary
    cell = quickstart.cell_index("await llm_rx.from_file(tools)")
    (frames,) = quickstart.displays_of(cell)
    final = _markdown(frames[-1])
    assert "**Tool call** `GetWeatherArgs`" in final
    assert "**Tool call** `get_stock_price`" in final
    assert "stop: tool_use" in final
    result = quickstart.nb.cells[cell].outputs[-1]["data"]["text/plain"]
    assert "('GetWeatherArgs', {'city': 'Edinburgh', 'country': 'GB', 'units': 'c'})" in result


def test_notebook_composing_shares_one_read_stops_and_throttles(composing: Run) -> None:
    shared = composing.cell_index("reactivex.fork_join(")
    assert "events displayed; upstream read 1 time(s)" in composing.stdout(shared)
    (frames,) = composing.displays_of(shared)
    assert "stop: end_turn" in _markdown(frames[-1])

    stopped = composing.cell_index("ops.take_until(long_enough)")
    assert composing.stdout(stopped).startswith("interrupted False ")
    (frames,) = composing.displays_of(stopped)
    assert "**⚠ Interrupted: the events ended before the end of the message**" in (
        _markdown(frames[-1])
    )

    throttled = composing.cell_index("ops.sample(0.1")
    assert "answer length at each sample: [" in composing.stdout(throttled)
    (frames,) = composing.displays_of(throttled)
    assert len(frames) >= 2
    assert "stop: end_turn" in _markdown(frames[-1])


def test_notebook_event_bus_feeds_several_consumers(event_bus: Run) -> None:
    cell = event_bus.cell_index("await transport(")
    log = event_bus.stdout(cell)
    assert "run tool GetWeatherArgs with {'city': 'Edinburgh'" in log
    assert "run tool get_stock_price with {'ticker': 'AAPL'" in log
    assert "bill 149 + 60 tokens" in log
    (frames,) = event_bus.displays_of(event_bus.cell_index("byte_bus = Subject()"))
    assert [kind for kind, _, _ in frames].count("update_display_data") >= 2
    assert "**Tool call** `get_stock_price`" in _markdown(frames[-1])


def test_notebooks_pace_with_the_library_operator() -> None:
    """A notebook's own ``concat_map`` of timers drops what arrived when the stream fails."""
    for name in ALL_NAMES:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
        assert "reactivex.timer(" not in source, name
        assert "def paced" not in source, name


def test_notebook_composing_cut_reply_paced_keeps_what_arrived(composing: Run) -> None:
    cell = composing.cell_index("llm_rx.from_bytes(cut)")
    assert composing.stdout(cell).startswith("interrupted False 'incomplete' 281 characters")
    (frames,) = composing.displays_of(cell)
    final = _markdown(frames[-1])
    assert "**At intersections with traffic lights:**" in final  # the partial answer, shown
    assert "Interrupted" in final
