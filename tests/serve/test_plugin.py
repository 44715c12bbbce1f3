"""The pytest plugin and the extra: registered, lazy, and the emulator guide's test file
(docs/how-to/emulator.md) runs as an app's own test suite, through the plugin."""

from __future__ import annotations

import ast
import configparser
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
HEAVY = ("starlette", "uvicorn", "llm_rx.serve._app", "llm_rx.serve._server")


def imported_after(statement: str) -> list[str]:
    code = (f"import sys; {statement}; "
            f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=True)
    return list(ast.literal_eval(result.stdout))


@pytest.mark.parametrize("statement", ["import llm_rx", "import llm_rx.testing",
                                       "import llm_rx._pytest_plugin",
                                       "import llm_rx.cli", "import llm_rx.serve"])
def test_serve_stack_is_not_imported_until_used(statement: str) -> None:
    assert imported_after(statement) == []


def test_plugin_and_extras_are_declared() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    assert "llm_rx = llm_rx._pytest_plugin" in config["options.entry_points"]["pytest11"]
    extras = config["options.extras_require"]
    for name in ("starlette", "uvicorn"):
        assert name in extras["serve"]
        assert name in extras["dev"]  # so .ci/run's install brings them
    assert "boto3" in extras["dev"]


def guide_example() -> str:
    text = (ROOT / "docs" / "how-to" / "emulator.md").read_text()
    section = text.split("## The pytest fixture", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_guide_example_runs_with_the_plugin_fixture(tmp_path: Path) -> None:
    (tmp_path / "test_app.py").write_text(guide_example())
    # Where the entry point is not installed yet (a fresh checkout), the conftest brings the
    # fixtures; where it is, the conftest's take the plugin's place.
    (tmp_path / "conftest.py").write_text(
        "from llm_rx.testing import llm_rx_capture_paths, llm_rx_server\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error",
         str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
