"""One body per operator: no operator or sink reads the speed switch (the sources decide what
a shortcut is; an operator is one fold, stepped a read or an event at a time)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import llm_rx

PACKAGE = Path(llm_rx.__file__).parent
MODULES = sorted([*PACKAGE.glob("operators/*.py"), *PACKAGE.glob("sinks/*.py")])
# The switch's modules, absolute and relative to llm_rx/operators or llm_rx/sinks.
SWITCHES = ("llm_rx.wire.fast", "llm_rx.speed", "..wire.fast", "..speed")


def _imported(node: ast.AST) -> list[str]:
    """The modules an import statement names (``from ..wire import fast`` names
    ``..wire.fast``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = "." * node.level + (node.module or "")
        joined = base if base.endswith(".") else base + "."
        return [base, *(joined + alias.name for alias in node.names)]
    return []


def _switch(name: str) -> bool:
    return any(name == switch or name.startswith(switch + ".") for switch in SWITCHES)


def _called(node: ast.AST) -> str | None:
    """The name a call calls (``active()``, ``fast.active()``), if any."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _reads_the_switch(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        found += [f"imports {name}" for name in _imported(node) if _switch(name)]
        if _called(node) == "active":
            found.append(f"calls active() at line {node.lineno}")  # type: ignore[attr-defined]
    return found


def test_one_body_the_scan_sees_every_operator_and_sink() -> None:
    names = {path.name for path in MODULES}
    assert {"_to_response.py", "_text_only.py", "_fan_out.py", "_adapter.py", "_live.py",
            "_redis.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_one_body_no_operator_or_sink_reads_the_switch(path: Path) -> None:
    # bug class: a second body chosen at subscription by the speed switch, kept equal to the
    # first by hand
    assert _reads_the_switch(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("source", [
    "from ..wire import fast",
    "from ..wire.fast import active",
    "from ..wire.fast.batches import TextFold",
    "import llm_rx.wire.fast",
    "from llm_rx.wire import fast_paths, fast",
    "from llm_rx import speed",
    "from ..speed import fast_paths",
    "from .. import speed",
    "if fast.active():\n    pass",
    "on = active()",
])
def test_one_body_the_scan_finds_a_switch(source: str) -> None:
    # (the scan itself: each way a module could read the switch is found)
    assert _reads_the_switch(source) != []


def test_one_body_the_scan_passes_other_imports() -> None:
    assert _reads_the_switch(
        "from ..sources import EventSource\nfrom ..wire.providers import ProviderName\n"
        "from ._adapter import folded\nimport reactivex\nx.fastest()\n") == []
