"""The official ``google-genai`` interactions client against the emulator: its streamed and
non-streamed ``create`` for every Interactions capture, its ``get`` (retrieve, and resume
with ``last_event_id``), ``cancel`` and ``delete``, a scripted reply, and the recording
proxy in front of it, over a real socket. Each gets the reply ``llm_rx.reassemble(file)``
gives.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google import genai

import llm_rx
from llm_rx import operators as lxo
from llm_rx.serve import EmulatorThread
from llm_rx.serve._record_main import RecorderThread
from llm_rx.testing import reply
from tests.captures import CAPTURES, Capture, capture

from .replies import Reply, assert_same, model_of, params

pytestmark = pytest.mark.oracle

STATUS = {"completed": "end_turn", "requires_action": "tool_use", "incomplete": "max_tokens"}
# The recorded streams of the early-2026 schema are served as they came: an SDK of the
# current schema reads their events as unknown ones (llm-rx decodes both schemas).
CURRENT = [cap for cap in CAPTURES if cap.provider == "gemini-interactions"
           and "legacy_schema" not in cap.features]


@pytest.fixture(scope="module")
def client(llm_rx_server: EmulatorThread) -> Iterator[genai.Client]:
    with genai.Client(api_key="test", http_options={"base_url": llm_rx_server.url}) as made:
        yield made


def events_reply(events: list[Any]) -> Reply:
    """What the SDK's typed events add up to (it has no accumulator: added up as its docs
    show)."""
    text: list[str] = []
    calls: dict[int, list[Any]] = {}
    status, usage = None, (None, None)
    for event in events:
        if event.event_type == "step.start" and event.step.type == "function_call":
            calls[event.index] = [event.step.id, event.step.name, ""]
        elif event.event_type == "step.delta" and event.delta.type == "text":
            text.append(event.delta.text)
        elif event.event_type == "step.delta" and event.delta.type == "arguments_delta":
            calls[event.index][2] += event.delta.arguments or ""
        elif event.event_type == "interaction.completed":
            status = event.interaction.status
            usage = usage_of(event.interaction.usage)
    found = [(id_, name, json.loads(args) if args else {}) for id_, name, args
             in calls.values()]
    stop = STATUS.get(str(status), status)
    return Reply("".join(text), found, stop if not (stop == "end_turn" and found) else
                 "tool_use", usage)


def usage_of(usage: Any) -> tuple[int | None, int | None]:
    if usage is None:
        return (None, None)
    into = None if usage.total_input_tokens is None else (
        usage.total_input_tokens + (usage.total_tool_use_tokens or 0))
    out = None if usage.total_output_tokens is None and usage.total_thought_tokens is None \
        else (usage.total_output_tokens or 0) + (usage.total_thought_tokens or 0)
    return (into, out)


def body_reply(interaction: Any) -> Reply:
    text = "".join(content.text for step in interaction.steps or ()
                   if step.type == "model_output" for content in step.content or ()
                   if content.type == "text")
    calls = [(step.id, step.name, step.arguments) for step in interaction.steps or ()
             if step.type == "function_call"]
    stop = STATUS.get(str(interaction.status), interaction.status)
    return Reply(text, calls, stop, usage_of(interaction.usage))


@pytest.mark.parametrize("cap", params(CURRENT))
def test_interactions_stream_is_read_by_genai(client: genai.Client, cap: Capture) -> None:
    # (the client reads a Google Search step start its event type refuses as an unknown
    # event: tests/wire/test_gemini_interactions_genai.py)
    events = list(client.interactions.create(model=model_of(cap), input="hi", stream=True))
    assert_same(events_reply(events), cap, {})


@pytest.mark.parametrize("cap", params(CURRENT))
def test_interactions_body_is_read_by_genai(client: genai.Client, cap: Capture) -> None:
    interaction = client.interactions.create(model=model_of(cap), input="hi")
    assert_same(body_reply(interaction), cap, {})


def test_interactions_retrieve_resume_cancel_delete(client: genai.Client) -> None:
    cap = capture("gemini-interactions/function-call-requires-action.sse")
    events = list(client.interactions.create(model=model_of(cap), input="hi", stream=True))
    id_ = events[0].interaction.id
    assert id_ == llm_rx.reassemble(cap.data).id
    got = client.interactions.get(id_)
    assert body_reply(got) == events_reply(events)
    again = list(client.interactions.get(id_, stream=True))
    assert events_reply(again) == events_reply(events)
    numbers = [event.event_id for event in again]
    assert numbers == [str(n) for n in range(1, len(again) + 1)]
    resumed = list(client.interactions.get(id_, stream=True, last_event_id="4"))
    assert [event.event_id for event in resumed] == numbers[4:]
    joined = b"".join(  # (the first connection's events then the resumed ones: whole)
        _sse(event) for event in [*again[:4], *resumed])
    assert llm_rx.reassemble(joined, "gemini-interactions") == llm_rx.reassemble(
        b"".join(_sse(event) for event in again), "gemini-interactions")
    assert client.interactions.cancel(id_).status == "cancelled"
    assert client.interactions.get(id_).status == "cancelled"
    client.interactions.delete(id_)
    with pytest.raises(Exception) as missing:  # (the SDK's NotFoundError)
        client.interactions.get(id_)
    assert getattr(missing.value, "status_code", None) == 404


def _sse(event: Any) -> bytes:
    data = event.model_dump_json(by_alias=True, exclude_none=True)
    return b"event: " + event.event_type.encode() + b"\ndata: " + data.encode() + b"\n\n"


def test_interactions_scripted_reply(client: genai.Client,
                                     llm_rx_server: EmulatorThread) -> None:
    llm_rx_server.queue(reply(text="Paris.", thinking="capital of France",
                              usage={"input_tokens": 4, "output_tokens": 9}))
    events = list(client.interactions.create(model="any", input="hi", stream=True))
    assert events_reply(events) == Reply("Paris.", [], "end_turn", (4, 9))
    llm_rx_server.queue(reply(tool_calls=[("get_weather", {"city": "Paris"})],
                              stop="tool_use"))
    body = client.interactions.create(model="any", input="hi")
    assert body_reply(body).tool_calls[0][1:] == ("get_weather", {"city": "Paris"})
    assert body.status == "requires_action"
    assert [entry.path for entry in llm_rx_server.requests][-2:] == [
        "/v1/interactions", "/v1/interactions"]


def test_interactions_recorded_through_the_proxy(llm_rx_server: EmulatorThread,
                                                 tmp_path: Path) -> None:
    cap = capture("gemini-interactions/basic-thought-signature.sse")
    with RecorderThread(llm_rx_server.url, tmp_path / "recorded") as proxy, genai.Client(
            api_key="SECRET-KEY", http_options={"base_url": proxy.url}) as through:
        events = list(through.interactions.create(model=model_of(cap), input="hi",
                                                  stream=True))
        assert proxy.wait(1)
        (saved,) = proxy.saved
    assert saved.parent.name == "gemini-interactions"
    assert saved.read_bytes() == cap.data
    assert b"SECRET-KEY" not in saved.read_bytes()
    assert llm_rx.reassemble(saved) == llm_rx.reassemble(cap.data)
    assert events_reply(events).text == llm_rx.reassemble(cap.data).text


@pytest.mark.parametrize("cap", params(CURRENT))
def test_from_sdk_reads_the_interactions_stream(client: genai.Client, cap: Capture) -> None:
    stream = client.interactions.create(model=model_of(cap), input="hi", stream=True)
    response = llm_rx.from_sdk(stream).pipe(lxo.to_response()).run()
    assert response == llm_rx.reassemble(cap.data)


def test_from_sdk_reads_the_async_interactions_stream(llm_rx_server: EmulatorThread) -> None:
    cap = capture("gemini-interactions/google-search-annotations.sse")

    async def read() -> llm_rx.Response:
        async with genai.Client(api_key="test", http_options={
                "base_url": llm_rx_server.url}).aio as aclient:
            stream = await aclient.interactions.create(model=model_of(cap), input="hi",
                                                       stream=True)
            response: llm_rx.Response = await llm_rx.from_sdk(stream).pipe(lxo.to_response())
        return response

    assert asyncio.run(read()) == llm_rx.reassemble(cap.data)


def test_interactions_routes_refuse_a_foreign_host_and_an_unknown_event(
        client: genai.Client, llm_rx_server: EmulatorThread) -> None:
    cap = capture("gemini-interactions/basic-thought-signature.sse")
    id_ = client.interactions.create(model=model_of(cap), input="hi").id
    url = f"{llm_rx_server.url}/v1/interactions/{id_}"
    assert httpx.get(url, timeout=10).status_code == 200
    assert httpx.get(url, headers={"Host": "evil.example"}, timeout=10).status_code == 403
    assert httpx.post(url + "/cancel", headers={"Origin": "https://evil.example"},
                      timeout=10).status_code == 403
    unknown = httpx.get(url, params={"stream": "true", "last_event_id": "999"}, timeout=10)
    assert unknown.status_code == 400
    assert unknown.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_interactions_stream_cut_then_resumed_is_the_whole_reply(
        client: genai.Client, llm_rx_server: EmulatorThread) -> None:
    """The AI SDK's resume, end to end: a stream cut by the emulator (``drop-after``), then
    ``get(id, stream=True, last_event_id=...)`` from the last whole event; the first
    connection's bytes and the resumed ones reassemble to the whole reply."""
    source = capture("anthropic/thinking-signature.sse")  # (translated: numbered events)
    whole = httpx.post(f"{llm_rx_server.url}/v1/interactions", timeout=10,
                       json={"model": model_of(source), "stream": True}).content
    first = b""
    with httpx.stream("POST", f"{llm_rx_server.url}/v1/interactions", timeout=10,
                      headers=llm_rx_server.headers(fault=f"drop-after={len(whole) // 2}"),
                      json={"model": model_of(source), "stream": True}) as cut:
        try:
            for chunk in cut.iter_raw():
                first += chunk
        except httpx.HTTPError:
            pass  # (the connection was cut: what arrived is kept)
    kept = first[: first.rindex(b"\n\n") + 2]  # (the whole events)
    assert not llm_rx.reassemble(kept, "gemini-interactions").complete
    last = json.loads(kept.rsplit(b"data: ", 1)[1])
    interaction = json.loads(kept.split(b"data: ", 2)[1].split(b"\n", 1)[0])["interaction"]
    resumed = list(client.interactions.get(interaction["id"], stream=True,
                                           last_event_id=last["event_id"]))
    assert resumed[0].event_id == str(int(last["event_id"]) + 1)
    joined = kept + b"".join(_sse(event) for event in resumed)
    assert llm_rx.reassemble(joined, "gemini-interactions") == llm_rx.reassemble(
        whole, "gemini-interactions")
