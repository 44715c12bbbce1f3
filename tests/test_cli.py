"""The llm-rx command, run as a real subprocess (as a user runs it) and in process."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion

import llm_rx
from llm_rx.cli import _summary, _why, main
from llm_rx.data import DEMO_CAPTURES, capture_path

from .captures import capture
from .sinks.hostile import BODIES


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llm_rx", *args], capture_output=True, text=True, timeout=120,
        check=False,
    )


def test_cli_demo_runs_without_a_terminal_and_ends_each_reply_with_one_line() -> None:
    result = run("demo")
    assert result.returncode == 0, result.stderr
    assert "Here are the basic steps" in result.stdout  # the live text
    assert '"stop_reason"' not in result.stdout  # no JSON unless asked for
    replies = result.stdout.split("\n=== replaying ")[1:]
    assert len(replies) == len(DEMO_CAPTURES)
    for reply in replies:  # each ends with its summary: one line, within 100 columns
        _, marker, summary = reply.rstrip("\n").rpartition("\n-- ")
        assert marker
        assert "\n" not in summary
        assert len("-- " + summary) <= 100
        assert " · complete" in summary
        assert " · input " in summary
        assert " · output " in summary
    assert result.stdout.endswith("\n")


@pytest.mark.parametrize("name", [
    "anthropic/web-search-citations.sse", "mistral/magistral-thinking-chunks.sse",
    "openrouter/error-chunk-finish-length.sse", "anthropic/error-api-error-midstream.partial.sse",
])
@pytest.mark.parametrize("width", [100, 60])
def test_cli_summary_is_one_line_within_the_width(name: str, width: int) -> None:
    response = llm_rx.reassemble(capture(name).data)
    out = io.StringIO()
    _summary(response, out, width)
    line = out.getvalue()
    assert line.endswith("\n")
    assert line.count("\n") == 1
    assert len(line) - 1 <= width
    assert line.startswith(f"-- {response.provider} · ")
    assert (" · complete" in line) == response.complete
    if not response.complete:  # why it ended stays, shortened to the room there is
        assert " · INCOMPLETE (" in line
        assert _why(response) in line or "…)" in line
    if width == 100:  # the least useful parts go first: the counts of input and output stay
        assert "None" not in line
        assert " · —" not in line
        if response.usage.output_tokens is not None:
            assert f" · output {response.usage.output_tokens}" in line


def test_cli_demo_json_prints_each_reassembled_response() -> None:
    out = io.StringIO()
    assert main(["demo", "--json"], out=out) == 0
    assert out.getvalue().count("-- reassembled response:\n{") == len(DEMO_CAPTURES)
    assert '"stop_reason": "tool_use"' in out.getvalue()


def test_cli_reassemble_native_validates_as_the_sdk_type() -> None:
    result = run("reassemble", str(capture("openai/chat-parallel-tool-calls.sse").path),
                 "--native")
    assert result.returncode == 0, result.stderr
    ChatCompletion.model_validate(orjson.loads(result.stdout))


def test_cli_reassemble_reencodes_for_another_provider() -> None:
    out = io.StringIO()
    code = main(["reassemble", str(capture("openai/chat-text-basic.sse").path), "--native",
                 "--to", "anthropic"], out=out)
    assert code == 0
    message = Message.model_validate(orjson.loads(out.getvalue()))
    assert message.content[0].type == "text"


def test_cli_reassemble_canonical_json_matches_the_library() -> None:
    path = capture("anthropic/thinking-signature.sse").path
    out = io.StringIO()
    assert main(["reassemble", str(path)], out=out) == 0
    assert orjson.loads(out.getvalue()) == llm_rx.reassemble(path).model_dump(mode="json")


def test_cli_events_one_json_per_line() -> None:
    out = io.StringIO()
    assert main(["events", str(capture("anthropic/text-basic.sse").path)], out=out) == 0
    lines = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["type"] == "message_start"
    assert lines[-1]["type"] == "message_stop"
    events = [llm_rx.event_from_dict(line) for line in lines]
    assert llm_rx.event_to_dict(events[0]) == lines[0]


def test_cli_truncated_file_exits_1_and_still_prints(tmp_path: Path) -> None:
    cut = tmp_path / "cut.sse"
    cut.write_bytes(capture("openai/chat-text-basic.sse").data[:2000])
    out = io.StringIO()
    assert main(["reassemble", str(cut)], out=out) == 1
    body = orjson.loads(out.getvalue())
    assert body["complete"] is False
    assert body["stop_reason"] == "interrupted"


@pytest.mark.parametrize(
    "body", [b'{"status":"pulling manifest"}\n', b"<html>bad gateway</html>", b""]
)
def test_cli_bad_input_clear_message_exit_2(tmp_path: Path, body: bytes) -> None:
    bad = tmp_path / "bad.sse"
    bad.write_bytes(body)
    result = run("reassemble", str(bad), "--provider", "openai-chat") if body else run(
        "reassemble", str(bad)
    )
    assert result.returncode == 2
    assert "llm-rx:" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_missing_file_exit_2() -> None:
    result = run("reassemble", "/nonexistent/reply.sse")
    assert result.returncode == 2
    assert result.stderr == "llm-rx: no such file: /nonexistent/reply.sse\n"


def test_cli_replay_writes_live_text_and_summary() -> None:
    out = io.StringIO()
    assert main(["replay", str(capture("openai/chat-parallel-tool-calls.sse").path)], out=out) == 0
    text = out.getvalue()
    assert "[tool call] GetWeatherArgs(" in text
    assert "stop tool_use" in text


def test_cli_events_not_a_stream_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "pull.ndjson"
    bad.write_bytes(b'{"status":"pulling manifest"}\n{"status":"success"}\n')
    assert main(["events", str(bad)], out=io.StringIO()) == 2
    cut = tmp_path / "cut.sse"
    cut.write_bytes(capture("anthropic/text-basic.sse").data[:300])
    assert main(["events", str(cut)], out=io.StringIO()) == 1


@pytest.mark.parametrize("name", ["openai/chat-text-basic.nonstream.json",
                                  "anthropic/thinking-signature.nonstream.json",
                                  "ollama/generate-gemma3.nonstream.json"])
def test_cli_reassemble_reads_a_non_stream_body_as_its_reply(name: str) -> None:
    # bug class: a non-stream body (the request had stream: false) refused, or read as an
    # Ollama stream; DESIGN section 6 says the CLI reads it as from_native does
    path = Path(__file__).parent / "captures" / name
    out = io.StringIO()
    assert main(["reassemble", str(path)], out=out) == 0
    expected = llm_rx.from_native(path.read_bytes()).model_dump(mode="json")
    assert orjson.loads(out.getvalue()) == expected
    events = io.StringIO()
    assert main(["events", str(path)], out=events) == 0
    assert events.getvalue().splitlines()[-1].startswith('{"type":"message_stop"')


def test_cli_convert_prints_the_target_stream() -> None:
    source = capture("openai/chat-parallel-tool-calls.sse")
    result = subprocess.run(
        [sys.executable, "-m", "llm_rx", "convert", str(source.path), "--to", "anthropic"],
        capture_output=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == llm_rx.translate(source.data, "anthropic")
    assert result.stdout.startswith(b"event: message_start\n")


def test_cli_convert_cut_file_exits_1_and_reports_what_was_dropped(tmp_path: Path) -> None:
    data = capture("anthropic/thinking-signature.sse").data
    cut = tmp_path / "cut.sse"
    cut.write_bytes(data[: data.index(b"event: message_delta")])
    result = subprocess.run(
        [sys.executable, "-m", "llm_rx", "convert", str(cut), "--to", "ollama"],
        capture_output=True, timeout=120, check=False,
    )
    assert result.returncode == 1
    assert b'"done":true' not in result.stdout  # (no done line: the reply reads as cut)
    assert b"dropped signature (block 0)" in result.stderr
    assert b"incomplete" in result.stderr


def test_cli_convert_needs_a_target() -> None:
    result = run("convert", str(capture("openai/chat-text-basic.sse").path))
    assert result.returncode == 2
    assert "--to" in result.stderr


def test_bundled_captures_by_their_path_and_by_the_old_flat_name() -> None:
    assert all(capture_path(name).is_file() for name in DEMO_CAPTURES)
    assert capture_path("anthropic-thinking-signature.sse") == capture_path(
        "anthropic/thinking-signature.sse"
    )
    assert not capture_path("no-such-capture.sse").exists()


def test_bundled_capture_files_leave_out_bytecode_beside_the_module() -> None:
    # Python writes llm_rx/data/__pycache__/ on an ordinary machine: a glob of */*.* took
    # its .pyc files for captures (the docs' list of ids, and any user copying it).
    from llm_rx.data import bundled_folder, capture_files

    cache = bundled_folder() / "__pycache__"
    cache.mkdir(exist_ok=True)
    stray = cache / "stray.cpython-311.pyc"
    stray.write_bytes(b"\x00")
    try:
        files = capture_files()
    finally:
        stray.unlink()
    assert stray not in files
    assert {path.parent.name for path in files} == {
        "anthropic", "bedrock", "cohere", "gemini", "gemini-interactions", "ollama", "openai"}
    provenance = (bundled_folder() / "PROVENANCE.tsv").read_text().splitlines()[1:]
    assert len(files) == len(provenance)


@pytest.mark.parametrize("command", ["demo", "serve"])
def test_every_command_has_a_description_in_its_help(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    _usage, _, rest = capsys.readouterr().out.partition("\n\n")
    description = rest.split("\n\n", 1)[0]
    assert not description.startswith(("positional arguments", "options"))
    assert len(description) > 40


def test_cli_summary_writes_counts_as_the_footer_does() -> None:
    # bug: the summary said "input 4714" under a footer saying "input 4,714"
    response = llm_rx.reassemble(capture("anthropic/code-execution-bash.sse").data)
    out = io.StringIO()
    _summary(response, out)
    assert " · input 4,714 · output 304" in out.getvalue()


def test_cli_summary_and_messages_drop_what_a_reply_sends_to_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "error.sse"
    path.write_bytes(BODIES["anthropic-error.sse"]())
    out = io.StringIO()
    assert main(["replay", str(path)], out=out) == 1
    assert main(["reassemble", str(path)], out=io.StringIO()) == 1
    for written in (out.getvalue(), capsys.readouterr().err):
        assert "\x1b" not in written
        assert "\x9b" not in written
        assert "\u202e" not in written


def test_cli_json_writes_what_a_terminal_would_obey_as_escapes(tmp_path: Path) -> None:
    # orjson leaves DEL, the C1 controls (U+009B is an 8-bit CSI) and bidi overrides raw
    path = tmp_path / "reply.sse"
    path.write_bytes(BODIES["anthropic-reply.sse"]())
    out = io.StringIO()
    assert main(["events", str(path)], out=out) == 0
    written = out.getvalue()
    for raw in ("\x7f", "\x9b", "\x9d", "\u202e", "\u202c"):
        assert raw not in written
    assert "\\u009b2J" in written  # the same JSON: the string decodes to what was sent
    texts = [orjson.loads(line).get("text", "") for line in written.splitlines()]
    assert any("\x9b2J" in text for text in texts)


@pytest.mark.parametrize("to", ["ag-ui", "vercel-ui"])
def test_cli_reads_a_ui_stream_named_or_sniffed(to: str, tmp_path: Path) -> None:
    source = capture("anthropic/thinking-signature.sse")
    path = tmp_path / "ui.sse"
    path.write_bytes(llm_rx.translate(source.data, to=to, provider=source.provider))
    want = llm_rx.reassemble(source.data, source.provider)
    for given in (["--provider", to], []):
        out = io.StringIO()
        assert main(["reassemble", str(path), *given], out=out) == 0
        read = orjson.loads(out.getvalue())
        assert read["provider"] == to
        assert [b.get("text") for b in read["content"]] == [
            getattr(b, "text", None) for b in want.content]
