"""Light imports: ``import llm_rx``, the auto-loaded pytest plugin and ``llm-rx --version``
import nothing heavy (measured, not timed, in benchmarks/imports.py)."""

from __future__ import annotations

import ast
import configparser
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: What a bare import must not bring: the runtime dependencies (imported by the paths that
#: use them), the extras, and the engine's own modules.
HEAVY = ("pydantic", "pydantic_core", "reactivex", "orjson", "httpx", "httpx2", "rich",
         "starlette", "uvicorn", "genai_prices", "opentelemetry", "jiter", "redis", "IPython",
         "asyncio", "llm_rx.wire", "llm_rx.events", "llm_rx.response", "llm_rx.cli",
         "llm_rx.fold", "llm_rx.read", "llm_rx.sources", "llm_rx.operators", "llm_rx.sinks",
         "llm_rx.serve", "llm_rx.native", "llm_rx.encoders")


def _imported(code: str, *argv: str) -> list[str]:
    """The heavy modules imported after ``code`` ran in a fresh interpreter."""
    probe = (
        f"import sys\nsys.argv = ['llm-rx', *{list(argv)!r}]\n{code}\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted(m for m in sys.modules if m in heavy or m.startswith("
        "tuple(h + '.' for h in heavy))))"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=True)
    return list(ast.literal_eval(result.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("statement", ["import llm_rx", "import llm_rx._pytest_plugin"])
def test_a_bare_import_imports_nothing_heavy(statement: str) -> None:
    assert _imported(statement) == []


def test_version_imports_no_engine() -> None:
    code = "from llm_rx._console import main\nassert main() == 0"
    assert _imported(code, "--version") == []


def test_version_prints_the_version() -> None:
    import llm_rx

    result = subprocess.run([sys.executable, "-m", "llm_rx", "--version"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout == f"llm-rx {llm_rx.__version__}\n"


def test_a_name_is_imported_on_first_use_and_kept() -> None:
    code = (
        "import sys\nimport llm_rx\nfrom llm_rx import operators as lxo\n"
        "assert lxo.to_response\n"
        "assert 'llm_rx.operators._cost' not in sys.modules\n"
        "assert 'llm_rx.encoders' not in sys.modules\n"
        "assert llm_rx.from_bytes is llm_rx.sources.from_bytes\n"
        "assert 'from_bytes' in vars(llm_rx)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


def test_an_unknown_name_is_an_attribute_error() -> None:
    import llm_rx
    from llm_rx import operators

    with pytest.raises(AttributeError):
        _ = llm_rx.no_such_name  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        _ = operators.no_such_operator  # type: ignore[attr-defined]


def test_the_entry_points_name_the_small_modules() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    points = config["options.entry_points"]
    assert "llm-rx = llm_rx._console:main" in points["console_scripts"]
    assert "llm_rx = llm_rx._pytest_plugin" in points["pytest11"]
