"""The browser targets judged by their own clients, over every capture: the AI SDK's
``readUIMessageStream`` (with its chunk schema) rebuilds the reply's text, reasoning and tool
calls from ``vercel-ui``; every ``ag-ui`` event validates against AG-UI's models and every
run passes ``ag-ui-validate``. And the rules both keep: live output, signatures for the next
turn, a cut or failed reply never finished, usage only where reported."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

import llm_rx
from llm_rx import Response, ThinkingBlock
from llm_rx import operators as lxo
from llm_rx.events import Event
from llm_rx.wire.citations import citations
from tests.captures import ONE_REPLY, Capture, capture
from tests.helpers import first_reply
from tests.streams import DONE, chat_chunk, sse
from tests.ui_judges import ag_ui_events, ag_ui_report, read_ui_streams


def _reply(cap: Capture) -> Response | None:
    try:
        return first_reply(cap.data, cap.provider)
    except llm_rx.LlmRxError:
        return None  # (a body that is no reply at all)


STREAMS = [cap for cap in ONE_REPLY if _reply(cap) is not None]
_IDS = [cap.name for cap in STREAMS]


def _want(response: Response) -> dict[str, Any]:
    return {
        "text": response.text + "".join(b.text for b in response.content if b.type == "refusal"),
        "reasoning": "".join(b.text for b in response.content if isinstance(b, ThinkingBlock)),
        "calls": [(call.id, call.name, call.arguments if call.arguments is not None
                   else call.raw_arguments) for call in response.tool_calls],
    }


# -- vercel-ui: the AI SDK's own client ------------------------------------------------------

@pytest.fixture(scope="module")
def ui_read() -> dict[str, dict[str, Any]]:
    bodies = [llm_rx.translate(cap.data, "vercel-ui", cap.provider) for cap in STREAMS]
    return dict(zip(_IDS, read_ui_streams(bodies), strict=True))


@pytest.mark.parametrize("cap", STREAMS, ids=_IDS)
def test_vercel_ui_is_read_by_the_ai_sdk(cap: Capture, ui_read: dict[str, dict[str, Any]]
                                         ) -> None:
    response = _reply(cap)
    assert response is not None
    read = ui_read[cap.name]
    assert not [e for e in read["errors"] if e.startswith(("schema", "thrown", "convert"))]
    message = read["message"]
    parts = message["parts"]
    calls = [p for p in parts if p["type"].startswith("tool-") and not p.get("providerExecuted")]
    got = {
        "text": "".join(p["text"] for p in parts if p["type"] == "text"),
        "reasoning": "".join(p["text"] for p in parts if p["type"] == "reasoning"),
        "calls": [(p["toolCallId"], p["type"][len("tool-"):], p["input"]) for p in calls],
    }
    want = _want(response)
    want["calls"] = [(call_id or f"call_{i}", name, args) for i, (call_id, name, args)
                     in enumerate(want["calls"])]
    got["calls"] = [(want_call[0] if want_call[0].startswith("call_") and not cap_id else
                     got_call[0], *got_call[1:]) for got_call, want_call, cap_id in zip(
                         got["calls"], want["calls"],
                         [call.id for call in response.tool_calls], strict=False)]
    assert got == want
    assert all(p["state"] == "input-available" for p in calls)
    if response.complete:
        assert read["errors"] == []
        assert read["chunks"][-1] == "finish"
        assert message["metadata"]["stopReason"] == response.stop_reason
    else:
        assert "finish" not in read["chunks"]
        assert read["errors"]  # (an error chunk: the page shows the reply failed)
    if response.id:
        assert message["id"] == response.id


@pytest.mark.parametrize("cap", [c for c in STREAMS if any(
    getattr(b, "signature", None) for b in _reply(c).content)],  # type: ignore[union-attr]
    ids=lambda c: c.name)
def test_vercel_ui_keeps_every_signature_for_the_next_turn(
    cap: Capture, ui_read: dict[str, dict[str, Any]]
) -> None:
    response = _reply(cap)
    assert response is not None
    # (what the page sends back, made into the next request's messages by the AI SDK)
    kept = orjson.dumps(ui_read[cap.name]["next"])
    for block in response.content:
        signature = getattr(block, "signature", None)
        if signature and block.type != "opaque":
            assert orjson.dumps(signature)[1:-1] in kept, block.type


def test_vercel_ui_signatures_sit_where_the_ai_sdk_providers_read_them(
    ui_read: dict[str, dict[str, Any]]
) -> None:
    def metadata(name: str, kind: str) -> list[Any]:
        parts = ui_read[name]["message"]["parts"]
        return [p.get("providerMetadata") or p.get("callProviderMetadata") for p in parts
                if p["type"] == kind or p["type"].startswith(kind)]

    assert "signature" in metadata("anthropic/thinking-signature.sse", "reasoning")[0][
        "anthropic"]
    assert "redactedData" in metadata("anthropic/redacted-thinking.sse", "reasoning")[0][
        "anthropic"]
    assert any(m and "thoughtSignature" in m["google"] for m in metadata(
        "gemini/sse-function-call-thought-signature.sse", "tool-"))


# -- ag-ui: the protocol's models and its validator ------------------------------------------

@pytest.mark.parametrize("cap", STREAMS, ids=_IDS)
def test_ag_ui_events_validate_and_the_run_passes_the_validator(cap: Capture) -> None:
    response = _reply(cap)
    assert response is not None
    body = llm_rx.translate(cap.data, "ag-ui", cap.provider)
    events = ag_ui_events(body)
    report = ag_ui_report(body)
    assert (report.summary.errors, report.summary.warnings) == (0, 0), report.diagnostics
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[str, list[Any]] = {}
    for event in events:
        kind = event["type"]
        if kind == "TEXT_MESSAGE_CONTENT":
            text.append(event["delta"])
        elif kind == "REASONING_MESSAGE_CONTENT":
            reasoning.append(event["delta"])
        elif kind == "TOOL_CALL_START":
            calls[event["toolCallId"]] = [event["toolCallName"], []]
        elif kind == "TOOL_CALL_ARGS":
            calls[event["toolCallId"]][1].append(event["delta"])
        elif kind == "TOOL_CALL_RESULT":
            calls.pop(event["toolCallId"])  # (a server tool's call, answered)
    servers = orjson.dumps([b.raw for b in response.content if b.type == "opaque"])
    for call_id in list(calls):  # (a server tool's call whose result never came)
        if call_id.startswith("server_") or f'"{call_id}"'.encode() in servers:
            del calls[call_id]
    outcome = events[-1].get("outcome") or {}  # (an interrupt: calls awaiting approval)
    asked = [calls.pop(interrupt["toolCallId"]) for interrupt in outcome.get("interrupts", [])]
    assert [(name, orjson.loads("".join(args))) for name, args in asked] == [
        (block.name, block.arguments) for block in response.approval_requests]
    want = _want(response)
    assert "".join(text) == want["text"]
    assert "".join(reasoning) == want["reasoning"]
    got_calls = [(name, orjson.loads("".join(args))) for name, args in calls.values()]
    assert got_calls == [(name, args if isinstance(args, dict) else {"_raw_arguments": raw})
                         for (_, name, args), raw in zip(
                             want["calls"], [c.raw_arguments for c in response.tool_calls],
                             strict=True)]
    ids = [call.id for call in response.tool_calls if call.id]
    assert ids == [call_id for call_id in calls if call_id in ids]
    assert events[0]["type"] == "RUN_STARTED"
    assert events[-1]["type"] == ("RUN_FINISHED" if response.complete else "RUN_ERROR")


def test_ag_ui_encrypted_reasoning_goes_as_encrypted_values() -> None:
    for name, subtype in (("anthropic/redacted-thinking.sse", "message"),
                          ("gemini/sse-function-call-thought-signature.sse", "tool-call")):
        cap = capture(name)
        events = ag_ui_events(llm_rx.translate(cap.data, "ag-ui", cap.provider))
        values = [e for e in events if e["type"] == "REASONING_ENCRYPTED_VALUE"]
        assert any(v["subtype"] == subtype for v in values), name


# -- rules both keep ------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["vercel-ui", "ag-ui"])
def test_ui_first_bytes_go_out_before_the_last_byte_comes_in(target: str) -> None:
    cap = capture("anthropic/thinking-signature.sse")
    pieces = [cap.data[i:i + 200] for i in range(0, len(cap.data), 200)]
    read = [0]

    def reads() -> Any:
        for piece in pieces:
            read[0] += 1
            yield piece

    seen: list[int] = []
    llm_rx.from_bytes(reads(), "anthropic").pipe(lxo.encode(target)).subscribe(
        lambda data: seen.append(read[0]))
    assert seen[0] < len(pieces) // 4
    assert len(seen) > len(pieces) // 2


# hand-written: an OpenAI reply that never reported usage (no include_usage)
NO_USAGE = sse(chat_chunk({"role": "assistant", "content": "Hi"}), chat_chunk({}, "stop")) + DONE


def test_ui_usage_absent_stays_absent() -> None:
    assert b"usage" not in llm_rx.translate(NO_USAGE, "vercel-ui", "openai-chat")
    events = ag_ui_events(llm_rx.translate(NO_USAGE, "ag-ui", "openai-chat"))
    assert "usage" not in events[-1]


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_ui_cut_source_never_reads_as_finished(cut: float) -> None:
    data = capture("anthropic/text-basic.sse").data
    data = data[: int(len(data) * cut)]
    ui = llm_rx.translate(data, "vercel-ui", "anthropic")
    assert b'"type":"finish"' not in ui
    assert b'"type":"error"' in ui
    events = ag_ui_events(llm_rx.translate(data, "ag-ui", "anthropic"))
    assert events[-1]["type"] == "RUN_ERROR"
    assert not [e for e in events if e["type"] == "RUN_FINISHED"]


def test_ui_provider_error_says_the_providers_words() -> None:
    data = capture("anthropic/error-overloaded-midstream.synthetic.sse").data
    ui = llm_rx.translate(data, "vercel-ui", "anthropic")
    error = [orjson.loads(f[6:]) for f in ui.split(b"\n\n") if b'"type":"error"' in f]
    assert "verloaded" in error[0]["errorText"]
    last = ag_ui_events(llm_rx.translate(data, "ag-ui", "anthropic"))[-1]
    assert last["type"] == "RUN_ERROR"
    assert "verloaded" in last["message"]


def test_ui_targets_read_the_events_alone() -> None:
    # the same events give the same bytes whatever source they came from: the encoders read
    # the canonical events (a reply rebuilt from its canonical JSON encodes the same)
    cap = capture("openai/chat-parallel-tool-calls.sse")
    events: list[Event] = []
    llm_rx.from_bytes(cap.data, cap.provider).subscribe(events.append)
    again: list[Event] = [llm_rx.event_from_dict(orjson.loads(orjson.dumps(
        llm_rx.event_to_dict(event)))) for event in events]
    for target in ("vercel-ui", "ag-ui"):
        one = llm_rx.encoders.make_encoder(target)
        two = llm_rx.encoders.make_encoder(target)
        assert one.encode(events) + one.finish() == two.encode(again) + two.finish()


@pytest.mark.parametrize("name", ["anthropic/web-search-citations.sse",
                                  "gemini/sse-google-search-grounding.sse",
                                  "openai/responses-annotations-raw.sse"])
def test_vercel_ui_citations_are_the_replys_sources_each_once(
    name: str, ui_read: dict[str, dict[str, Any]]
) -> None:
    cap = capture(name)
    response = first_reply(cap.data, cap.provider)
    cited = {c.url for block in citations(response) for c in block
             if c.url is not None}
    parts = ui_read[name]["message"]["parts"]
    urls = [p["url"] for p in parts if p["type"] == "source-url"]
    assert cited
    assert set(urls) == cited
    assert len(urls) == len(set(urls))
    lost: list[llm_rx.Dropped] = []
    llm_rx.translate(cap.data, "vercel-ui", cap.provider, on_dropped=lost.append)
    assert not [item for item in lost if item.what == "citation"]


@pytest.mark.parametrize("name", ["anthropic/thinking-signature.sse",
                                  "gemini/sse-function-call-thought-signature.sse",
                                  "anthropic/error-overloaded-midstream.synthetic.sse"])
def test_ag_ui_validate_command_passes_the_recorded_run(name: str, tmp_path: Path) -> None:
    command = shutil.which("ag-ui-validate")
    assert command is not None  # (installed with the dev extra)
    cap = capture(name)
    recorded = tmp_path / "run.sse"
    recorded.write_bytes(llm_rx.translate(cap.data, "ag-ui", cap.provider))
    done = subprocess.run([command, str(recorded), "--json", "--fail-on", "warning"],
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stdout[-2000:]
    report = orjson.loads(done.stdout)
    assert (report["summary"]["errors"], report["summary"]["warnings"]) == (0, 0)


@pytest.mark.parametrize("upto", [5, 40, 60])  # (inside the reasoning, the text, at its end)
def test_ui_cancelled_source_is_an_abort_and_a_cancelled_run(upto: int) -> None:
    events: list[Event] = []
    llm_rx.from_bytes(capture("anthropic/thinking-signature.sse").data, "anthropic").subscribe(
        events.append)
    cancelled = llm_rx.errors.CancelledStreamError("the page went away")
    ui = llm_rx.encoders.make_encoder("vercel-ui")
    body = ui.encode(events[:upto]) + ui.finish(cancelled)
    [read] = read_ui_streams([body])
    assert read["chunks"][-1] == "abort"
    assert "finish" not in read["chunks"]
    run = llm_rx.encoders.make_encoder("ag-ui")
    body = run.encode(events[:upto]) + run.finish(cancelled)
    kinds = [event["type"] for event in ag_ui_events(body)]
    last = ag_ui_events(body)[-1]
    assert (last["type"], last["outcome"]) == ("RUN_FINISHED", {"type": "cancelled"})
    assert last["metadata"] == {"stopReason": "interrupted"}
    assert "RUN_ERROR" not in kinds  # (a user's stop is no error)
    report = ag_ui_report(body)
    assert (report.summary.errors, report.summary.warnings) == (0, 0), report.diagnostics


def test_ag_ui_cancelled_inside_a_tool_calls_arguments_is_a_run_error() -> None:
    events: list[Event] = []
    cap = capture("openai/chat-parallel-tool-calls.sse")
    llm_rx.from_bytes(cap.data, cap.provider).subscribe(events.append)
    upto = next(i for i, e in enumerate(events) if type(e).__name__ == "ToolArgsDelta") + 2
    run = llm_rx.encoders.make_encoder("ag-ui")
    body = run.encode(events[:upto]) + run.finish(llm_rx.errors.CancelledStreamError("gone"))
    last = ag_ui_events(body)[-1]  # (a call cut in its arguments can never end: no finish)
    assert (last["type"], last["code"]) == ("RUN_ERROR", "cancelled")
    assert ag_ui_report(body).summary.errors == 0


@pytest.mark.parametrize("hostile", ["javascript:alert(1)", "JavaScript:alert(1)",
                                     "java\tscript:alert(1)", "data:text/html,<script>x</script>",
                                     " javascript:alert(1)", "//evil.example/"])
def test_vercel_ui_a_citation_url_that_is_no_safe_link_is_no_link(hostile: str) -> None:
    cap = capture("anthropic/web-search-citations.sse")
    url = b"https://abcnews.go.com/"
    data = cap.data.replace(url, orjson.dumps(hostile)[1:-1])
    assert data != cap.data
    body = llm_rx.translate(data, "vercel-ui", cap.provider)
    parts = [orjson.loads(line[6:]) for line in body.split(b"\n")
             if line.startswith(b"data: {")]
    links = [p["url"] for p in parts if p["type"] == "source-url"]
    assert links
    assert all(link.startswith("https://") for link in links)
    [document] = [p for p in parts if p["type"] == "source-document"
                  and p["title"].startswith("ABC News ")]
    assert "url" not in document  # (the search result's output keeps it: data, no link)
