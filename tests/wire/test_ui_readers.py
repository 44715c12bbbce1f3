"""Reading the browser protocols (``ag-ui``, ``vercel-ui``) back into llm-rx's events: every
recorded reply translated to a UI stream reads back to the same text, thinking and tool
calls; AG-UI's own specification fixtures read as complete runs; a cut run is never
complete; an error frame is the provider's error."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import ag_ui_validate
import orjson
import pytest

import llm_rx
from llm_rx import IncompleteStreamError, ProviderError
from llm_rx.encoders import make_encoder
from llm_rx.errors import CancelledStreamError, WireFormatError
from llm_rx.events import BlockStart, Custom, Event, MessageStart, TextDelta
from llm_rx.response import Response
from llm_rx.wire import sniff
from tests.captures import CAPTURES, ONE_REPLY, Capture
from tests.helpers import first_reply
from tests.ui_judges import ag_ui_events, ag_ui_report

TARGETS = ["ag-ui", "vercel-ui"]
FIXTURES = sorted((Path(ag_ui_validate.__file__).parent / "spec" / "fixtures" / "valid")
                  .glob("*.jsonl"))


def _source(cap: Capture) -> Response | None:
    try:
        return first_reply(cap.data, cap.provider)  # (a translation writes the first one)
    except llm_rx.LlmRxError:
        return None


STREAMS = [cap for cap in ONE_REPLY if _source(cap) is not None]


def _content(response: Response, clients: set[str] | None = None) -> list[Any]:
    """What a UI stream carries of a reply: the text (a refusal is text there), the
    thinking, the client's tool calls (``clients`` when the stream names them; server tools
    are calls the provider ran: in AG-UI, a call its run answers with a
    ``TOOL_CALL_RESULT``), by id when the source gave one."""
    ran = {block.raw.get("toolCallId") for block in response.content
           if block.type == "opaque" and block.kind == "tool_call_result"}
    out: list[Any] = []
    for block in response.content:
        if block.type == "text" or block.type == "refusal":
            if out and out[-1][0] == "text" and block.type == "refusal":
                out[-1] = ("text", out[-1][1] + block.text)
            else:
                out.append(("text", block.text))
        elif block.type == "thinking":
            out.append(("thinking", block.text, block.signature, block.redacted))
        elif block.type == "tool_call" and block.id not in ran and (
                clients is None or block.id in clients):
            arguments = block.arguments
            if arguments is None:  # (AG-UI carries arguments that are no JSON so)
                arguments = {"_raw_arguments": block.raw_arguments}
            out.append(("tool_call", block.name, arguments))
    return out


def _calls(response: Response, clients: set[str] | None) -> list[str | None]:
    ran = {block.raw.get("toolCallId") for block in response.content
           if block.type == "opaque" and block.kind == "tool_call_result"}
    return [b.id for b in response.content if b.type == "tool_call" and b.id not in ran
            and (clients is None or b.id in clients)]


def _clients(body: bytes) -> set[str] | None:
    """The calls an AG-UI run leaves for its client (``pendingToolCallIds``), if it ended."""
    for frame in body.split(b"\n\n"):
        if b'"RUN_FINISHED"' in frame:
            outcome = orjson.loads(frame[6:]).get("outcome", {})
            return set(outcome.get("pendingToolCallIds", ()))
    return None


def _first_run(fixture: Path) -> list[bytes]:
    """The fixture's events up to its first run's end (a run answering an interrupt is the
    next response on the stream: what is read after the first run's end is not this one's)."""
    lines = [line for line in fixture.read_bytes().splitlines() if line.strip()]
    end = next(n for n, line in enumerate(lines) if b'"RUN_FINISHED"' in line)
    return lines[:end + 1]


def _sse(lines: list[bytes]) -> bytes:
    return b"".join(b"data: " + line + b"\n\n" for line in lines)


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("cap", STREAMS, ids=[cap.name for cap in STREAMS])
def test_ui_round_trip_gives_the_same_reply(cap: Capture, to: str) -> None:
    source = _source(cap)
    assert source is not None
    body = llm_rx.translate(cap.data, to=to, provider=cap.provider)
    for provider in (to, None):  # (named and sniffed)
        back = llm_rx.reassemble(body, provider)  # type: ignore[arg-type]
        assert back.provider == to
        clients = _clients(body) if to == "ag-ui" else None
        assert _content(back, clients) == _content(source)
        assert _calls(back, clients) == [b.id or f"call_{n}" for n, b in
                                         enumerate(source.content) if b.type == "tool_call"]
        assert back.complete == source.complete
        if source.complete:
            assert back.stop_reason == source.stop_reason
            assert back.usage.model_dump(exclude={"native"}) == (
                source.usage.model_dump(exclude={"native"}))


@pytest.mark.parametrize("to", TARGETS)
def test_ui_sniffed(to: str) -> None:
    body = llm_rx.translate(CAPTURES[0].data, to=to, provider=CAPTURES[0].provider)
    assert sniff(body) == to


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_ag_ui_specification_fixtures_read_as_complete_runs(fixture: Path) -> None:
    lines = _first_run(fixture)
    body = _sse(lines)
    response = llm_rx.reassemble(body, "ag-ui")
    assert response.complete
    assert response.error is None
    texts = [orjson.loads(line) for line in lines]
    said = "".join(e["delta"] for e in texts
                   if e["type"] in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK"))
    assert response.text == said
    calls = [e["toolCallId"] for e in texts if e["type"] == "TOOL_CALL_START"]
    assert [b.id for b in response.content if b.type == "tool_call"] == calls
    assert llm_rx.reassemble(body).provider == "ag-ui"  # (sniffed)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_ag_ui_a_run_cut_before_run_finished_is_never_complete(fixture: Path) -> None:
    cut = _sse(_first_run(fixture)[:-1])  # (everything before RUN_FINISHED)
    response = llm_rx.reassemble(cut, "ag-ui")
    assert not response.complete
    assert response.stop_reason == "interrupted"
    assert response.error is not None
    assert response.error.kind == "incomplete"
    with pytest.raises(IncompleteStreamError):
        llm_rx.from_bytes(cut, provider="ag-ui").run()


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("at", [0.2, 0.5, 0.9])
def test_ui_a_stream_cut_before_its_end_is_never_complete(to: str, at: float) -> None:
    cap = next(c for c in STREAMS if c.name == "anthropic/thinking-signature.sse")
    body = llm_rx.translate(cap.data, to=to, provider=cap.provider)
    cut = body[:int(len(body) * at)]
    response = llm_rx.reassemble(cut, to)  # type: ignore[arg-type]
    assert not response.complete
    assert response.stop_reason == "interrupted"


def test_ag_ui_run_error_is_the_providers_error() -> None:
    body = (b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
            b'data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n'
            b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"Hel"}\n\n'
            b'data: {"type":"RUN_ERROR","message":"overloaded","code":"overloaded_error"}\n\n')
    response = llm_rx.reassemble(body, "ag-ui")
    assert response.text == "Hel"
    assert not response.complete
    assert response.stop_reason == "error"
    assert response.error is not None
    assert response.error.kind == "provider"
    assert response.error.message == "overloaded"
    with pytest.raises(ProviderError) as raised:
        llm_rx.from_bytes(body, provider="ag-ui").run()
    assert raised.value.code == "overloaded_error"


def test_vercel_ui_error_and_abort() -> None:
    head = (b'data: {"type":"start","messageId":"m1"}\n\n'
            b'data: {"type":"text-start","id":"0"}\n\n'
            b'data: {"type":"text-delta","id":"0","delta":"Hi"}\n\n')
    failed = llm_rx.reassemble(head + b'data: {"type":"error","errorText":"boom"}\n\n'
                               b"data: [DONE]\n\n", "vercel-ui")
    assert failed.text == "Hi"
    assert failed.stop_reason == "error"
    assert failed.error is not None
    assert failed.error.message == "boom"
    aborted = llm_rx.reassemble(head + b'data: {"type":"abort"}\n\n', "vercel-ui")
    assert aborted.error is not None
    assert aborted.error.kind == "cancelled"
    with pytest.raises(CancelledStreamError):
        llm_rx.from_bytes(head + b'data: {"type":"abort"}\n\n', provider="vercel-ui").run()
    done_only = llm_rx.reassemble(head + b"data: [DONE]\n\n", "vercel-ui")
    assert not done_only.complete
    assert done_only.stop_reason == "interrupted"


def test_vercel_ui_reads_what_the_ai_sdk_writes() -> None:
    # (chunks as the AI SDK's streamText().toUIMessageStreamResponse() writes them: no
    # llm-rx metadata, a tool call whose input arrives whole, a data part)
    body = b"".join(b"data: " + orjson.dumps(chunk) + b"\n\n" for chunk in [
        {"type": "start"}, {"type": "start-step"},
        {"type": "reasoning-start", "id": "r1"},
        {"type": "reasoning-delta", "id": "r1", "delta": "think"},
        {"type": "reasoning-end", "id": "r1"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": "Hello"},
        {"type": "text-end", "id": "t1"},
        {"type": "data-weather", "data": {"city": "Paris"}},
        {"type": "tool-input-start", "toolCallId": "ws1", "toolName": "web_search",
         "providerExecuted": True},
        {"type": "tool-input-delta", "toolCallId": "ws1", "inputTextDelta": '{"query":'},
        {"type": "tool-input-delta", "toolCallId": "ws1", "inputTextDelta": '"x"}'},
        {"type": "tool-input-available", "toolCallId": "ws1", "toolName": "web_search",
         "input": {"query": "x"}, "providerExecuted": True},
        {"type": "tool-output-available", "toolCallId": "ws1", "output": [],
         "providerExecuted": True},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "get",
         "input": {"q": 1}},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "tool-calls"},
    ]) + b"data: [DONE]\n\n"
    response = llm_rx.reassemble(body)
    assert response.provider == "vercel-ui"
    assert response.complete
    assert response.text == "Hello"
    assert response.stop_reason == "tool_use"
    assert [(b.type, getattr(b, "text", None)) for b in response.content][:2] == [
        ("thinking", "think"), ("text", "Hello")]
    # (a tool the provider ran, streamed: its call and result, never a call to run)
    assert [(b.type, getattr(b, "kind", None)) for b in response.content[2:4]] == [
        ("opaque", "tool-input-available"), ("opaque", "tool-output-available")]
    assert [c.id for c in response.tool_calls] == ["c1"]
    call = response.content[4]
    assert call.type == "tool_call"
    assert call.arguments == {"q": 1}
    assert call.name == "get"


def _events(body: bytes, provider: str) -> list[Event]:
    out: list[Event] = []
    llm_rx.from_bytes(body, provider=provider).subscribe(out.append)  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("to", TARGETS)
def test_ui_custom_events_are_written_and_read_back(to: str) -> None:
    custom = Custom("source", {"url": "https://example.org/<b>", "n": [1, 2]})
    events: list[Event] = [MessageStart("anthropic", "m", "msg_1"), custom,
                           BlockStart(0, "text"), TextDelta(0, "Hi"),
                           llm_rx.events.BlockStop(0), Custom("progress", "half"),
                           llm_rx.events.MessageStop("end_turn")]
    dropped: list[llm_rx.Dropped] = []
    encoder = make_encoder(to, dropped)
    body = encoder.encode(events) + encoder.finish(None)
    assert not dropped
    back = _events(body, to)
    assert [e for e in back if isinstance(e, Custom)] == [custom, Custom("progress", "half")]
    assert llm_rx.reassemble(body, to).text == "Hi"  # type: ignore[arg-type]


def test_ui_readers_refuse_another_wire() -> None:
    chat = next(c for c in CAPTURES if c.provider == "openai-chat")
    for to in TARGETS:
        with pytest.raises(WireFormatError):
            llm_rx.from_bytes(chat.data, provider=to).run()  # type: ignore[arg-type]


def _all(chunks: list[bytes], provider: str | None) -> list[Any]:
    out: list[Any] = []
    llm_rx.from_bytes(chunks, provider=provider).subscribe(  # type: ignore[arg-type]
        out.append, out.append)
    return [(type(e), *e) if isinstance(e, tuple) else (type(e), str(e)) for e in out]


async def _all_async(body: bytes, provider: str) -> list[Any]:
    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 100):
            yield body[start:start + 100]

    out: list[Any] = []
    async for event in llm_rx.to_aiter(
            llm_rx.from_async_bytes(chunks(), provider=provider)):  # type: ignore[arg-type]
        out.append((type(event), *event))
    return out


@pytest.mark.parametrize("to", TARGETS)
@pytest.mark.parametrize("name", ["anthropic/thinking-signature.sse",
                                  "openai/chat-parallel-tool-calls.sse"])
def test_ui_events_do_not_depend_on_where_the_reads_end(to: str, name: str) -> None:
    cap = next(c for c in STREAMS if c.name == name)
    body = llm_rx.translate(cap.data, to=to, provider=cap.provider)
    whole = _all([body], to)
    assert _all([body[n:n + 1] for n in range(len(body))], to) == whole  # (byte by byte)
    assert _all([body[n:n + 1] for n in range(len(body))], None) == whole  # (sniffed too)
    for cut in range(1, len(body), 13):
        assert _all([body[:cut], body[cut:]], to) == whole, cut
    assert asyncio.run(_all_async(body, to)) == whole  # (the async engine: the same)


@pytest.mark.parametrize("fixture", [f for f in FIXTURES if b"STATE_" in f.read_bytes()],
                         ids=lambda f: f.stem)
def test_ag_ui_state_is_the_applications_and_is_written_back_as_agui_state(
        fixture: Path) -> None:
    lines = _first_run(fixture)
    frames = [orjson.loads(line) for line in lines]
    events = _events(_sse(lines), "ag-ui")
    state = [e for e in events if isinstance(e, Custom) and e.name.startswith("state_")]
    assert state == [Custom("state_snapshot", f["snapshot"]) if f["type"] == "STATE_SNAPSHOT"
                     else Custom("state_delta", f["delta"])
                     for f in frames if f["type"] in ("STATE_SNAPSHOT", "STATE_DELTA")]
    encoder = make_encoder("ag-ui")
    again = encoder.encode(events) + encoder.finish(None)
    written = ag_ui_events(again)  # (each validated by AG-UI's own models)
    assert [(f["type"], f.get("snapshot", f.get("delta"))) for f in written
            if f["type"].startswith("STATE_")] == [
        (f["type"], f.get("snapshot", f.get("delta"))) for f in frames
        if f["type"].startswith("STATE_")]
    report = ag_ui_report(again)
    assert (report.summary.errors, report.summary.warnings) == (0, 0), report.diagnostics
