"""``pip install .`` builds the compiled core where a C compiler is found, installs the
pure-Python package where none is (saying why, never failing), and leaves it out when
``LLM_RX_NO_EXTENSIONS=1`` is set for the build; the installed package says which it is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEADLINE = 300


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's files (what git knows), without any build in place."""
    root = tmp_path_factory.mktemp("install") / "checkout"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file() and not name.endswith(".so"):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(source.read_bytes())
    return root


def _installed(checkout: Path, where: Path, **build_env: str) -> tuple[str, str]:
    """Install a copy of the checkout (no build left by another install) into a new
    environment (no index: what is here builds it) and ask it whether the core is in use;
    the install's output and the answer."""
    checkout = Path(shutil.copytree(checkout, where / "checkout"))
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=DEADLINE)
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV", "LLM_RX_"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv),
               PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_BUILD_ISOLATION="0")
    python = str(venv / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "-v", "--no-deps", "."],
                             cwd=checkout, env={**env, **build_env}, capture_output=True,
                             text=True, timeout=DEADLINE)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    said = subprocess.run([python, "-c", "import llm_rx.speed as s; print(s.compiled)"],
                          cwd=where, env=env, capture_output=True, text=True,
                          timeout=DEADLINE, check=True)
    return install.stdout + install.stderr, said.stdout.strip()


@pytest.mark.slow
def test_install_builds_the_core_where_a_compiler_is(checkout: Path, tmp_path: Path) -> None:
    # bug class: an install that ships the pure-Python package on a machine that could have
    # built the core (the speed users were told of never reaches them)
    _, compiled = _installed(checkout, tmp_path)
    assert compiled == "True"


@pytest.mark.slow
def test_install_without_a_compiler_is_pure_python(checkout: Path, tmp_path: Path) -> None:
    # bug class: an install that fails where no compiler is (a slim container), or that
    # fails silently and leaves the user wondering why it is slow
    output, compiled = _installed(checkout, tmp_path, CC="/nonexistent/cc")
    assert compiled == "False"
    assert output.count("llm-rx: the C extension was not built") == 1


@pytest.mark.slow
def test_install_leaves_the_core_out_when_told(checkout: Path, tmp_path: Path) -> None:
    _, compiled = _installed(checkout, tmp_path, LLM_RX_NO_EXTENSIONS="1")
    assert compiled == "False"
