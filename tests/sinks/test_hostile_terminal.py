"""What a reply cannot do to a terminal: ``llm-rx replay`` of hostile replies under a real
pseudo-terminal, its output read back through a terminal emulator (pyte).

The window title stays unset, nothing is written to the clipboard (OSC 52), and the screen
still shows what was printed before the reply, the whole answer and the footer.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pyte
import pytest

from .hostile import BODIES, END

ROOT = Path(__file__).resolve().parents[2]
COLUMNS, LINES = 100, 300
BEFORE = "printed before the reply"


def _run_in_pty(args: list[str], term: str) -> bytes:
    """Everything ``llm-rx ARGS`` writes to a terminal of COLUMNS x LINES (after a line of
    our own), read until it exits (bounded: 60 s)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    env = {**os.environ, "TERM": term, "COLUMNS": str(COLUMNS), "LINES": str(LINES),
           "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get(
               "PYTHONPATH")])])}
    env.pop("NO_COLOR", None)
    code = (f"print({BEFORE!r}, flush=True); import sys; from llm_rx.cli import main; "
            f"sys.exit(main({args!r}))")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=slave, stdout=slave,
                             stderr=slave, env=env, close_fds=True, cwd=ROOT)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if child.poll() is not None:
                    break
                continue
            try:
                piece = os.read(master, 65536)
            except OSError:  # (EIO: the child closed the terminal)
                break
            if not piece:
                break
            out += piece
    finally:
        os.close(master)
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)
    return bytes(out)


def _screen(written: bytes) -> pyte.Screen:
    screen = pyte.Screen(COLUMNS, LINES)
    stream = pyte.ByteStream(screen)
    stream.feed(written)
    return screen


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])  # rich Live, then plain text
@pytest.mark.parametrize("name", list(BODIES))
def test_hostile_reply_cannot_command_the_terminal(
    tmp_path: Path, name: str, term: str
) -> None:
    path = tmp_path / name
    path.write_bytes(BODIES[name]())
    written = _run_in_pty(["replay", str(path), "--delay", "0"], term)
    screen = _screen(written)
    assert screen.title == ""  # no OSC 0/1/2
    assert screen.icon_name == ""
    for command in (b"\x1b]52", b"\x1b]0;", b"\x1b]2;", b"\x1b]1;", b"\x1bc", b"\x1b[2J",
                    b"\xc2\x9b", b"\xc2\x9d", "\u202e".encode()):
        assert command not in written, command
    shown = "\n".join(line.rstrip() for line in screen.display)
    assert BEFORE in shown  # nothing cleared the screen or moved above the reply
    assert shown.index(BEFORE) < shown.index("partial" if "error" in name else "refuse"
                                             if "refusal" in name else "Answer:")
    assert END in shown
    assert "-- anthropic" in shown or "-- openai-chat" in shown  # the CLI's summary line
    if term == "dumb":
        assert b"\x1b" not in written  # plain text: no escape at all
    else:  # rich's own links only to http(s)
        assert b"\x1b]8;;https://attacker.invalid" not in written
