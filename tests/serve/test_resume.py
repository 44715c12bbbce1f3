"""Resume after a dropped connection, over real sockets against llm-rx serve: a Responses
background reply (``starting_after``) and any SSE stream (``Last-Event-ID``) dropped at every
event boundary and inside frames read to the same events and `Response` as the unbroken one."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx import speed
from llm_rx.errors import IncompleteStreamError
from llm_rx.serve import EmulatorThread
from llm_rx.serve._frames import split_frames
from tests.captures import HERE

pytestmark = pytest.mark.slow


@pytest.fixture
def sdk(llm_rx_server: EmulatorThread) -> Iterator[openai.OpenAI]:
    """The official openai client on the emulator (closed after the test)."""
    client = openai.OpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="sk-test",
                           max_retries=0)
    yield client
    client.close()

BACKGROUND = "openai__responses-basic-llm"
REASONING = "openai__responses-code-interpreter-reasoning"


def _kinds(events: list[llm_rx.Event]) -> list[tuple[Any, ...]]:
    return [(type(event), *event) for event in events]


def _frames(capture: str) -> list[bytes]:
    provider, name = capture.split("__")
    return split_frames((HERE / provider / f"{name}.sse").read_bytes(), "sse")


def _unbroken(server: EmulatorThread, path: str, body: dict[str, Any]) -> list[llm_rx.Event]:
    with httpx.Client(timeout=10.0) as client:
        reply = client.send(client.build_request("POST", f"{server.url}{path}", json=body),
                            stream=True)
        return list(llm_rx.from_httpx(reply).pipe(ops.to_list()).run())


def _background(server: EmulatorThread, client: httpx.Client, model: str, fault: str,
                cursors: list[llm_rx.Cursor]) -> list[llm_rx.Event]:
    body = {"model": model, "input": "hi", "stream": True, "background": True}

    def reconnect(cursor: llm_rx.Cursor) -> httpx.Response:
        cursors.append(cursor)
        if cursor.reply_id is None:  # (nothing arrived: ask again)
            request = client.build_request("POST", f"{server.url}/v1/responses", json=body)
        else:
            query = {"stream": "true"}
            if cursor.sequence_number is not None:
                query["starting_after"] = str(cursor.sequence_number)
            request = client.build_request(
                "GET", f"{server.url}/v1/responses/{cursor.reply_id}", params=query)
        return client.send(request, stream=True)

    first = client.send(client.build_request(
        "POST", f"{server.url}/v1/responses", json=body,
        headers={"x-llm-rx-fault": fault}), stream=True)
    events = llm_rx.from_httpx(first, reconnect=reconnect, reconnect_delay=0.0)
    return list(events.pipe(ops.to_list()).run())


@pytest.mark.parametrize("model", [BACKGROUND, REASONING])
def test_resume_responses_background_dropped_at_every_event_boundary(
    llm_rx_server: EmulatorThread, model: str
) -> None:
    whole = _unbroken(llm_rx_server, "/v1/responses", {"model": model, "stream": True})
    frames = _frames(model)
    with httpx.Client(timeout=10.0) as client:
        for count in range(len(frames) + 1):
            cursors: list[llm_rx.Cursor] = []
            events = _background(llm_rx_server, client, model,
                                 f"drop-after-events={count}", cursors)
            assert _kinds(events) == _kinds(whole), count
            # (one drop, one continuation; after the end, a drop loses nothing)
            assert len(cursors) == (count < len(frames))
            if 0 < count < len(frames):
                assert cursors[0].sequence_number == count - 1


@pytest.mark.parametrize("shortcuts", [True, False])
def test_resume_responses_background_dropped_inside_frames(
    llm_rx_server: EmulatorThread, shortcuts: bool
) -> None:
    # (the speed decoders and the plain ones: the same decoder goes on after the drop)
    whole = _unbroken(llm_rx_server, "/v1/responses", {"model": REASONING, "stream": True})
    frames = _frames(REASONING)
    ends = [sum(map(len, frames[:n])) for n in range(len(frames))]
    cuts = [end + size // 2 for end, size in zip(ends, map(len, frames), strict=True)]
    cuts += [end + 1 for end in ends]  # (one byte into each frame)
    with speed.fast_paths(shortcuts), httpx.Client(timeout=10.0) as client:
        for cut in cuts:
            cursors: list[llm_rx.Cursor] = []
            events = _background(llm_rx_server, client, REASONING, f"drop-after={cut}", cursors)
            assert _kinds(events) == _kinds(whole), cut


def test_resume_responses_background_the_continuation_dropped_too(
    llm_rx_server: EmulatorThread,
) -> None:
    whole = _unbroken(llm_rx_server, "/v1/responses", {"model": BACKGROUND, "stream": True})
    with llm_rx_server.fault("drop-after-events=2"), httpx.Client(timeout=10.0) as client:
        cursors: list[llm_rx.Cursor] = []  # (every request's fault: the resumes drop too)
        events = _background(llm_rx_server, client, BACKGROUND, "drop-after-events=2", cursors)
    assert _kinds(events) == _kinds(whole)
    assert [c.sequence_number for c in cursors] == [1, 3, 5, 7]


@pytest.mark.parametrize(("path", "model"), [
    ("/v1/chat/completions", "openai__chat-text-basic"),
    ("/v1/messages", "anthropic__text-basic"),
    ("/v1/responses", BACKGROUND),
])
def test_resume_last_event_id_on_sse_endpoints_dropped_at_every_boundary(
    llm_rx_server: EmulatorThread, path: str, model: str
) -> None:
    body = {"model": model, "stream": True, "max_tokens": 10}
    whole = _unbroken(llm_rx_server, path, body)
    url = f"{llm_rx_server.url}{path}"
    with httpx.Client(timeout=10.0) as client:

        def reconnect(cursor: llm_rx.Cursor) -> httpx.Response:
            headers = {"x-llm-rx-fault": "ids"}
            if cursor.last_event_id is not None:
                headers["last-event-id"] = cursor.last_event_id
            return client.send(client.build_request("POST", url, json=body, headers=headers),
                               stream=True)

        for count in range(len(_frames(model)) + 1):
            fault = {"x-llm-rx-fault": f"ids,drop-after-events={count}"}
            first = client.send(client.build_request("POST", url, json=body, headers=fault),
                                stream=True)
            events = llm_rx.from_httpx(first, reconnect=reconnect, reconnect_delay=0.0)
            assert _kinds(list(events.pipe(ops.to_list()).run())) == _kinds(whole), count


def test_resume_async_httpx_dropped_at_every_boundary(llm_rx_server: EmulatorThread) -> None:
    whole = _unbroken(llm_rx_server, "/v1/responses", {"model": BACKGROUND, "stream": True})
    body = {"model": BACKGROUND, "input": "hi", "stream": True, "background": True}

    async def main() -> list[list[llm_rx.Event]]:
        out = []
        async with httpx.AsyncClient(timeout=10.0) as client:

            async def reconnect(cursor: llm_rx.Cursor) -> httpx.Response:
                if cursor.reply_id is None:
                    request = client.build_request(
                        "POST", f"{llm_rx_server.url}/v1/responses", json=body)
                else:
                    request = client.build_request(
                        "GET", f"{llm_rx_server.url}/v1/responses/{cursor.reply_id}",
                        params={"stream": "true",
                                "starting_after": str(cursor.sequence_number)})
                return await client.send(request, stream=True)

            for count in range(len(_frames(BACKGROUND)) + 1):
                first = await client.send(client.build_request(
                    "POST", f"{llm_rx_server.url}/v1/responses", json=body,
                    headers={"x-llm-rx-fault": f"drop-after-events={count}"}), stream=True)
                events = llm_rx.from_httpx(first, reconnect=reconnect, reconnect_delay=0.0)
                out.append(list(await events.pipe(ops.to_list())))
        return out

    for count, events in enumerate(asyncio.run(main())):
        assert _kinds(events) == _kinds(whole), count


def test_resume_gives_up_after_reconnects_without_progress(
    llm_rx_server: EmulatorThread,
) -> None:
    calls: list[llm_rx.Cursor] = []
    with llm_rx_server.fault("drop-after-events=0"), httpx.Client(timeout=10.0) as client:
        url = f"{llm_rx_server.url}/v1/chat/completions"
        body = {"model": "openai__chat-text-basic", "stream": True}

        def reconnect(cursor: llm_rx.Cursor) -> httpx.Response:
            calls.append(cursor)
            return client.send(client.build_request("POST", url, json=body), stream=True)

        first = client.send(client.build_request("POST", url, json=body), stream=True)
        with pytest.raises(IncompleteStreamError) as raised:
            llm_rx.from_httpx(first, reconnect=reconnect, reconnects=2,
                              reconnect_delay=0.0).run()
    assert len(calls) == 2
    assert "gave up resuming after 2" in "".join(raised.value.__notes__)


def test_resume_openai_sdk_background_resume_agrees(
    llm_rx_server: EmulatorThread, sdk: openai.OpenAI
) -> None:
    client = sdk
    seen: list[Any] = []
    stream = client.responses.create(
        model=BACKGROUND, input="hi", stream=True, background=True,
        extra_headers={"x-llm-rx-fault": "drop-after-events=4"})
    with pytest.raises(openai.APIConnectionError):  # (the cut body, as the SDK says it)
        seen.extend(stream)
    assert len(seen) == 4
    rest = client.responses.retrieve(seen[0].response.id, stream=True,
                                     starting_after=seen[-1].sequence_number)
    seen += list(rest)
    numbers = [event.sequence_number for event in seen]
    assert numbers == list(range(len(_frames(BACKGROUND))))
    assert seen[-1].type == "response.completed"
    whole = llm_rx.reassemble(b"".join(_frames(BACKGROUND)), "openai-responses")
    assert seen[-1].response.output_text == "".join(b.text for b in whole.content
                                                    if b.type == "text")
    retrieved = client.responses.retrieve(seen[0].response.id)
    assert retrieved.status == "completed"
    assert retrieved.output_text == seen[-1].response.output_text


def test_resume_openai_sdk_background_without_a_stream_then_retrieved_and_resumed(
    llm_rx_server: EmulatorThread, sdk: openai.OpenAI
) -> None:
    client = sdk
    created = client.responses.create(model=BACKGROUND, input="hi", background=True)
    assert client.responses.retrieve(created.id).output_text == created.output_text
    events = list(client.responses.retrieve(created.id, stream=True, starting_after=5))
    assert [event.sequence_number for event in events] == list(
        range(6, len(_frames(BACKGROUND))))
    assert client.responses.cancel(created.id).status == "cancelled"
    assert [entry.path for entry in llm_rx_server.requests if entry.method == "POST"] == [
        "/v1/responses", f"/v1/responses/{created.id}/cancel"]


def test_resume_to_response_after_the_source_equals_the_unbroken_reply(
    llm_rx_server: EmulatorThread,
) -> None:
    # (to_response() right after the source folds the decoder's strings directly)
    body = {"model": REASONING, "input": "hi", "stream": True, "background": True}
    with httpx.Client(timeout=10.0) as client:
        whole = llm_rx.from_httpx(client.send(client.build_request(
            "POST", f"{llm_rx_server.url}/v1/responses", json=body), stream=True)).pipe(
            lxo.to_response()).run()

        def reconnect(cursor: llm_rx.Cursor) -> httpx.Response:
            return client.send(client.build_request(
                "GET", f"{llm_rx_server.url}/v1/responses/{cursor.reply_id}",
                params={"stream": "true", "starting_after": str(cursor.sequence_number)}),
                stream=True)

        for count in (2, 40, 200, 364):
            first = client.send(client.build_request(
                "POST", f"{llm_rx_server.url}/v1/responses", json=body,
                headers={"x-llm-rx-fault": f"drop-after-events={count}"}), stream=True)
            response = llm_rx.from_httpx(first, reconnect=reconnect, reconnect_delay=0.0).pipe(
                lxo.to_response()).run()
            assert response == whole, count
    assert whole.complete


@pytest.mark.parametrize("count", [1, 4, 8])
def test_resume_from_sdk_openai_background_stream(
    llm_rx_server: EmulatorThread, sdk: openai.OpenAI, count: int
) -> None:
    whole = _unbroken(llm_rx_server, "/v1/responses", {"model": BACKGROUND, "stream": True})
    client = sdk
    stream = client.responses.create(
        model=BACKGROUND, input="hi", stream=True, background=True,
        extra_headers={"x-llm-rx-fault": f"drop-after-events={count}"})
    events = llm_rx.from_sdk(stream, reconnect=lambda cursor: client.responses.retrieve(
        cursor.reply_id, stream=True, starting_after=cursor.sequence_number))
    assert _kinds(list(events.pipe(ops.to_list()).run())) == _kinds(whole)


def test_resume_from_sdk_openai_async_background_stream(llm_rx_server: EmulatorThread) -> None:
    whole = _unbroken(llm_rx_server, "/v1/responses", {"model": BACKGROUND, "stream": True})

    async def main() -> list[llm_rx.Event]:
        client = openai.AsyncOpenAI(base_url=f"{llm_rx_server.url}/v1", api_key="sk-test",
                                    max_retries=0)  # (closed below)
        stream = await client.responses.create(
            model=BACKGROUND, input="hi", stream=True, background=True,
            extra_headers={"x-llm-rx-fault": "drop-after-events=3"})
        events = llm_rx.from_sdk(stream, reconnect=lambda cursor: client.responses.retrieve(
            cursor.reply_id, stream=True, starting_after=cursor.sequence_number))
        try:
            return list(await events.pipe(ops.to_list()))
        finally:
            await client.close()

    assert _kinds(asyncio.run(main())) == _kinds(whole)


def test_resume_after_a_connection_that_went_idle(llm_rx_server: EmulatorThread) -> None:
    whole = _unbroken(llm_rx_server, "/v1/responses", {"model": BACKGROUND, "stream": True})
    stalled = sum(map(len, _frames(BACKGROUND)[:3]))
    body = {"model": BACKGROUND, "input": "hi", "stream": True, "background": True}
    with httpx.Client(timeout=10.0) as client:

        def reconnect(cursor: llm_rx.Cursor) -> httpx.Response:
            return client.send(client.build_request(
                "GET", f"{llm_rx_server.url}/v1/responses/{cursor.reply_id}",
                params={"stream": "true", "starting_after": str(cursor.sequence_number)}),
                stream=True)

        first = client.send(client.build_request(
            "POST", f"{llm_rx_server.url}/v1/responses", json=body,
            headers={"x-llm-rx-fault": f"stall-after={stalled}"}), stream=True)
        events = llm_rx.from_httpx(first, idle_timeout=0.3, reconnect=reconnect,
                                   reconnect_delay=0.0)
        assert _kinds(list(events.pipe(ops.to_list()).run())) == _kinds(whole)


@pytest.mark.parametrize("reconnects", [1, 3])
def test_resume_a_continuation_refused_for_now_is_a_try(
    llm_rx_server: EmulatorThread, reconnects: int
) -> None:
    whole = _unbroken(llm_rx_server, "/v1/responses", {"model": BACKGROUND, "stream": True})
    body = {"model": BACKGROUND, "input": "hi", "stream": True, "background": True}

    async def main() -> list[llm_rx.Event]:
        calls = 0
        async with httpx.AsyncClient(timeout=10.0) as client:

            async def reconnect(cursor: llm_rx.Cursor) -> httpx.Response:
                nonlocal calls
                calls += 1
                busy = {"x-llm-rx-fault": "status=503,retry-after=0"} if calls == 1 else {}
                return await client.send(client.build_request(
                    "GET", f"{llm_rx_server.url}/v1/responses/{cursor.reply_id}",
                    params={"stream": "true", "starting_after": str(cursor.sequence_number)},
                    headers=busy), stream=True)

            first = await client.send(client.build_request(
                "POST", f"{llm_rx_server.url}/v1/responses", json=body,
                headers={"x-llm-rx-fault": "drop-after-events=3"}), stream=True)
            events = llm_rx.from_httpx(first, reconnect=reconnect, reconnects=reconnects,
                                       reconnect_delay=0.0)
            return list(await events.pipe(ops.to_list()))

    if reconnects == 1:  # (the one try was refused: the provider's 503 stands)
        with pytest.raises(llm_rx.ProviderError) as raised:
            asyncio.run(main())
        assert raised.value.status == 503
        assert "gave up resuming" in "".join(raised.value.__notes__)
    else:
        assert _kinds(asyncio.run(main())) == _kinds(whole)


def test_resume_sync_a_continuation_refused_for_now_is_a_try(
    llm_rx_server: EmulatorThread,
) -> None:
    whole = _unbroken(llm_rx_server, "/v1/chat/completions",
                      {"model": "openai__chat-text-basic", "stream": True})
    url = f"{llm_rx_server.url}/v1/chat/completions"
    body = {"model": "openai__chat-text-basic", "stream": True}
    faults = iter(["status=503,retry-after=0", "ids"])
    with httpx.Client(timeout=10.0) as client:

        def reconnect(cursor: llm_rx.Cursor) -> httpx.Response:
            headers = {"x-llm-rx-fault": next(faults), "last-event-id": str(cursor.last_event_id)}
            return client.send(client.build_request("POST", url, json=body, headers=headers),
                               stream=True)

        first = client.send(client.build_request(
            "POST", url, json=body, headers={"x-llm-rx-fault": "ids,drop-after-events=5"}),
            stream=True)
        events = llm_rx.from_httpx(first, reconnect=reconnect, reconnect_delay=0.0)
        assert _kinds(list(events.pipe(ops.to_list()).run())) == _kinds(whole)
