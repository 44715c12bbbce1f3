"""Sources: cold, cancellable, one upstream read when shared; real HTTP on loopback."""

from __future__ import annotations

import asyncio

import httpx2
import openai
from reactivex import operators as ops
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo
from llm_rx.events import Event, MessageStop, TextDelta
from llm_rx.response import Response
from llm_rx.sources import EventSource

from .captures import capture
from .helpers import CountedReads
from .loopback import serving


def test_from_file_is_cold_each_subscription_reads_again() -> None:
    path = capture("openai/chat-text-basic.sse").path
    events = llm_rx.from_file(path)
    counts = [events.pipe(ops.count()).run() for _ in range(2)]
    assert counts[0] == counts[1] > 5
    assert llm_rx.from_bytes(path.read_bytes()).pipe(ops.count()).run() == counts[0]


def test_share_gives_one_upstream_read_for_several_sinks() -> None:
    reads = 0
    data = capture("anthropic/thinking-signature.sse").data

    def chunks() -> object:
        nonlocal reads
        reads += 1
        for start in range(0, len(data), 512):
            yield data[start : start + 512]

    shared = llm_rx.from_bytes(chunks()).pipe(ops.publish())  # type: ignore[arg-type]
    texts: list[str] = []
    responses: list[Response] = []
    shared.pipe(lxo.text_only()).subscribe(texts.append)
    shared.pipe(lxo.to_response()).subscribe(responses.append)
    shared.connect()
    assert reads == 1
    assert "".join(texts) == responses[0].text
    assert responses[0].complete


def test_dispose_stops_reading_and_nothing_arrives_after() -> None:
    data = capture("openai/chat-gpt41-nano-text.sse").data
    pulled = 0

    def chunks() -> object:
        nonlocal pulled
        for start in range(0, len(data), 256):
            pulled += 1
            yield data[start : start + 256]

    seen: list[Event] = []
    completed: list[bool] = []
    events = llm_rx.from_bytes(chunks())  # type: ignore[arg-type]
    stopper: Subject[object] = Subject()
    events.pipe(ops.take_until(stopper)).subscribe(
        lambda e: (seen.append(e), stopper.on_next(True) if len(seen) == 5 else None),
        on_completed=lambda: completed.append(True),
    )
    assert len(seen) == 5
    assert completed == [True]
    assert pulled < len(data) // 256  # the rest of the body was never read


def test_a_step_in_the_source_loop_that_fails_stops_the_reading() -> None:
    reads = CountedReads(capture("openai/chat-gpt41-nano-text.sse").data, 200)

    def steps(events: list[Event]) -> tuple[list[str], Exception | None]:
        names = [type(event).__name__ for event in events]
        if "TextDelta" in names:  # fails on its first text delta: what came before goes on
            return names[: names.index("TextDelta")], ValueError("bad event")
        return names, None

    values: list[str] = []
    ends: list[object] = []
    source = llm_rx.from_bytes(reads)
    assert isinstance(source, EventSource)
    source.subscribe_steps(steps, values.append, ends.append, lambda e: ends.append(("error", e)),
                           lambda: ends.append("completed"))
    assert values == ["MessageStart", "MetadataUpdate", "BlockStart"]
    assert [str(end) for end in ends] == ["bad event"]
    assert reads.pulled < len(reads.reads) // 2


def test_subject_fed_bytes_decode_operator() -> None:
    bus: Subject[bytes] = Subject()
    seen: list[Event] = []
    bus.pipe(lxo.decode("openai-chat")).subscribe(seen.append)
    data = capture("openai/chat-text-basic.sse").data
    for start in range(0, len(data), 100):
        bus.on_next(data[start : start + 100])
    bus.on_completed()
    assert isinstance(seen[-1], MessageStop)
    text = "".join(e.text for e in seen if isinstance(e, TextDelta))
    assert text == llm_rx.reassemble(data).text


def test_async_source_over_real_http_on_loopback() -> None:
    data = capture("anthropic/thinking-signature.sse").data

    async def main(url: str) -> Response:
        async with httpx2.AsyncClient() as client, client.stream("POST", url) as reply:
            response: Response = await llm_rx.from_async_bytes(reply.aiter_bytes()).pipe(
                lxo.to_response()
            )
            return response

    with serving(data) as url:
        response = asyncio.run(main(url + "/v1/messages"))
    assert response.complete
    assert response.model_dump() == llm_rx.reassemble(data).model_dump()


def test_async_source_dispose_cancels_the_reader() -> None:
    closed: list[bool] = []

    async def endless() -> object:
        try:
            yield capture("openai/chat-text-basic.sse").data[:300]
            await asyncio.Event().wait()  # never ends by itself
        finally:
            closed.append(True)

    async def main() -> list[Event]:
        seen: list[Event] = []
        subscription = llm_rx.from_async_bytes(endless()).subscribe(seen.append)  # type: ignore[arg-type]
        for _ in range(5):
            await asyncio.sleep(0)
        subscription.dispose()
        for _ in range(5):
            await asyncio.sleep(0)
        return seen

    seen = asyncio.run(main())
    assert seen  # the first frame arrived, then the reader was cancelled without error
    assert closed == [True]  # the cancellation reached the byte source


def test_openai_sdk_as_client_bytes_into_llm_rx() -> None:
    data = capture("openai/chat-tool-call-strict.sse").data
    with serving(data) as url:
        client = openai.OpenAI(api_key="test", base_url=url + "/v1", max_retries=0)
        with client.chat.completions.with_streaming_response.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True
        ) as raw:
            response = llm_rx.from_bytes(raw.iter_bytes()).pipe(lxo.to_response()).run()
        client.close()
    assert response.complete
    assert response.stop_reason == "tool_use"
    assert response.tool_calls[0].arguments == llm_rx.reassemble(data).tool_calls[0].arguments
