"""Every shell block on the site and in the README runs as written, as ``test_examples`` runs
the Python ones.

A block runs under ``bash -e`` in a copy of the checkout, with a virtual environment of its
own first on ``PATH`` (it sees the packages installed here, and pip is told to use no index:
a block that needs to download something fails). The documented ports (8000, 8001, 9000)
become free ones, as ``test_examples`` points the documented address at its own server. A
block that starts a server is judged once the server says it is ready: ``llm-rx serve``'s
first line is the one the page promises, the page's call runs against it, the example app
answers. A block that talks to ``llm-rx serve`` without starting it gets one.

A block that cannot run here says so on its first line, visibly on the page:
``# not run by the docs tests: <why>`` (the test suite itself, a real provider, an index to
install from, minutes of benchmarks). That set is kept small (see
``test_the_blocks_not_run_are_few_and_say_why``).
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement

from .pages import DOCS, FENCE, ROOT, SERVE_URL, blocks, pages

SHELLS = ("sh", "bash", "shell")
NOT_RUN = "# not run by the docs tests: "
MOST_NOT_RUN = 7
PORTS = ("8000", "8001", "9000")
DEADLINE = 120.0  # seconds for a block, or for a server to say it is ready


@dataclass(frozen=True)
class Shell:
    page: Path
    line: int
    code: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"

    @property
    def reason(self) -> str | None:
        """Why the block is not run (its first line says), or ``None``."""
        if not self.code.startswith(NOT_RUN):
            return None
        lines = self.code.splitlines()
        said = [lines[0][len(NOT_RUN):]]
        said += [line[2:] for line in lines[1:] if line.startswith("# ")]
        return " ".join(said).strip()


def shell_blocks() -> list[Shell]:
    found: list[Shell] = []
    for page in [ROOT / "README.md", *pages()]:
        text = page.read_text("utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) in SHELLS:
                found.append(Shell(page, text.count("\n", 0, match.start(2)) + 1,
                                   match.group(2)))
    return found


BLOCKS = shell_blocks()
RUN = [block for block in BLOCKS if block.reason is None]


def test_the_blocks_not_run_are_few_and_say_why() -> None:
    skipped = {block.id: block.reason for block in BLOCKS if block.reason is not None}
    assert len(RUN) >= 8
    assert len(skipped) <= MOST_NOT_RUN, skipped
    assert all(len(reason or "") > 20 for reason in skipped.values()), skipped
    # (the comment is the block's first line, where a reader sees it before the commands)
    for block in BLOCKS:
        assert NOT_RUN not in block.code or block.code.startswith(NOT_RUN), block.id


def test_no_block_uses_a_language_the_runner_misses() -> None:
    languages = {match.group(1) for page in [ROOT / "README.md", *pages()]
                 for match in FENCE.finditer(page.read_text("utf-8"))}
    assert languages <= {"python", "py", "", "text", "json", *SHELLS}, languages


# -- the sandbox: a copy of the checkout and an environment of its own ------------------------


@dataclass(frozen=True)
class Sandbox:
    root: Path  # the checkout's copy
    env: dict[str, str]
    python: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    base = tmp_path_factory.mktemp("shell")
    root = base / "checkout"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(source.read_bytes())
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=DEADLINE)
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv),
               PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_BUILD_ISOLATION="0")  # (pip's spelling of "build with what is here")
    # (first, the checkout itself: a block that installs nothing runs this code's llm-rx)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
                    "."], cwd=root, env=env, check=True, timeout=DEADLINE, capture_output=True)
    return Sandbox(root, env, venv / "bin" / "python")


def _with_ports(code: str, ports: dict[str, int]) -> str:
    def port(match: re.Match[str]) -> str:
        return str(ports[match.group(0)])
    return re.sub(r"(?:(?<=:)|(?<=--port ))(?:8000|8001|9000)\b", port, code)


class Running:
    """A block started in a process group of its own, its output read line by line."""

    def __init__(self, code: str, sandbox: Sandbox) -> None:
        self.process = subprocess.Popen(["bash", "-e", "-c", code], cwd=sandbox.root,
                                        env=sandbox.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, pattern: str) -> str:
        """The first line matching ``pattern`` (bounded: fails after ``DEADLINE``)."""
        while True:
            try:
                line = self.lines.get(timeout=DEADLINE)
            except queue.Empty:
                pytest.fail(f"no line like {pattern!r} in {DEADLINE} s: {self.seen}")
            if line is None:
                pytest.fail(f"ended ({self.process.wait()}) before {pattern!r}: {self.seen}")
            self.seen.append(line)
            if re.search(pattern, line):
                return line

    def wait_for_all(self, patterns: list[str]) -> None:
        """A line matching each of ``patterns``, in any order (bounded, as `wait_for`)."""
        left = list(patterns)
        while left:
            line = self.wait_for("|".join(f"(?:{pattern})" for pattern in left))
            left = [pattern for pattern in left if not re.search(pattern, line)]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # (the block's own group)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        self._reader.join(timeout=30)  # (to the end of the output: then its pipe is closed)
        assert self.process.stdout is not None
        self.process.stdout.close()


def _finite(code: str, sandbox: Sandbox) -> str:
    done = subprocess.run(["bash", "-e", "-c", code], cwd=sandbox.root, env=sandbox.env,
                          capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def _page_python_after(block: Shell) -> str:
    """The page's first ``python`` block after ``block`` (the call it prepares)."""
    after = [b for b in blocks() if b.page == block.page and b.line > block.line]
    assert after, block.id
    return after[0].code


@pytest.fixture
def running() -> Iterator[list[Running]]:
    started: list[Running] = []
    try:
        yield started
    finally:
        for each in started:
            each.stop()


@pytest.mark.slow
@pytest.mark.parametrize("block", RUN, ids=[block.id for block in RUN])
def test_shell_block_runs_as_written(block: Shell, sandbox: Sandbox,
                                     running: list[Running]) -> None:
    ports = {port: _free_port() for port in PORTS}
    code = _with_ports(block.code, ports)
    url = f"http://127.0.0.1:{ports['8000']}"
    if "uvicorn " in code:  # (a server and the example app in front of it)
        started = Running(code, sandbox)
        running.append(started)
        started.wait_for_all(  # (the emulator upstream too, if the block starts one)
            [r"Uvicorn running on", *([r"listening on"] if "llm-rx serve" in code else [])])
        address = re.search(r"# open (http://\S+)", code)
        assert address is not None, block.id
        page = httpx.get(address.group(1), timeout=30)
        assert page.status_code == 200
        chat = httpx.post(address.group(1).replace("/?", "/api/chat?", 1), timeout=30,
                          json={"prompt": "What is the weather like?"})
        assert chat.status_code == 200
        assert "weather" in chat.text
    elif "llm-rx serve" in code:  # (a server the page then uses)
        started = Running(code, sandbox)
        running.append(started)
        first = started.wait_for(r"^llm-rx serve: listening on ")
        assert first == f"llm-rx serve: listening on {url}"
        promised = re.search(r"# first line: (.+)$", code, re.M)
        if promised:
            assert first == promised.group(1).strip()
        if block.page == DOCS / "getting-started.md":
            _the_call_installs_what_it_uses(block, url, sandbox)
    elif f"127.0.0.1:{ports['8000']}" in code or f"localhost:{ports['8000']}" in code:
        from llm_rx.serve import EmulatorThread

        with EmulatorThread(port=ports["8000"]):
            out = _finite(code, sandbox)
        assert '"error"' not in out, out
    else:
        _finite(code, sandbox)


# -- the live call of the getting-started page uses only what its install brings ---------------


def _requirements(code: str) -> list[str]:
    """The requirements a block's ``pip install`` names (its checkout's ``.[extras]``)."""
    command = re.search(r"pip install ([^&\n]+)", code)
    assert command is not None
    named = [word.strip("'\"") for word in command.group(1).split() if not word.startswith("-")]
    return [("llm-rx" + word[1:]) if word.startswith(".") else word for word in named]


def _closure(requirements: list[str]) -> set[str]:
    """The distributions those requirements install: llm-rx's extras from this checkout's
    setup.cfg, the rest from the installed packages' own metadata."""
    import configparser
    from importlib import metadata

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")

    def ours(extras: set[str]) -> list[str]:
        lines = config["options"]["install_requires"].splitlines()
        for extra in extras:
            lines += config["options.extras_require"][extra].splitlines()
        return [line.strip() for line in lines if line.strip()]

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    wanted, found = [Requirement(r) for r in requirements], set()
    while wanted:
        requirement = wanted.pop()
        name = norm(requirement.name)
        key = f"{name}[{','.join(sorted(requirement.extras))}]"
        if key in found:
            continue
        found.update({key, name})
        if name == "llm-rx":
            wanted += [Requirement(line) for line in ours(set(requirement.extras))]
            continue
        for line in metadata.requires(requirement.name) or ():
            needed = Requirement(line)
            if needed.marker is None or any(needed.marker.evaluate({"extra": extra})
                                            for extra in requirement.extras or {""}):
                wanted.append(needed)
    return {name for name in found if "[" not in name}


GUARD = """
import importlib.metadata, json, re, sys
allowed = set(json.loads(sys.argv[1]))
owners = importlib.metadata.packages_distributions()
class Guard:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        dists = {re.sub(r"[-_.]+", "-", d).lower() for d in owners.get(top, ())}
        if top not in sys.stdlib_module_names and dists and not dists & allowed:
            raise ImportError(f"{top} ({', '.join(sorted(dists))}) is not installed by the "
                              "page's install command")
        return None
sys.meta_path.insert(0, Guard())
exec(compile(sys.argv[2], "the page's call", "exec"), {"__name__": "__docs__"})
"""


def _the_call_installs_what_it_uses(block: Shell, url: str, sandbox: Sandbox) -> None:
    allowed = _closure(_requirements(block.code))
    call = _page_python_after(block).replace(SERVE_URL, url)
    done = subprocess.run([str(sandbox.python), "-c", GUARD, json.dumps(sorted(allowed)), call],
                          cwd=sandbox.root, env=sandbox.env, capture_output=True, text=True,
                          timeout=DEADLINE)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "end_turn" in done.stdout


def test_the_closure_follows_extras_and_markers() -> None:
    closure = _closure(["llm-rx[serve]"])
    assert {"llm-rx", "starlette", "uvicorn", "httpx", "reactivex", "pydantic"} <= closure
    assert "openai" not in closure
    assert "rich" not in closure
    assert _requirements("python3 -m pip install '.[serve,rich]' openai && llm-rx serve") == [
        "llm-rx[serve,rich]", "openai"]
