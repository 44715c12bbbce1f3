"""The llm-rx command as a process: pipes, signals, stdin, messages and exit statuses."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

import llm_rx

from .captures import capture
from .streams import DONE, chat_chunk, sse

ROOT = Path(__file__).resolve().parent.parent
COMMAND = [sys.executable, "-m", "llm_rx"]
THINKING = capture("anthropic/thinking-signature.sse")


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args], cwd=ROOT, capture_output=True, timeout=120, check=False,
        text=True, input=None if stdin is None else stdin.decode(),
    )


@pytest.fixture
def cut(tmp_path: Path) -> Path:
    """The thinking capture cut inside its answer (a connection that dropped)."""
    data = THINKING.data
    path = tmp_path / "cut.sse"
    path.write_bytes(data[: data.index(b"without sig")])
    return path


def test_cli_replay_paced_cut_reply_shows_what_arrived_then_exits_1(cut: Path) -> None:
    result = run("replay", str(cut), "--delay", "0.0005")
    assert result.returncode == 1, result.stderr
    assert "**At intersections with traffic lights:**" in result.stdout  # nothing dropped
    assert "INCOMPLETE (incomplete: " in result.stdout
    assert "Traceback" not in result.stderr


def test_cli_replay_paced_and_instant_agree(cut: Path) -> None:
    paced, instant = run("replay", str(cut), "--delay", "0.0005"), run("replay", str(cut))
    assert (paced.returncode, paced.stdout) == (instant.returncode, instant.stdout)


def _many_events(path: Path, count: int = 20_000) -> Path:
    """A reply of ``count`` text deltas: its events are far more than a pipe buffers."""
    chunks = [chat_chunk({"role": "assistant", "content": ""})]
    chunks += [chat_chunk({"content": f"w{n} "}) for n in range(count)]
    path.write_bytes(sse(*chunks, chat_chunk({}, "stop")) + DONE)
    return path


def test_cli_events_into_a_closed_pipe_stops_quietly_as_cat_does(tmp_path: Path) -> None:
    body = _many_events(tmp_path / "long.sse")
    with subprocess.Popen([*COMMAND, "events", str(body)], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        first = process.stdout.readline()  # `| head -1`
        process.stdout.close()
        stderr = process.stderr.read()
        process.wait(timeout=60)
    assert orjson.loads(first)["type"] == "message_start"
    assert stderr == b""  # no traceback, no "Exception ignored"
    assert process.returncode == -signal.SIGPIPE  # a shell says 141, as for `cat`


def test_cli_events_head_in_a_shell_prints_one_line_and_nothing_else(tmp_path: Path) -> None:
    body = _many_events(tmp_path / "long.sse")
    command = " ".join([*COMMAND, "events", str(body)])
    result = subprocess.run(["bash", "-c", f"set -o pipefail; {command} | head -1"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.stdout.count("\n") == 1
    assert result.stderr == ""
    assert result.returncode == 141


def test_cli_ctrl_c_during_a_replay_exits_130_without_a_traceback() -> None:
    with subprocess.Popen([*COMMAND, "replay", str(THINKING.path), "--delay", "0.5"], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)  # the first text is out
        assert ready, "no output within 60 s"
        assert os.read(process.stdout.fileno(), 100)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert b"Traceback" not in stderr
    assert b"KeyboardInterrupt" not in stderr


def test_cli_dash_reads_stdin() -> None:
    result = run("reassemble", "-", stdin=THINKING.data)
    assert result.returncode == 0, result.stderr
    assert orjson.loads(result.stdout) == llm_rx.reassemble(THINKING.path).model_dump(mode="json")


@pytest.mark.parametrize("command", ["replay", "reassemble", "events"])
def test_cli_missing_file_is_said_so_with_exit_2(command: str) -> None:
    result = run(command, "/nonexistent/reply.sse")
    assert result.returncode == 2
    assert result.stderr == "llm-rx: no such file: /nonexistent/reply.sse\n"
    assert result.stdout == ""


def test_cli_events_reports_an_incomplete_reply_on_stderr_as_reassemble_does(cut: Path) -> None:
    events, reassembled = run("events", str(cut)), run("reassemble", str(cut))
    assert events.returncode == reassembled.returncode == 1
    lines = events.stdout.splitlines()
    assert all(llm_rx.event_from_dict(orjson.loads(line)) for line in lines)  # events only
    assert events.stderr == reassembled.stderr
    assert events.stderr.startswith("llm-rx: the reply is incomplete (incomplete: ")


def test_cli_events_provider_error_same_status_as_reassemble() -> None:
    path = str(capture("anthropic/error-overloaded-midstream.synthetic.sse").path)
    events, reassembled = run("events", path), run("reassemble", path)
    assert events.returncode == reassembled.returncode == 1
    assert "provider" in events.stderr
    assert orjson.loads(reassembled.stdout)["stop_reason"] == "error"


def test_cli_events_not_a_stream_on_stderr_only(tmp_path: Path) -> None:
    bad = tmp_path / "pull.ndjson"
    bad.write_bytes(b'{"status":"pulling manifest"}\n{"status":"success"}\n')
    result = run("events", str(bad))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("llm-rx: WireFormatError: ")


def test_cli_summary_shows_no_python_none() -> None:
    result = run("replay", str(capture("openai/chat-text-basic.sse").path))
    assert result.returncode == 0, result.stderr
    summary = result.stdout[result.stdout.index("\n-- "):]
    assert "None" not in summary
    # a count nobody reported: "—", never 0 or None; left out first when the line is full
    assert summary == ("\n-- openai-chat · gpt-4o-2024-08-06 · stop end_turn · complete · "
                       "input 14 · output 30 · reasoning 0\n")


def test_cli_version() -> None:
    result = run("--version")
    assert (result.returncode, result.stdout) == (0, f"llm-rx {llm_rx.__version__}\n")


def test_cli_to_without_native_is_refused() -> None:
    result = run("reassemble", str(THINKING.path), "--to", "openai-chat")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "usage: llm-rx reassemble" in result.stderr
    assert "--to only works with --native" in result.stderr


@pytest.mark.parametrize("delay", ["-1", "-0.01", "nan"])
def test_cli_negative_delay_is_refused(delay: str) -> None:
    result = run("replay", str(THINKING.path), f"--delay={delay}")
    assert result.returncode == 2
    assert "argument --delay: must be 0 or more seconds" in result.stderr
