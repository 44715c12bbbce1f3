"""The README's editable install (``pip install -e '.[dev]'``) is visible to static tools.

setuptools makes an editable install either a path entry in a ``.pth`` file or an import
hook; mypy (and other static tools) cannot see through the hook. The files an editable
wheel holds are laid out here by setuptools' own editable strategy for this project's
configuration (as ``pip install -e`` would, without building a wheel or reaching an index),
into a throwaway virtual environment; then mypy checks a user's file outside the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Lays out, in the site-packages given, the files of this project's editable wheel.
LAY_OUT = """
import sys
from pathlib import Path

from setuptools.command.editable_wheel import editable_wheel
from setuptools.dist import Distribution


class Wheel:
    def writestr(self, name, data):
        Path(sys.argv[1], name).write_bytes(data if isinstance(data, bytes) else data.encode())


dist = Distribution()
dist.parse_config_files()
command = editable_wheel(dist)
command.ensure_finalized()
strategy = command._select_strategy("llm_rx-0", "py3-none-any", "build/lib")
with strategy:
    strategy(Wheel(), [], {})
"""

USER_FILE = """
import llm_rx
from llm_rx._installed_here import HERE

response: int = llm_rx.reassemble(b"")
here: str = HERE
"""


def test_editable_install_is_seen_by_mypy_from_a_user_file(tmp_path: Path) -> None:
    project = tmp_path / "checkout"
    project.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "llm_rx", project / "llm_rx",
                    ignore=shutil.ignore_patterns("__pycache__"))
    # only this copy has it: finding it proves mypy read the install made here
    (project / "llm_rx" / "_installed_here.py").write_text("HERE: int = 1\n")
    env = tmp_path / "venv"
    venv.create(env, system_site_packages=True, with_pip=False)
    python = env / "bin" / "python"
    site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([python, "-c", LAY_OUT, site], cwd=project, capture_output=True,
                   check=True, timeout=120)
    user = tmp_path / "user"
    user.mkdir()
    (user / "app.py").write_text(USER_FILE)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-executable", str(python),
         "--cache-dir", str(tmp_path / "cache"), "app.py"],
        cwd=user, capture_output=True, text=True, timeout=300, check=False,
    )
    assert "import-not-found" not in result.stdout, result.stdout
    assert 'expression has type "Response", variable has type "int"' in result.stdout
    assert 'expression has type "int", variable has type "str"' in result.stdout
