"""One stream, several responses: two recorded replies sent one after the other on one
stream decode to two responses, each with its own start and its own terminal, however the
bytes are cut, with the shortcuts on and off; a cut inside the second never makes it
complete; ``to_response()`` never merges them."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import ProtocolError, ProviderError
from llm_rx.events import Dropped, Event, MessageStart, MessageStop
from llm_rx.response import Response
from llm_rx.speed import fast_paths
from llm_rx.wire.registry import make_decoder

from ..captures import CAPTURES, SEVERAL_REPLIES, Capture
from ..helpers import decode_events, outcome, split_at
from ..streams import (
    MESSAGE_STOP,
    anthropic_events,
    block_delta,
    block_start,
    block_stop,
    message_delta,
    message_start,
    sse,
)
from .test_openai_responses import (
    USAGE,
    added,
    done,
    message,
    part_added,
    snapshot,
    stream,
    text_delta,
)
from .test_ui_readers import FIXTURES
from .test_ui_readers import _sse as ui_sse

# The wires whose streams may carry several responses (`Decoder.several`).
SEVERAL = ("openai-responses", "anthropic")


def _whole(cap: Capture) -> bool:
    """A capture that is one finished reply, its last frame ended."""
    if cap.provider not in SEVERAL or not cap.name.endswith(".sse"):
        return False
    reply = llm_rx.reassemble(cap.data, cap.provider)
    return reply.complete and cap.data.endswith(b"\n\n")


WHOLE = [cap for cap in CAPTURES if _whole(cap)]
PAIRS = [(a, b) for a, b in itertools.product(WHOLE, WHOLE) if a.provider == b.provider]


def _replies(chunks: list[bytes], provider: str) -> list[Response]:
    replies: list[Response] = llm_rx.from_bytes(chunks, provider=provider).pipe(
        lxo.to_responses()).run()
    return replies


def test_several_there_are_pairs_for_each_wire() -> None:
    assert {a.provider for a, _ in PAIRS} == set(SEVERAL)


@pytest.mark.parametrize("pair", PAIRS[:: max(len(PAIRS) // 40, 1)],
                         ids=lambda pair: f"{pair[0].name}+{pair[1].name}")
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])
def test_several_two_recorded_replies_are_two_responses(pair: tuple[Capture, Capture],
                                                        fast: bool) -> None:
    # bug class: the frames after the first reply's terminal ignored (the second reply lost)
    first, second = pair
    with fast_paths(fast):
        replies = _replies([first.data + second.data], first.provider)
    assert replies == [llm_rx.reassemble(first.data, first.provider),
                       llm_rx.reassemble(second.data, second.provider)]
    events, error = decode_events([first.data + second.data], first.provider)
    assert error is None
    assert [type(e) for e in events].count(MessageStop) == 2


@pytest.mark.parametrize("pair", PAIRS[:: max(len(PAIRS) // 10, 1)],
                         ids=lambda pair: f"{pair[0].name}+{pair[1].name}")
def test_several_to_response_never_merges_two_replies(pair: tuple[Capture, Capture]) -> None:
    first, second = pair
    reply = llm_rx.reassemble(first.data + second.data, first.provider)
    alone = llm_rx.reassemble(first.data, first.provider)
    assert not reply.complete
    assert reply.error is not None
    assert reply.error.kind == "protocol"
    assert reply.text == alone.text


@st.composite
def cut_pairs(draw: Callable[[Any], Any]) -> tuple[Capture, Capture, list[bytes], int | None]:
    """Two replies of one wire, one after the other, cut into reads, maybe cut short inside
    the second, before its terminal frame (where: returned)."""
    first, second = draw(st.sampled_from(PAIRS))
    body = first.data + second.data
    end = None
    if draw(st.booleans()):
        # (before the second's terminal frame: a last frame whole at EOF is read)
        end = draw(st.integers(len(first.data) + 1, len(first.data) + second.data.rindex(b"data:")))
        body = body[:end]
    cuts = draw(st.lists(st.integers(0, len(body)), max_size=8))
    return first, second, split_at(body, cuts), end


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cut_pairs())
def test_several_replies_cut_anywhere_decode_the_same(
        case: tuple[Capture, Capture, list[bytes], int | None]) -> None:
    first, second, chunks, end = case
    provider = first.provider
    fast = outcome(chunks, provider)
    with fast_paths(False):
        slow = outcome(chunks, provider)
        whole = outcome([b"".join(chunks)], provider)
    assert fast == slow == whole
    replies = _replies(chunks, provider)
    assert replies[0] == llm_rx.reassemble(first.data, provider)
    if end is None:
        assert replies[1:] == [llm_rx.reassemble(second.data, provider)]
    else:  # (cut inside the second: never complete; cut before its start: none)
        assert all(not reply.complete for reply in replies[1:])
        assert len(replies) <= 2


# -- OpenAI Responses: hand-made streams of the shapes the API documents ----------------------


def _reply(id: str, text: str, terminal: dict[str, Any]) -> bytes:
    created = snapshot("response.created", id=id)
    return stream(created, added(0, message()), part_added(0), text_delta(0, text),
                  done(0, message(text, status="completed")), terminal)


def _end(kind: str, id: str, **fields: Any) -> dict[str, Any]:
    status = kind.removeprefix("response.")
    return snapshot(kind, status, USAGE, id=id, **fields)


STEERED = _end("response.incomplete", "resp_1", incomplete_details={"reason": "steered"})


def test_several_a_steered_response_ends_interrupted_and_the_next_one_follows() -> None:
    # OpenAI's WebSocket mode: the client's next input cuts the open response short; it ends
    # ``incomplete`` (reason ``steered``) and a new ``response.created`` follows
    body = _reply("resp_1", "Let me", STEERED) + _reply(
        "resp_2", "Sure: Paris.", _end("response.completed", "resp_2"))
    first, second = _replies([body], "openai-responses")
    assert (first.id, first.text, first.stop_reason, first.stop_details) == (
        "resp_1", "Let me", "interrupted", "steered")
    assert first.complete  # (the provider ended it, with its usage: not a cut stream)
    assert first.usage.output_tokens == 30
    assert (second.id, second.text, second.stop_reason, second.complete) == (
        "resp_2", "Sure: Paris.", "end_turn", True)


def test_several_an_error_after_a_response_is_the_next_request_refused() -> None:
    # WebSocket mode's error event for the next response.create: the stream fails there,
    # the response before it whole (ignoring it would leave a reader waiting for a reply)
    refused = {"type": "error", "status": 400, "error": {
        "type": "invalid_request_error", "code": "previous_response_not_found",
        "message": "Previous response with id 'resp_x' not found."}}
    body = _reply("resp_1", "Hi", _end("response.completed", "resp_1")) + stream(refused)
    first, second = _replies([body], "openai-responses")
    assert (first.text, first.complete) == ("Hi", True)
    assert not second.complete
    assert second.error is not None
    assert second.error.kind == "provider"
    with pytest.raises(ProviderError):
        llm_rx.from_bytes(body, provider="openai-responses").run()


def test_several_nothing_follows_a_failed_response() -> None:
    failed = _end("response.failed", "resp_1", error={"code": "server_error", "message": "x"})
    body = _reply("resp_1", "Hi", failed) + _reply(
        "resp_2", "Again", _end("response.completed", "resp_2"))
    events, error = decode_events([body], "openai-responses")
    assert isinstance(error, ProviderError)
    assert [type(e) for e in events].count(MessageStart) == 1


def test_several_a_single_reply_decodes_as_before() -> None:
    # (a ``[DONE]`` or any other frame after the terminal event: ignored, counted)
    body = _reply("resp_1", "Hi", _end("response.completed", "resp_1"))
    tail = sse("[DONE]") + stream(text_delta(0, "late"))
    decoder = make_decoder("openai-responses")
    events = decoder.decode(body + tail) + decoder.flush()
    fresh = make_decoder("openai-responses")
    alone: list[Event] = fresh.decode(body) + fresh.flush()
    assert events == alone
    assert decoder.settled().ignored_frames == 2


# -- Anthropic: a second message_start ----------------------------------------------------------


def _message(id: str | None, text: str, *, stop: bool = True) -> list[dict[str, Any]]:
    start = message_start(id) if id is not None else message_start()
    if id is None:
        del start["message"]["id"]
    frames = [start, block_start(0, {"type": "text", "text": ""}),
              block_delta(0, {"type": "text_delta", "text": text})]
    return [*frames, block_stop(0), message_delta(), MESSAGE_STOP] if stop else frames


def _anthropic(*frames: dict[str, Any]) -> list[Response]:
    replies: list[Response] = llm_rx.from_bytes(
        anthropic_events(*frames), provider="anthropic").pipe(lxo.to_responses()).run()
    return replies


def test_several_anthropic_messages_one_after_another() -> None:
    replies = _anthropic(*_message("msg_1", "one"), *_message("msg_2", "two"))
    assert [(r.id, r.text, r.complete) for r in replies] == [
        ("msg_1", "one", True), ("msg_2", "two", True)]


@pytest.mark.parametrize("second", ["msg_2", "msg_1"], ids=["another id", "the same id"])
def test_several_anthropic_a_message_start_after_content_starts_the_next(second: str) -> None:
    # (the open message ends there, not complete: its block never ended)
    first, then = _anthropic(*_message("msg_1", "cut", stop=False), *_message(second, "two"))
    assert (first.text, first.complete, first.stop_reason) == ("cut", False, "interrupted")
    assert (then.id, then.text, then.complete) == (second, "two", True)


def test_several_anthropic_the_same_start_before_content_is_one_message() -> None:
    frames = _message("msg_1", "one")
    (reply,) = _anthropic(frames[0], *frames)
    assert (reply.text, reply.complete) == ("one", True)


def test_several_anthropic_a_start_without_id_while_open_is_a_protocol_error() -> None:
    events, error = decode_events(
        [anthropic_events(*_message("msg_1", "cut", stop=False), *_message(None, "two"))],
        "anthropic")
    assert isinstance(error, ProtocolError)
    assert [type(e) for e in events].count(MessageStart) == 1


SEVERAL_TARGETS = ["anthropic", "openai-responses", "vercel-ui", "ag-ui"]
ONE_TARGET = ["openai-chat", "gemini", "bedrock-converse", "ollama"]


@pytest.mark.parametrize("to", SEVERAL_TARGETS + ONE_TARGET)
def test_several_a_translation_writes_each_response_where_the_target_carries_several(
        to: str) -> None:
    # (a target whose stream carries several gets each, afresh; any other the first, and
    # each next one reported: never merged into it)
    messages = [_message("msg_1", "one"), _message("msg_2", "two"), _message("msg_3", "three")]
    dropped: list[Dropped] = []
    written = llm_rx.translate(anthropic_events(*[f for m in messages for f in m]), to=to,
                               provider="anthropic", on_dropped=dropped.append)
    alone = [llm_rx.translate(anthropic_events(*m), to=to, provider="anthropic")
             for m in messages]
    lost = [(d.what, d.raw) for d in dropped if d.what == "response"]
    if to in SEVERAL_TARGETS:
        assert written == b"".join(alone)
        assert lost == []
        assert [r.text for r in _replies([written], to)] == ["one", "two", "three"]
    else:
        assert written == alone[0]
        assert lost == [("response", "msg_2"), ("response", "msg_3")]


# -- the UI streams: several runs / messages on one connection ---------------------------------


def test_several_ag_ui_the_run_that_resumes_an_interrupt_is_the_next_reply() -> None:
    # AG-UI's specification fixture: a run ends with an interrupt outcome, and the run that
    # resumes it (parentRunId) follows on the same stream
    fixture = next(f for f in FIXTURES if f.stem == "human-in-the-loop")
    lines = [line for line in fixture.read_bytes().splitlines() if line.strip()]
    first, second = _replies([ui_sse(lines)], "ag-ui")
    # (the first run stops to ask: its interrupt names the call, an approval request)
    assert (first.id, first.complete, first.stop_reason) == ("run_001", True, "tool_use")
    assert first.text == "I need your approval to delete 3 files."
    assert [b.type for b in first.content] == ["text", "tool_call", "approval_request"]
    assert (second.id, second.text, second.complete) == (
        "run_002", "Done \u2014 3 files deleted.", True)


@pytest.mark.parametrize("to", ["ag-ui", "vercel-ui"])
def test_several_ui_replies_one_after_another_are_each_their_own(to: str) -> None:
    caps = [c for c in WHOLE if c.provider == "anthropic"][:2] + [
        c for c in WHOLE if c.provider == "openai-responses"][:1]
    bodies = [llm_rx.translate(c.data, to=to, provider=c.provider) for c in caps]
    # (vercel-ui's [DONE] after each message's finish: ignored, as after the last one)
    replies = _replies([b"".join(bodies)], to)
    assert [r.model_dump() for r in replies] == [
        llm_rx.reassemble(body, to).model_dump() for body in bodies]  # type: ignore[arg-type]
    cut = b"".join(bodies)[: len(bodies[0]) + len(bodies[1]) // 2]
    replies = _replies([cut], to)
    assert [r.complete for r in replies] == [True, False]


def test_several_a_response_created_while_one_is_open_starts_the_next() -> None:
    # (DESIGN: a second response.created while a response is open: the open one not complete)
    cut = stream(snapshot("response.created", id="resp_1"), added(0, message()),
                 part_added(0), text_delta(0, "Let"), text_delta(0, " me"))
    body = cut + _reply("resp_2", "Paris.", _end("response.completed", "resp_2"))
    for fast in (True, False):
        with fast_paths(fast):
            first, second = _replies([body], "openai-responses")
            assert outcome([body], "openai-responses") == outcome(
                split_at(body, range(0, len(body), 7)), "openai-responses")
        assert (first.id, first.text, first.complete, first.stop_reason) == (
            "resp_1", "Let me", False, "interrupted")
        assert (second.id, second.text, second.complete) == ("resp_2", "Paris.", True)
    # (a proxy that rotates ids between events: in_progress with another id is no new reply)
    rotated = stream(snapshot("response.created", id="resp_1"),
                     snapshot("response.in_progress", id="resp_rotated"), added(0, message()),
                     part_added(0), text_delta(0, "Hi"), done(0, message("Hi", status="completed")),
                     _end("response.completed", "resp_rotated"))
    assert [r.text for r in _replies([rotated], "openai-responses")] == ["Hi"]


@pytest.mark.parametrize("to", SEVERAL_TARGETS + ONE_TARGET)
def test_several_a_translation_never_merges_a_response_started_while_one_is_open(
        to: str) -> None:
    # (the first one is written cut, never finished; the next one is written after it, or
    # reported: never merged in)
    body = anthropic_events(*_message("msg_1", "cut", stop=False), *_message("msg_2", "two"))
    dropped: list[Dropped] = []
    written = llm_rx.translate(body, to=to, provider="anthropic", on_dropped=dropped.append)
    lost = [(d.what, d.raw) for d in dropped if d.what == "response"]
    if to in ("anthropic", "openai-responses"):
        replies = _replies([written], to)
        assert [(r.text, r.complete) for r in replies] == [("cut", False), ("two", True)]
        assert lost == []
    elif to in SEVERAL_TARGETS:  # (a UI stream ends a cut run with its error event: a
        reply = llm_rx.reassemble(written, to)  # reader stops there; the next one follows)
        assert (reply.text, reply.complete) == ("cut", False)
        assert written.endswith(llm_rx.translate(
            anthropic_events(*_message("msg_2", "two")), to=to, provider="anthropic"))
        assert lost == []
    else:
        reply = llm_rx.reassemble(written, to)  # type: ignore[arg-type]
        assert (reply.text, reply.complete) == ("cut", False)
        assert lost == [("response", "msg_2")]


def test_several_the_recorded_bodies_of_several_replies_are_known() -> None:
    # (tests about one reply leave these out: tests/captures.py SEVERAL_REPLIES)
    def stops(cap: Capture) -> int:
        return [type(e) for e in decode_events([cap.data], cap.provider)[0]].count(MessageStop)

    assert {cap.name for cap in CAPTURES if stops(cap) > 1} == SEVERAL_REPLIES


@pytest.mark.parametrize("name", sorted(SEVERAL_REPLIES))
@pytest.mark.parametrize("to", SEVERAL_TARGETS)
def test_several_a_recorded_body_of_several_replies_translates_to_each(name: str,
                                                                         to: str) -> None:
    cap = next(c for c in CAPTURES if c.name == name)
    source = _replies([cap.data], cap.provider)
    back = _replies([llm_rx.translate(cap.data, to=to, provider=cap.provider)], to)
    assert len(back) == len(source) > 1
    assert [(r.text, r.complete) for r in back] == [(r.text, r.complete) for r in source]
    calls = [[c.name for c in r.tool_calls] for r in back]
    wanted = [[c.name for c in r.tool_calls] for r in source]
    if to == "ag-ui":  # (AG-UI writes the server tool's call as a tool call too)
        calls = [[name for name in names if name != "code_execution"] for names in calls]
    assert calls == wanted
